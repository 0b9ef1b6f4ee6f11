// Patterns: sequence, parallel, fanIn, pipeline and race compose agents without a lead model. Each runs in a group (a
// node of the agent tree with no model and no slot), returns an AgentResult, and handles failed steps by its option.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createRuntime,
  emptyFigures,
  fanIn,
  parallel,
  pipeline,
  race,
  sequence,
  step,
  UnknownAgentError,
  type Figures,
  type Pattern,
  type Runtime,
  type ScriptStep,
  type TroupeEvent,
} from 'troupe';
import { advanceUntilSettled } from 'troupe/testing';
import { collect, ofType, scriptedPerAgent, simulatedClock, tick, worker } from '../stubs.js';

/**
 * A runtime whose agents (one per script) answer from their own scripts, each reply taking `latency` ms of its clock.
 * Every step must be used by the end of the test: an agent that must never answer (it never runs, or it is cancelled
 * while its reply is on the way) gets an empty script.
 */
function setup(scripts: Record<string, ScriptStep[]>, latency: Record<string, number> = {}, maxParallel = 5) {
  const clock = simulatedClock();
  const model = scriptedPerAgent(scripts, { latencyMs: (request) => latency[request.agentName] ?? 10 });
  const runtime = createRuntime({ model, agents: Object.keys(scripts).map((name) => worker(name)), clock, maxParallel });
  const events = collect(runtime.events$);
  return { clock, model, runtime, events, settle: <T>(promise: Promise<T>) => advanceUntilSettled(clock, promise) };
}

/** The `agent.spawned` events of groups. */
const groups = (events: readonly TroupeEvent[]) => ofType(events, 'agent.spawned').filter((event) => event.group === true);
/** The ids of the agents (not groups) spawned under `parentId`. */
const childrenOf = (events: readonly TroupeEvent[], parentId: string) =>
  ofType(events, 'agent.spawned').filter((event) => event.parentId === parentId).map((event) => event.agentId);
/** How each agent of that name ended. */
const endsOf = (events: readonly TroupeEvent[], name: string) =>
  events.flatMap((event) => (event.type === 'agent.completed' || event.type === 'agent.failed') && event.name === name ? [event] : []);

/** Waits until an agent of that name has started. */
async function started(events: readonly TroupeEvent[], name: string): Promise<void> {
  for (let i = 0; i < 50 && !ofType(events, 'agent.started').some((event) => event.name === name); i++) await tick();
}

describe('sequence', () => {
  it('runs its steps in order, each task made from the result before it, and returns the last output', async () => {
    const { runtime, model, events, settle } = setup({ researcher: ['Otters hold hands.'], writer: ['A paragraph.'] });
    const result = await settle(
      sequence([step('researcher', 'Find a fact.'), step('writer', (previous) => `Write about: ${previous?.output}`)]).run(runtime),
    );

    expect(result).toMatchObject({ agent: 'sequence', status: 'completed', output: 'A paragraph.', turns: 0 });
    expect(result.id).toMatch(/^group:sequence:[0-9A-Za-z]{10}$/);
    expect(model.calls.map((request) => request.messages.at(-1)?.content)).toEqual(['Find a fact.', 'Write about: Otters hold hands.']);
    expect(childrenOf(events, result.id)).toHaveLength(2);
    await runtime.shutdown();
  });

  it("stops at a failed step with onFailure 'stop' (the default): the group fails naming the step, later steps never run", async () => {
    const { runtime, events, settle } = setup({ a: ['A.'], b: [new Error('model down')], c: [] });
    const result = await settle(sequence([step('a', 'One.'), step('b', 'Two.'), step('c', 'Three.')]).run(runtime));

    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(result.error?.message).toMatch(/^Step 2 \(b\) failed \(error\): .*model down/);
    expect(result.error).toMatchObject({ code: 'model_call_failed', fault: 'model' }); // the failed step's identity is kept
    expect(endsOf(events, 'c')).toEqual([]);
    await runtime.shutdown();
  });

  it("goes on past a failed step with onFailure 'continue', and fails only when no step completed", async () => {
    // Every agent of a name replays its own script: each `b` and `d` fails.
    const { runtime, settle } = setup({ a: ['A.'], b: [new Error('model down')], c: ['C.'], d: [new Error('down too')] });
    const result = await settle(sequence([step('a', '1'), step('b', '2'), step('c', '3')], { onFailure: 'continue' }).run(runtime));
    expect(result).toMatchObject({ status: 'completed', output: 'C.' });

    const none = await settle(sequence([step('b', '1'), step('d', '2')], { onFailure: 'continue' }).run(runtime));
    expect(none).toMatchObject({ status: 'failed', reason: 'error' });
    expect(none.error?.message).toMatch(/^No step completed: step 1 \(b\) error: .*model down.*; step 2 \(d\) error: .*down too/);
    await runtime.shutdown();
  });
});

describe('parallel', () => {
  it('runs its steps at once and labels each output with its step, in step order', async () => {
    const { runtime, events, settle } = setup({ a: ['A.'], b: ['B.'] }, { a: 300, b: 100 });
    const result = await settle(parallel(['a', step('b', (_, input) => `Check ${input}`)]).run(runtime, 'the plan'));

    expect(result).toMatchObject({ agent: 'parallel', status: 'completed', output: '[1] a\nA.\n\n[2] b\nB.' });
    const tasks = ofType(events, 'agent.spawned').filter((event) => !event.group).map((event) => event.task);
    expect(tasks).toEqual(['the plan', 'Check the plan']);
    // Both ran side by side: b ended before a.
    expect(ofType(events, 'agent.completed').map((event) => event.name)).toEqual(['b', 'a', 'parallel']);
    await runtime.shutdown();
  });

  it("fails at the first failed step with onFailure 'stop' and cancels the steps still running", async () => {
    const { runtime, events, settle } = setup({ slow: [], broken: [new Error('no')] }, { slow: 5_000, broken: 10 });
    const result = await settle(parallel([step('slow', 'Slow.'), step('broken', 'Break.')]).run(runtime));

    expect(result.status).toBe('failed');
    expect(result.error?.message).toMatch(/^Step 2 \(broken\) failed/);
    const slowEnd = endsOf(events, 'slow')[0];
    expect(slowEnd).toMatchObject({ type: 'agent.failed', reason: 'cancelled', error: { code: 'cancelled', message: `Cancelled (${result.id} ended).` } });
    // Children end before their group.
    const groupEnd = events.findIndex((event) => event.agentId === result.id && event.type === 'agent.failed');
    expect(events.indexOf(slowEnd!)).toBeLessThan(groupEnd);
    await runtime.shutdown();
  });

  it("with onFailure 'continue' keeps what completed", async () => {
    const { runtime, settle } = setup({ a: ['A.'], broken: [new Error('no')], c: ['C.'] });
    const result = await settle(parallel([step('a', '1'), step('broken', '2'), step('c', '3')], { onFailure: 'continue' }).run(runtime));
    expect(result).toMatchObject({ status: 'completed', output: '[1] a\nA.\n\n[3] c\nC.' });
    await runtime.shutdown();
  });

  it('takes no slot: a group and its steps run under maxParallel 1, one agent at a time', async () => {
    const { runtime, settle } = setup({ a: ['A.'], b: ['B.'] }, {}, 1);
    const result = await settle(parallel([step('a', '1'), step('b', '2')]).run(runtime));
    expect(result.status).toBe('completed');
    expect(runtime.metrics().total).toMatchObject({ peakRunning: 1, agentsSpawned: 2, agentsCompleted: 2 });
    await runtime.shutdown();
  });
});

describe('fanIn', () => {
  it('fans out, then reduces the results with a function', async () => {
    const { runtime, settle } = setup({ a: ['3'], b: ['4'] });
    const sum = fanIn([step('a', 'A number.'), step('b', 'A number.')], {
      reduce: (results) => String(results.reduce((total, result) => total + Number(result.output), 0)),
    });
    expect(await settle(sum.run(runtime))).toMatchObject({ agent: 'fan-in', status: 'completed', output: '7' });
    await runtime.shutdown();
  });

  it('fans out, then hands the labelled outputs to an aggregating agent in the group, whose answer is the output', async () => {
    const { runtime, model, events, settle } = setup({ optimist: ['Go.'], pessimist: ['Stop.'], judge: ['Go slowly.'] });
    const survey = fanIn([step('optimist', 'Judge.'), step('pessimist', 'Judge.')], { agent: 'judge' });
    const result = await settle(survey.run(runtime, 'Move to Mars?'));

    expect(result).toMatchObject({ status: 'completed', output: 'Go slowly.' });
    const judged = model.calls.find((request) => request.agentName === 'judge')!;
    expect(judged.messages.at(-1)?.content).toBe(
      'The task: Move to Mars?\n\nCombine these results into one answer:\n\n[1] optimist\nGo.\n\n[2] pessimist\nStop.',
    );
    expect(childrenOf(events, result.id)).toHaveLength(3);
    await runtime.shutdown();
  });

  it('fails when the aggregator fails, or (with stop) when a step fails', async () => {
    const { runtime, settle } = setup({ a: ['A.'], broken: [new Error('no')], judge: [new Error('judge down')] });
    const aggregated = await settle(fanIn([step('a', '1')], { agent: 'judge', task: () => 'Judge.' }).run(runtime));
    expect(aggregated.error?.message).toMatch(/^The aggregator \(judge\) failed \(error\)/);

    const stopped = await settle(fanIn([step('broken', '2'), step('a', '3')], { reduce: () => 'never' }).run(runtime));
    expect(stopped.error?.message).toMatch(/^Step 1 \(broken\) failed/);
    await runtime.shutdown();
  });
});

describe('pipeline', () => {
  it('passes each output on as the next task; the first step gets the input', async () => {
    const { runtime, model, settle } = setup({
      writer: [(request) => `Draft of ${request.messages.at(-1)?.content}`],
      editor: [(request) => `${request.messages.at(-1)?.content}, edited`],
    });
    const result = await settle(pipeline(['writer', step('editor', (_, text) => `Edit: ${text}`)]).run(runtime, 'otters'));

    expect(result).toMatchObject({ agent: 'pipeline', status: 'completed', output: 'Edit: Draft of otters, edited' });
    expect(model.calls.map((request) => request.messages.at(-1)?.content)).toEqual(['otters', 'Edit: Draft of otters']);
    await runtime.shutdown();
  });

  it("stops at a failed stage, or with 'continue' passes the last good text to the next one", async () => {
    const { runtime, model, settle } = setup({ writer: ['Draft.'], broken: [new Error('no')], editor: ['Edited.'] });
    const stopped = await settle(pipeline(['writer', 'broken', 'editor']).run(runtime, 'otters'));
    expect(stopped.error?.message).toMatch(/^Step 2 \(broken\) failed/);

    const continued = await settle(pipeline(['writer', 'broken', 'editor'], { onFailure: 'continue' }).run(runtime, 'otters'));
    expect(continued).toMatchObject({ status: 'completed', output: 'Edited.' });
    expect(model.calls.find((request) => request.agentName === 'editor')?.messages.at(-1)?.content).toBe('Draft.');
    await runtime.shutdown();
  });
});

describe('race', () => {
  it('completes with the first step to complete and cancels the others', async () => {
    const { runtime, events, settle } = setup(
      { careful: [], quick: ['Canberra.'], broken: [new Error('no')] },
      { careful: 5_000, quick: 100, broken: 10 },
    );
    const result = await settle(race(['careful', 'quick', 'broken']).run(runtime, 'Capital of Australia?'));

    expect(result).toMatchObject({ agent: 'race', status: 'completed', output: 'Canberra.' });
    expect(endsOf(events, 'careful')).toEqual([expect.objectContaining({ type: 'agent.failed', reason: 'cancelled' })]);
    expect(endsOf(events, 'broken')).toEqual([expect.objectContaining({ type: 'agent.failed', reason: 'error' })]);
    await runtime.shutdown();
  });

  it('fails when every step failed', async () => {
    const { runtime, settle } = setup({ a: [new Error('no')], b: [new Error('no')] });
    const result = await settle(race([step('a', '1'), step('b', '2')]).run(runtime));
    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(result.error?.message).toMatch(/^No step completed/);
    await runtime.shutdown();
  });
});

describe('groups in events and metrics', () => {
  it('nests a parallel inside a sequence: each is a group whose children name it as parent', async () => {
    const { runtime, events, settle } = setup({ planner: ['Plan.'], a: ['A.'], b: ['B.'], writer: ['Report.'] });
    const flow = sequence([
      step('planner', 'Plan.'),
      parallel([step('a', 'Do A.'), step('b', 'Do B.')], { name: 'work' }),
      step('writer', (previous) => `Report on:\n${previous?.output}`),
    ]);
    const result = await settle(flow.run(runtime));

    expect(result).toMatchObject({ status: 'completed', output: 'Report.' });
    const [outer, inner] = groups(events);
    expect(outer).toMatchObject({ agentId: result.id, name: 'sequence', parentId: null, group: true, depth: 0 });
    expect(inner).toMatchObject({ name: 'work', parentId: result.id, group: true });
    expect(inner!.agentId).toMatch(/^group:work:/);
    const [planner, writer] = [expect.stringMatching(/^agent:planner:/), expect.stringMatching(/^agent:writer:/)];
    expect(childrenOf(events, result.id)).toEqual([planner, inner!.agentId, writer]);
    expect(childrenOf(events, inner!.agentId)).toEqual([expect.stringMatching(/^agent:a:/), expect.stringMatching(/^agent:b:/)]);
    // A group adds no delegation depth: its agents are as deep as they would be without it.
    expect(ofType(events, 'agent.spawned').filter((event) => !event.group).map((event) => event.depth)).toEqual([0, 0, 0, 0]);
    expect(runtime.record(inner!.agentId)).toMatchObject({ group: true, state: 'completed', parentId: result.id });
    await runtime.shutdown();
  });

  it("sums its children's figures in its subtree and has none of its own; it is not counted as an agent", async () => {
    const { runtime, settle } = setup({ a: ['A.'], b: ['Bee.'], c: ['C.'] }, { a: 100, b: 200, c: 300 });
    const result = await settle(sequence([step('a', 'One.'), parallel([step('b', 'Two.'), step('c', 'Three.')])]).run(runtime));
    const { agents, total } = runtime.metrics();

    const sum = (ids: string[]) =>
      ids.reduce((figures, id) => {
        for (const key of Object.keys(figures) as (keyof Figures)[]) figures[key] += agents[id]!.subtree[key];
        return figures;
      }, zero());
    const children = (id: string) => Object.keys(agents).filter((child) => agents[child]!.parentId === id);
    const inner = children(result.id).find((id) => agents[id]!.group)!;
    expect(agents[inner]!.subtree).toEqual(sum(children(inner)));
    expect(agents[result.id]!.subtree).toEqual(sum(children(result.id)));
    expect(agents[result.id]).toMatchObject({ group: true, state: 'completed', own: zero() });
    expect(result.metrics).toEqual({ own: zero(), subtree: agents[result.id]!.subtree });
    expect(result.metrics.subtree.modelCalls).toBe(3);
    expect(total).toMatchObject({ agentsSpawned: 3, agentsCompleted: 3, agentsFailed: 0, modelCalls: 3 });
    expect(total.durationMs).toBe(result.metrics.subtree.durationMs);
    await runtime.shutdown();
  });
});

describe('cancelling and misuse', () => {
  it("cancelling a pattern's group cancels its children, and a sequence starts no further step", async () => {
    const { runtime, events, settle } = setup({ slow: [], never: [] }, { slow: 5_000 });
    const run = sequence([step('slow', 'Slow.'), step('never', 'Never.')], { onFailure: 'continue' }).run(runtime);
    await started(events, 'slow');
    const group = groups(events)[0]!;

    runtime.cancel(group.agentId);
    const result = await settle(run);

    expect(result).toMatchObject({ id: group.agentId, status: 'failed', reason: 'cancelled' });
    expect(endsOf(events, 'slow')).toEqual([expect.objectContaining({ type: 'agent.failed', reason: 'cancelled' })]);
    expect(ofType(events, 'agent.spawned').some((event) => event.name === 'never')).toBe(false);
    await runtime.shutdown();
  });

  it('cancelling a nested group cancels only that part; the outer pattern handles it as a failed step', async () => {
    const { runtime, events, settle } = setup({ slow: [], after: ['After.'] }, { slow: 5_000 });
    const flow = sequence([parallel([step('slow', 'Slow.')], { name: 'inner' }), step('after', 'After.')], { onFailure: 'continue' });
    const run = flow.run(runtime);
    await started(events, 'slow');

    runtime.cancel(groups(events)[1]!.agentId);
    const result = await settle(run);

    expect(result).toMatchObject({ status: 'completed', output: 'After.' });
    expect(endsOf(events, 'inner')).toEqual([expect.objectContaining({ type: 'agent.failed', reason: 'cancelled' })]);
    await runtime.shutdown();
  });

  it('shutting down cancels a running pattern and its agents', async () => {
    const { runtime, events } = setup({ slow: [] }, { slow: 5_000 });
    const run = parallel([step('slow', 'Slow.')]).run(runtime);
    await started(events, 'slow');
    await runtime.shutdown();
    expect(await run).toMatchObject({ status: 'failed', reason: 'cancelled' });
  });

  it('rejects with the error of a misused step (an unknown agent), after failing its group', async () => {
    const { runtime, events, settle } = setup({ a: ['A.'] });
    await expect(settle(sequence([step('a', '1'), step('ghost', '2')]).run(runtime))).rejects.toBeInstanceOf(UnknownAgentError);
    expect(ofType(events, 'agent.failed').map((event) => event.name)).toEqual(['sequence']);
    await expect(pipeline(['a']).run(runtime)).rejects.toThrow(/bare agent name/);
    await runtime.shutdown();
  });

  it('rejects with a clear error when a pattern of one\'s own, as a step, resolves with no result (side by side too)', async () => {
    const { runtime, events, settle } = setup({ a: ['A.'], idle: [] });
    const broken: Pattern = { name: 'broken', run: async () => undefined as never };
    const noResult = 'The step "broken" is a pattern whose run resolved with no result; a pattern\'s run resolves with an AgentResult.';

    await expect(settle(parallel(['idle', broken]).run(runtime, 'x'))).rejects.toThrow(noResult);
    await expect(settle(sequence(['a', broken]).run(runtime, 'x'))).rejects.toThrow(noResult);

    // Side by side, the other step is cancelled with the group.
    expect(ofType(events, 'agent.failed').map((event) => [event.name, event.error.message])).toEqual([
      ['idle', expect.stringMatching(/^Cancelled \(group:parallel:/)],
      ['parallel', noResult],
      ['sequence', noResult],
    ]);
    await runtime.shutdown();
  });

  it("rejects with an error naming the reducer when a fanIn's reduce throws or returns no string, after failing its group", async () => {
    const { runtime, events, settle } = setup({ a: ['A.'], b: ['B.'] });
    const notText = fanIn(['a'], { reduce: () => undefined as never }).run(runtime, 'x');
    await expect(settle(notText)).rejects.toThrow("A fanIn's reduce must return a string (the group's output), not undefined.");
    await expect(settle(fanIn(['b'], { reduce: () => { throw new Error('boom'); } }).run(runtime, 'x'))).rejects.toThrow('boom');
    expect(ofType(events, 'agent.failed').map((event) => [event.name, event.error.message])).toEqual([
      ['fan-in', "A fanIn's reduce must return a string (the group's output), not undefined."],
      ['fan-in', 'boom'],
    ]);
    await runtime.shutdown();
  });

  it('checks a pattern when it is defined', () => {
    expect(() => sequence([])).toThrow(ConfigurationError);
    expect(() => parallel([{ agent: 'a' } as never])).toThrow(/needs a task/);
    expect(() => pipeline(['a'], { onFailure: 'retry' as never })).toThrow(/onFailure/);
    expect(() => race(['a'], { name: 'Not A Name' })).toThrow(ConfigurationError);
    expect(() => fanIn(['a'], {} as never)).toThrow(/reduce/);
  });

  it('refuses an option it does not read, naming the one meant, rather than run with the default', () => {
    // A misspelled onFailure left 'stop' in force: the first failed step failed the whole group.
    expect(() => parallel(['a', 'b'], { onfailure: 'continue' } as never)).toThrow(/unknown option "onfailure" \(did you mean "onFailure"\?\)/);
    expect(() => sequence(['a'], { onFailur: 'continue' } as never)).toThrow(ConfigurationError);
    expect(() => pipeline(['a'], { nmae: 'draft' } as never)).toThrow(/did you mean "name"/);
    expect(() => fanIn(['a'], { reduce: () => '' }, { onFailure: 'continue', restart: 'one-for-all' } as never)).toThrow(/unknown option "restart"/);
    expect(() => race(['a'], { onFailure: 'continue' } as never)).toThrow(/unknown option "onFailure"/);
    expect(() => parallel(['a'], { restart: 'one-for-all', restartIntensity: { max: 1, withinMs: 10 } })).not.toThrow();
    // The combine of a fanIn too: a misspelled task made the aggregator work on the default task.
    expect(() => fanIn(['a'], { agent: 'judge', taks: () => 'Judge.' } as never)).toThrow(/unknown field "taks" \(did you mean "task"\?\)/);
    expect(() => fanIn(['a'], { reduce: () => '', agent: 'judge' } as never)).toThrow(/not both/);
    expect(() => fanIn(['a'], { agent: 'judge', task: () => 'Judge.', options: {} })).not.toThrow();
  });
});

describe('run limits', () => {
  /** A runtime of one-answer agents under run limits. */
  function limited(limits: { maxAgents?: number; budget?: { maxTurns: number } }) {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ a: ['A.'], b: ['B.'], c: [] }); // c is refused: it never runs
    const runtime = createRuntime({ model, agents: [worker('a'), worker('b'), worker('c')], clock, ...limits });
    return { runtime, settle: <T>(promise: Promise<T>) => advanceUntilSettled(clock, promise) };
  }

  it("a step refused by maxAgents is a failed step of reason budget: 'continue' keeps what completed", async () => {
    const { runtime, settle } = limited({ maxAgents: 2 });
    const result = await settle(parallel(['a', 'b', 'c'], { onFailure: 'continue' }).run(runtime, 'x'));

    expect(result).toMatchObject({ status: 'completed', output: '[1] a\nA.\n\n[2] b\nB.' });
    await runtime.shutdown();
  });

  it("a step refused by a spent budget fails the group (a result, not a rejection) with 'stop', and reaches a reducer", async () => {
    const { runtime, settle } = limited({ budget: { maxTurns: 2 } });
    const result = await settle(sequence(['a', 'b', 'c']).run(runtime, 'x'));
    expect(result).toMatchObject({ status: 'failed', error: { code: 'delegation_refused' } });
    expect(result.error?.message).toMatch(/^Step 3 \(c\) failed \(budget\): The budget of group:sequence:\S+ is spent/);

    const { runtime: again, settle: settleAgain } = limited({ maxAgents: 2 });
    const seen: unknown[] = [];
    const reduce = (results: readonly { agent: string; status: string; reason?: string; id: string }[]) => {
      seen.push(...results.map(({ agent, status, reason, id }) => ({ agent, status, reason, id })));
      return 'reduced';
    };
    expect(await settleAgain(fanIn(['a', 'b', 'c'], { reduce }, { onFailure: 'continue' }).run(again, 'x'))).toMatchObject({ output: 'reduced' });
    expect(seen[2]).toEqual({ agent: 'c', status: 'failed', reason: 'budget', id: '' });
    await runtime.shutdown();
    await again.shutdown();
  });
});

describe('runtime.group', () => {
  it('opens a group for code of its own: members run under it and it ends with the output given', async () => {
    const { runtime, events, settle } = setup({ a: ['A.'] });
    const group = runtime.group('review', 'Review.');
    expect(group.open).toBe(true);
    const member = await settle(runtime.run('a', 'Look.', { parentId: group.id }));
    group.complete(`Reviewed: ${member.output}`);

    expect(await group.result).toMatchObject({ id: group.id, agent: 'review', status: 'completed', output: 'Reviewed: A.' });
    expect(group.open).toBe(false);
    group.fail('too late'); // ignored once it has ended
    expect(ofType(events, 'agent.completed').map((event) => event.agentId)).toEqual([member.id, group.id]);
    expect(() => runtime.group('Bad Name', 'x')).toThrow(ConfigurationError);
    expect(() => runtime.group('review', 'x', { parentId: 'agent:nobody:1' })).toThrow(UnknownAgentError);
    await runtime.shutdown();
  });

  it("keeps no session of its own: its agents' sessions hang under the group's parent", async () => {
    const { runtime, settle } = setup({ lead: ['Lead.'], a: ['A.'], b: ['B.'] });
    const top = await settle(sequence([step('a', '1')]).run(runtime));
    const lead = await settle(runtime.run('lead', 'Lead.'));
    const nested = await settle(parallel([step('b', '2')]).run(runtime, undefined, { parentId: lead.id }));
    await runtime.flush();

    const sessions = await runtime.sessions.list();
    expect(sessions.map((session) => [session.agentType, session.parentConversationId])).toEqual([
      ['a', 'main'],
      ['lead', 'main'],
      ['b', lead.id],
    ]);
    expect(await runtime.sessions.conversation(top.id)).toBeUndefined();
    expect(runtime.record(nested.id)).toMatchObject({ parentId: lead.id, depth: 1, group: true });
    await runtime.shutdown();
  });

  it('stopping a group stops its agents (each ends with its answer so far) and fails the group with cancelled', async () => {
    const { runtime, events, settle } = setup({ slow: [] }, { slow: 5_000 });
    const run = parallel([step('slow', 'Slow.')]).run(runtime);
    await started(events, 'slow');

    runtime.stop(groups(events)[0]!.agentId);

    expect(await settle(run)).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled', message: 'Stopped before it gave an answer.' } });
    expect(endsOf(events, 'slow')).toEqual([expect.objectContaining({ type: 'agent.failed', reason: 'cancelled' })]);
    await runtime.shutdown();
  });

  it('gives the same group ids on every run with the same seed', async () => {
    const ids = async () => {
      const model = scriptedPerAgent({ a: ['A.'], b: ['B.'] });
      const runtime: Runtime = createRuntime({ model, agents: [worker('a'), worker('b')], seed: 7 });
      const events = collect(runtime.events$);
      await sequence([step('a', '1'), parallel([step('b', '2')])]).run(runtime);
      await runtime.shutdown();
      return events.map((event) => event.agentId);
    };
    expect(await ids()).toEqual(await ids());
  });
});

function zero(): Figures {
  return emptyFigures();
}
