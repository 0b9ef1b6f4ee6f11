// The Delegator on its own: a real catalog, results, approvals and session store; the supervisor's side (records,
// launching, events) played by the test, so each check and each launch can be seen.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { DelegationError, ending, InMemoryMemory, type DelegationPolicy } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { whenAborted } from '../../src/abort.js';
import type { Caller } from '../../src/actors/agentEnvironment.js';
import { AgentCatalog } from '../../src/catalog/AgentCatalog.js';
import { emptyFigures } from '../../src/events/metrics.js';
import type { AgentRecord } from '../../src/machines/agentTable.js';
import type { SupervisorEvent } from '../../src/machines/supervisorMachine.js';
import { SessionStore, type SessionRecord } from '../../src/memory/SessionStore.js';
import { AgentResults, type AgentResult } from '../../src/runtime/AgentResults.js';
import { Approvals } from '../../src/runtime/Approvals.js';
import { afterInterruption, Delegator, type Launch } from '../../src/runtime/Delegator.js';
import { leader, tick, worker } from '../stubs.js';

/**
 * A delegator over a catalog of `lead` (may delegate to `helper` only), `helper` and `secret`, with `maxDepth` 2.
 * `launch` records each launch and makes a record for it; the test ends sub-agents with `end`.
 */
function setup(policy?: DelegationPolicy) {
  const clock = new SimulatedClock();
  const catalog = new AgentCatalog([leader('lead', { subagents: ['helper'] }), worker('helper'), worker('secret')], {
    model: new ScriptedModel([]), // the delegator never asks a model
    tools: [],
    maxToolConcurrency: 4,
  });
  const results = new AgentResults();
  const records = new Map<string, AgentRecord>();
  const launches: Launch[] = [];
  const sent: SupervisorEvent[] = [];
  const forgotten: string[] = [];
  const delegator = new Delegator({
    catalog,
    results,
    approvals: new Approvals(),
    sessions: new SessionStore(new InMemoryMemory()),
    clock,
    maxDepth: 2,
    policy,
    record: (id) => records.get(id),
    launch: (launch) => {
      const id = `agent:${launch.agent}:${launches.length + 1}`;
      launches.push(launch);
      records.set(id, { id, name: launch.agent, parentId: launch.parentId, depth: 1, state: 'pending', run: 1 });
      void results.begin(id);
      // The supervisor fails a denied agent at once.
      if (launch.deny !== undefined) end(id, { status: 'failed', reason: 'denied', error: ending('denied', launch.deny, 'user') });
      return id;
    },
    forget: (name) => void forgotten.push(name),
    send: (event) => void sent.push(event),
  });
  /** Ends a launched agent, as the supervisor and the launcher would. */
  function end(id: string, how: Pick<AgentResult, 'status' | 'output' | 'reason' | 'error'>) {
    const record = records.get(id)!;
    record.state = how.status;
    results.settle({ id, agent: record.name, turns: 1, toolCallsExecuted: 0, metrics: { own: emptyFigures(), subtree: emptyFigures() }, ...how });
  }
  return { clock, catalog, delegator, records, launches, sent, forgotten, end };
}

/** The lead calling a delegation tool (at depth 0 unless told otherwise). */
function caller(extra: Partial<Caller> = {}): Caller {
  return {
    agentId: 'agent:lead:1',
    agentName: 'lead',
    depth: 0,
    toolCallId: 'call_1',
    messages: [{ role: 'user', content: 'Lead.' }],
    signal: new AbortController().signal,
    ...extra,
  };
}

/** What a promise rejects with. */
const rejection = (promise: Promise<unknown>) => promise.then(() => undefined, (error: unknown) => error);

describe('refusals before anything is launched', () => {
  it('refuses an unknown agent, naming the agents the caller may delegate to', async () => {
    const { delegator, launches } = setup();
    const error = await rejection(delegator.delegate(caller(), { agent: 'ghost', task: 'Haunt.' }));
    expect(error).toBeInstanceOf(DelegationError);
    expect(error).toMatchObject({ reason: 'unknown_agent', message: expect.stringContaining('Agents you may delegate to: helper.') });
    expect(launches).toEqual([]);
  });

  it('refuses an agent the caller may not delegate to', async () => {
    const { delegator, launches } = setup();
    const error = await rejection(delegator.delegate(caller(), { agent: 'secret', task: 'Leak it.' }));
    expect(error).toMatchObject({ reason: 'not_allowed', message: expect.stringMatching(/"lead" may not delegate to "secret"/) });
    expect(launches).toEqual([]);
  });

  it('refuses a caller at maxDepth, offers it no agents, and never asks the policy', async () => {
    const asked: unknown[] = [];
    const { delegator, launches } = setup((request) => (asked.push(request), 'allow'));
    const deep = caller({ depth: 2 });

    expect(delegator.forCaller(deep).agents()).toEqual([]);
    expect(delegator.forCaller(caller({ depth: 1 })).agents().map((agent) => agent.name)).toEqual(['helper']);
    const error = await rejection(delegator.delegate(deep, { agent: 'helper', task: 'Go deeper.' }));
    expect(error).toMatchObject({ reason: 'depth_limit', message: expect.stringContaining('maxDepth 2') });
    await expect(delegator.spawnAgent(deep, { name: 'tmp', task: 'x', systemPrompt: 'y' })).rejects.toMatchObject({ reason: 'depth_limit' });
    expect(asked).toEqual([]);
    expect(launches).toEqual([]);
  });

  it('refuses to resume an unknown session or one that still runs', async () => {
    const { delegator, launches, end } = setup();
    const started = (await delegator.delegate(caller(), { agent: 'helper', task: 'Take long.', background: true })).agentId;

    await expect(delegator.delegate(caller(), { agent: 'helper', task: 'Go on.', resume: 'agent:helper:nope' })).rejects.toMatchObject({
      reason: 'unknown_session',
    });
    await expect(delegator.delegate(caller(), { agent: 'helper', task: 'Go on.', resume: started })).rejects.toMatchObject({
      reason: 'still_running',
    });
    expect(launches).toHaveLength(1);
    end(started, { status: 'completed', output: 'Done.' });
  });
});

describe('the delegation policy', () => {
  it('is asked who delegates what at which depth; allow launches the sub-agent under the caller, which waits for it', async () => {
    const asked: unknown[] = [];
    const { delegator, launches, end, clock } = setup((request) => (asked.push(request), 'allow'));

    const pending = delegator.delegate(caller(), { agent: 'helper', task: 'Count.', description: 'count' });
    await tick(); // the delegator asks the policy and launches
    clock.increment(1_500);
    end('agent:helper:1', { status: 'completed', output: '3' });
    const result = await pending;

    expect(asked).toEqual([{ caller: { id: 'agent:lead:1', name: 'lead', depth: 0 }, agent: 'helper', task: 'Count.', depth: 1, background: false }]);
    expect(launches).toEqual([
      { agent: 'helper', task: 'Count.', parentId: 'agent:lead:1', toolCallId: 'call_1', description: 'count', background: false, waiter: 'agent:lead:1', batched: true },
    ]);
    expect(result).toMatchObject({ status: 'completed', agentId: 'agent:helper:1', output: '3', executionTimeMs: 1_500 });
  });

  it('deny launches a sub-agent that fails with denied (so it is seen), and the caller gets that failure', async () => {
    const { delegator, launches } = setup(() => ({ decision: 'deny', reason: 'Not on Fridays.' }));
    const result = await delegator.delegate(caller(), { agent: 'helper', task: 'Deploy.' });
    expect(launches).toEqual([expect.objectContaining({ agent: 'helper', deny: 'Not on Fridays.' })]);
    expect(result).toMatchObject({ status: 'failed', reason: 'denied', error: { code: 'denied', message: 'Not on Fridays.' } });
  });

  it('a policy that throws, or answers what it may not, denies', async () => {
    const throwing = setup(() => {
      throw new Error('policy file missing');
    });
    await throwing.delegator.delegate(caller(), { agent: 'helper', task: 'x' });
    expect(throwing.launches[0]?.deny).toMatch(/policy failed.*policy file missing/);

    const odd = setup(() => ({ decision: 'ask', risk: 'extreme' }) as never);
    await odd.delegator.delegate(caller(), { agent: 'helper', task: 'x' });
    expect(odd.launches[0]?.deny).toMatch(/may not give/);
  });

  it('ask launches the sub-agent held for approval, with the risk and the reason', async () => {
    const { delegator, launches, end } = setup(() => ({ decision: 'ask', risk: 'high', reason: 'Touches production.' }));
    const pending = delegator.delegate(caller(), { agent: 'helper', task: 'Deploy.' });
    await tick(); // the delegator asks the policy and launches
    expect(launches).toEqual([expect.objectContaining({ approval: { risk: 'high', reason: 'Touches production.' }, waiter: 'agent:lead:1' })]);
    end('agent:helper:1', { status: 'completed', output: 'Deployed.' });
    expect(await pending).toMatchObject({ status: 'completed', output: 'Deployed.' });
  });
});

describe('waiting', () => {
  it('in the background returns the id at once, and the caller does not wait', async () => {
    const { delegator, launches, records } = setup();
    const running = await delegator.delegate(caller(), { agent: 'helper', task: 'Later.', background: true });
    expect(running).toEqual({ status: 'pending', agentId: 'agent:helper:1', agentName: 'helper' });
    expect(launches[0]).toMatchObject({ background: true });
    expect(launches[0]).not.toHaveProperty('waiter');
    records.get('agent:helper:1')!.state = 'running';
    expect(await delegator.taskOutput('agent:helper:1', {}, caller())).toMatchObject({ status: 'running' });
  });

  it('a caller that stops while it waits stops waiting, and gives its wait back to the supervisor', async () => {
    const { delegator, sent } = setup();
    const stop = new AbortController();
    const pending = delegator.delegate(caller({ signal: stop.signal }), { agent: 'helper', task: 'Slow.' });
    await tick(); // the delegator asks the policy and launches

    stop.abort();

    await expect(pending).rejects.toMatchObject({ code: 'aborted' });
    expect(sent).toEqual([{ type: 'UNWAIT', id: 'agent:lead:1', on: 'agent:helper:1' }]);
  });

  it('a tool call that stops only with its agent waits for the sub-agent, whose end comes as the subtree is cancelled', async () => {
    const { delegator, sent, end } = setup();
    const stop = new AbortController();
    // A batch's call without a time limit: its stop comes only as its agent ends (the batch then ends at once).
    const withAgent = { get aborted() { return stop.signal.aborted; }, promise: whenAborted(stop.signal), withAgent: true };
    const pending = delegator.delegate(caller({ signal: stop.signal, stop: withAgent }), { agent: 'helper', task: 'Slow.' });
    await tick();

    stop.abort();
    await tick();
    // No wait is given back: the supervisor ends the waits of an agent that has ended.
    expect(sent).toEqual([]);
    end('agent:helper:1', { status: 'failed', reason: 'cancelled', error: ending('cancelled', 'The parent stopped.', 'user') });

    await expect(pending).resolves.toMatchObject({ status: 'failed', reason: 'cancelled', agentId: 'agent:helper:1' });
  });

  it("refuses task_output for an agent that is not one of the caller's sub-agents", async () => {
    const { delegator, records } = setup();
    records.set('agent:helper:9', { id: 'agent:helper:9', name: 'helper', parentId: 'agent:other:1', depth: 1, state: 'running', run: 1 });
    await expect(delegator.taskOutput('agent:helper:9', {}, caller())).rejects.toMatchObject({ reason: 'not_allowed' });
    await expect(delegator.taskOutput('agent:helper:404', {}, caller())).rejects.toMatchObject({ reason: 'unknown_session' });
  });
});

describe('spawn_agent', () => {
  it('refuses a name in use and tools the creator lacks, and keeps no agent whose hand-over was refused', async () => {
    const { delegator, catalog, forgotten } = setup();
    await expect(delegator.spawnAgent(caller(), { name: 'helper', task: 'x', systemPrompt: 'y' })).rejects.toMatchObject({ reason: 'name_taken' });
    await expect(delegator.spawnAgent(caller(), { name: 'tmp', task: 'x', systemPrompt: 'y', tools: ['echo'] })).rejects.toMatchObject({
      reason: 'invalid_tools',
    });
    expect(catalog.get('tmp')).toBeUndefined();
    // A bad definition (here its name) is named as such, not as a matter of tools.
    await expect(delegator.spawnAgent(caller(), { name: 'Not A Name', task: 'x', systemPrompt: 'y' })).rejects.toMatchObject({
      reason: 'invalid_agent',
      message: expect.stringMatching(/^The agent could not be made: Agent "Not A Name": the name must match/),
    });

    const stopped = new AbortController();
    stopped.abort();
    await expect(delegator.spawnAgent(caller({ signal: stopped.signal }), { name: 'tmp', task: 'x', systemPrompt: 'y' })).rejects.toMatchObject({
      code: 'aborted',
    });
    expect(forgotten).toEqual(['tmp']);
  });
});

describe('afterInterruption', () => {
  const session = (id: string, state: SessionRecord['state'], result: string | null = null): SessionRecord => ({
    schemaVersion: 4,
    id,
    agentType: 'counter',
    parentConversationId: 'agent:lead:1',
    state,
    taskDescription: 'Count the files.',
    startTime: 0,
    endTime: null,
    result,
    error: null,
    reason: null,
    metrics: null,
  });
  const assign = (id: string) => ({ id, name: 'assign_task', arguments: JSON.stringify({ description: 'Count', agent: 'counter', task: 'Count the files.' }) });

  it("tells an interrupted delegation of the session it started, not of an earlier call's of the same agent and task", () => {
    const history = [
      { role: 'user' as const, content: 'Count the files, twice.' },
      { role: 'assistant' as const, content: '', toolCalls: [assign('c1')] },
      { role: 'tool' as const, toolCallId: 'c1', content: 'Agent counter (agent:counter:old) answered: There are 3 files.' },
      { role: 'assistant' as const, content: 'Once more, to be sure.', toolCalls: [assign('c1')] },
    ];
    const started = [session('agent:counter:old', 'completed', 'There are 3 files.'), session('agent:counter:new', 'interrupted')];

    const answer = afterInterruption(history, () => false, started)[4]!;
    expect(answer).toMatchObject({ role: 'tool', toolCallId: 'c1', isError: true });
    expect(answer.content).toContain('It had started agent:counter:new, which did not finish (interrupted): to go on with its work, delegate with resume: "agent:counter:new".');
    expect(answer.content).not.toContain('agent:counter:old');
  });

  it('gives each of two interrupted calls of the same agent and task the session it started, in order', () => {
    const history = [
      { role: 'user' as const, content: 'Count the files, twice over.' },
      { role: 'assistant' as const, content: '', toolCalls: [assign('c1'), assign('c2')] },
    ];
    const started = [session('agent:counter:first', 'completed', 'There are 3 files.'), session('agent:counter:second', 'interrupted')];

    const [first, second] = afterInterruption(history, () => false, started).slice(2, 4);
    expect(first).toMatchObject({ toolCallId: 'c1', content: expect.stringContaining('It had started agent:counter:first, which completed with this answer: There are 3 files.') });
    expect(first!.content).not.toContain('agent:counter:second');
    expect(second).toMatchObject({ toolCallId: 'c2', content: expect.stringContaining('It had started agent:counter:second, which did not finish') });
    expect(second!.content).not.toContain('agent:counter:first');
  });
});
