// The supervisor on its own: the real agent machine with a model turn the test answers by hand, no runtime around it.
import { describe, expect, it } from 'vitest';
import { createActor, SimulatedClock } from 'xstate';
import { agentWorker } from '../../src/actors/agentWorker.js';
import type { CallModelInput, ModelTurn } from '../../src/actors/callModel.js';
import { clockedAgentActions } from '../../src/machines/agentClock.js';
import { agentMachine, type AgentInput, type AgentOutcome } from '../../src/machines/agentMachine.js';
import { mailGuards } from '../../src/machines/agentSetup.js';
import { supervisorMachine, type SpawnRequest } from '../../src/machines/supervisorMachine.js';
import type { RouteReport } from '../../src/messaging/PostOffice.js';
import { PostOffice } from '../../src/messaging/PostOffice.js';
import { tick } from '../stubs.js';

/**
 * A supervisor whose agents think until the test answers them (`answer(id, text)`): each model turn waits for the
 * test, so which agents hold a slot can be seen between steps. It records the outcomes and routes it reports.
 */
function setup(maxParallel: number) {
  const clock = new SimulatedClock();
  const postOffice = new PostOffice(clock, (id) => supervisor.send({ type: 'WAKE', id }));
  const thinking = new Map<string, (turn: ModelTurn) => void>();
  const asked: string[] = [];
  const worker = agentWorker({
    callModel: (input: CallModelInput) =>
      new Promise<ModelTurn>((resolve) => {
        asked.push(input.agentId);
        thinking.set(input.agentId, resolve);
      }),
    runTools: () => () => {},
  });
  const agentLogic = agentMachine.provide({
    actors: { worker },
    guards: mailGuards((agentId) => postOffice.ready(agentId)),
    actions: clockedAgentActions(clock, postOffice),
  });
  const outcomes: AgentOutcome[] = [];
  const routes: RouteReport[] = [];
  const supervisor = createActor(
    supervisorMachine.provide({
      actions: {
        reportOutcome: (_, { outcome }) => void outcomes.push(outcome),
        reportRoute: (_, { report }) => void routes.push(report),
      },
    }),
    { input: { agentLogic, maxParallel, postOffice }, clock },
  );
  supervisor.start();
  const table = () => supervisor.getSnapshot().context.agents;
  return {
    supervisor,
    postOffice,
    outcomes,
    routes,
    asked,
    table,
    spawn(request: SpawnRequest) {
      supervisor.send({ type: 'SPAWN', request });
      return request.input.id;
    },
    /** Answers the model turn agent `id` is waiting for, and lets the agent and the supervisor act on it. */
    async answer(id: string, text: string) {
      const resolve = thinking.get(id);
      if (!resolve) throw new Error(`${id} is not thinking.`);
      thinking.delete(id);
      resolve({ content: text, toolCalls: [], inputTokens: 1, outputTokens: 1, model: 'test', costUsd: 0, durationMs: 0 });
      await tick();
    },
    /** The ids of the agents that hold a slot now. */
    holdingSlots: () => [...table().liveAgents()].map(([id]) => id).filter((id) => table().record(id)?.holdsSlot),
    stateOf: (id: string) => table().actor(id)?.getSnapshot().value,
  };
}

/** An agent's input: `agent:<name>:<key>`, a top-level agent unless given a parent. */
function agent(name: string, key: string, extra: Partial<AgentInput> = {}): AgentInput {
  return {
    id: `agent:${name}:${key}`,
    name,
    runId: 'run',
    parentId: null,
    toolCallId: null,
    depth: 0,
    task: `Work, ${name}.`,
    systemPrompt: `You are the ${name}.`,
    model: 'test',
    tools: [],
    maxTurns: 5,
    idleTimeoutMs: 60_000,
    ...extra,
  };
}

describe('slots under maxParallel', () => {
  it('starts at most maxParallel agents and queues the rest; an ending agent gives its slot to the next', async () => {
    const s = setup(2);
    const [a, b, c] = [s.spawn({ input: agent('w', 'a') }), s.spawn({ input: agent('w', 'b') }), s.spawn({ input: agent('w', 'c') })];
    await tick();

    expect(s.holdingSlots()).toEqual([a, b]);
    expect(s.asked).toEqual([a, b]);
    expect(s.stateOf(c)).toEqual({ pending: 'queued' });
    expect(s.table().toJSON()).toEqual({ agents: 3, active: 3, running: 2, queued: 1 });

    await s.answer(a, 'A done.');

    expect(s.outcomes).toEqual([expect.objectContaining({ id: a, status: 'completed', output: 'A done.' })]);
    expect(s.table().actor(a)).toBeUndefined(); // the actor is let go ...
    expect(s.table().record(a)).toMatchObject({ state: 'completed', holdsSlot: false }); // ... the record stays
    expect(s.holdingSlots()).toEqual([b, c]);
    expect(s.asked).toEqual([a, b, c]);
  });

  it('gives free slots by priority, then first come first served', async () => {
    const s = setup(1);
    const first = s.spawn({ input: agent('w', 'first') });
    const low = s.spawn({ input: agent('w', 'low') });
    const high1 = s.spawn({ input: agent('w', 'high1'), priority: 5 });
    const high2 = s.spawn({ input: agent('w', 'high2'), priority: 5 });
    await tick();

    for (const id of [first, high1, high2]) await s.answer(id, 'done');

    expect(s.asked).toEqual([first, high1, high2, low]);
  });

  it('lends a waiting caller\'s slot to its sub-agent, and gives it back before any queued agent starts', async () => {
    const s = setup(1);
    const lead = s.spawn({ input: agent('lead', '1') });
    await tick();
    const child = s.spawn({ input: agent('helper', '1', { parentId: lead, depth: 1 }), waiter: lead });
    await tick();

    expect(s.holdingSlots()).toEqual([child]);
    expect(s.table().record(lead)).toMatchObject({ state: 'running', waits: 1, holdsSlot: false });

    const other = s.spawn({ input: agent('other', '1'), priority: 10 });
    await tick();
    expect(s.stateOf(other)).toEqual({ pending: 'queued' });

    await s.answer(child, 'Helped.');

    expect(s.holdingSlots()).toEqual([lead]);
    expect(s.table().actor(lead)?.getSnapshot().context.holdsSlot).toBe(true); // it got RESUME
    expect(s.stateOf(other)).toEqual({ pending: 'queued' });

    await s.answer(lead, 'Led.');
    expect(s.holdingSlots()).toEqual([other]);
  });
});

describe('approval holds', () => {
  it('holds an agent that needs approval without a slot until APPROVE, and fails one denied with denied', async () => {
    const s = setup(2);
    const held = s.spawn({ input: agent('deployer', '1'), approval: { requestId: 'approval:1', risk: 'high' } });
    const refused = s.spawn({ input: agent('deployer', '2'), approval: { requestId: 'approval:2', risk: 'low' } });
    await tick();

    expect(s.stateOf(held)).toEqual({ pending: 'awaitingApproval' });
    expect(s.holdingSlots()).toEqual([]);

    s.supervisor.send({ type: 'APPROVE', id: held });
    s.supervisor.send({ type: 'DENY', id: refused, error: 'Not today.', requestId: 'approval:2' });
    await tick();

    expect(s.holdingSlots()).toEqual([held]);
    expect(s.outcomes).toEqual([expect.objectContaining({ id: refused, status: 'failed', reason: 'denied', error: expect.objectContaining({ code: 'denied', message: 'Not today.' }) })]);
  });

  it('fails an agent spawned with deny at once, and its caller keeps its slot (a queued agent does not get it)', async () => {
    const s = setup(1);
    const lead = s.spawn({ input: agent('lead', '1') });
    const queued = s.spawn({ input: agent('other', '1') });
    await tick();
    const denied = s.spawn({ input: agent('helper', '1', { parentId: lead, depth: 1 }), deny: 'The policy says no.', waiter: lead });
    await tick();

    expect(s.outcomes).toEqual([expect.objectContaining({ id: denied, status: 'failed', reason: 'denied', error: expect.objectContaining({ code: 'denied', message: 'The policy says no.' }) })]);
    expect(s.holdingSlots()).toEqual([lead]);
    expect(s.stateOf(queued)).toEqual({ pending: 'queued' });
    expect(s.table().record(lead)?.waits ?? 0).toBe(0);
  });
});

describe('messages', () => {
  it('routes a message to its receiver by name, wakes it with a free slot, and reports the route', async () => {
    const s = setup(1);
    const inbox = { capacity: 10, overflow: 'reject' as const };
    const bob = s.spawn({ input: agent('bob', '1', { resident: true }) });
    s.postOffice.open(bob, 'bob', inbox);
    await tick();
    await s.answer(bob, 'Waiting for mail.');

    expect(s.stateOf(bob)).toEqual({ running: 'waiting' });
    expect(s.holdingSlots()).toEqual([]); // a waiting resident gives its slot back

    s.supervisor.send({ type: 'MESSAGE.SEND', message: { id: 'msg:1', from: 'runtime', to: 'bob', content: 'Hello, Bob.', sentAt: 0 } });
    await tick();

    expect(s.routes).toEqual([expect.objectContaining({ deliveries: [expect.objectContaining({ to: bob, outcome: 'delivered' })] })]);
    expect(s.stateOf(bob)).toEqual({ running: 'thinking' });
    expect(s.holdingSlots()).toEqual([bob]);
    expect(s.asked).toEqual([bob, bob]);
  });

  it('reports a dead letter for an agent that never was, and for one that has ended', async () => {
    const s = setup(1);
    const ended = s.spawn({ input: agent('w', 'done') });
    await tick();
    await s.answer(ended, 'Done.');

    const to = (address: string, id: string) => ({ id, from: 'runtime', to: address, content: 'Anyone?', sentAt: 0 });
    s.supervisor.send({ type: 'MESSAGE.SEND', message: to('agent:ghost:1', 'msg:1') });
    s.supervisor.send({ type: 'MESSAGE.SEND', message: to(ended, 'msg:2') });

    expect(s.routes.map((route) => route.deadLetter)).toEqual(['unknown_agent', 'ended']);
  });
});

describe('cancelling, groups and shutdown', () => {
  it('cancels a whole subtree, children before their parent, and leaves other agents running', async () => {
    const s = setup(3);
    const lead = s.spawn({ input: agent('lead', '1') });
    const child = s.spawn({ input: agent('helper', '1', { parentId: lead, depth: 1 }) });
    const bystander = s.spawn({ input: agent('other', '1') });
    await tick();

    s.supervisor.send({ type: 'CANCEL', id: lead });
    await tick();

    expect(s.outcomes.map((outcome) => [outcome.id, outcome.reason])).toEqual([
      [child, 'cancelled'],
      [lead, 'cancelled'],
    ]);
    expect(s.holdingSlots()).toEqual([bystander]);
  });

  it('starts a group at once without a slot, and GROUP.END cancels what still runs under it before it completes', async () => {
    const s = setup(1);
    const busy = s.spawn({ input: agent('busy', '1') });
    const group = 'group:sequence:1';
    s.supervisor.send({
      type: 'SPAWN',
      request: { group: true, input: { id: group, name: 'sequence', runId: 'run', parentId: null, toolCallId: null, depth: 0, task: 'Steps.' } },
    });
    const member = s.spawn({ input: agent('step', '1', { parentId: group }) });
    await tick();

    expect(s.table().group(group)?.getSnapshot().value).toBe('running');
    expect(s.holdingSlots()).toEqual([busy]);
    expect(s.stateOf(member)).toEqual({ pending: 'queued' });

    s.supervisor.send({ type: 'GROUP.END', id: group, output: 'Combined.' });
    await tick();

    expect(s.outcomes.map((outcome) => [outcome.id, outcome.status, outcome.output ?? outcome.reason])).toEqual([
      [member, 'failed', 'cancelled'],
      [group, 'completed', 'Combined.'],
    ]);
    expect(s.holdingSlots()).toEqual([busy]);
  });

  it('on SHUTDOWN cancels every live agent, running or queued, and ends with no actor left', async () => {
    const s = setup(1);
    const running = s.spawn({ input: agent('w', 'running') });
    const queued = s.spawn({ input: agent('w', 'queued') });
    await tick();

    s.supervisor.send({ type: 'SHUTDOWN' });
    await tick();

    expect(s.outcomes.map((outcome) => [outcome.id, outcome.reason, outcome.error?.code, outcome.error?.message])).toEqual(
      expect.arrayContaining([
        [running, 'cancelled', 'cancelled', 'The runtime shut down.'],
        [queued, 'cancelled', 'cancelled', 'The runtime shut down.'],
      ]),
    );
    expect(s.outcomes).toHaveLength(2);
    expect(s.asked).toEqual([running]); // the queued agent never started
    expect(s.supervisor.getSnapshot()).toMatchObject({ status: 'done', value: 'closed' });
    expect(s.table().active).toBe(0);
  });

  it('closes at once on SHUTDOWN when no agent is live', () => {
    const s = setup(1);
    s.supervisor.send({ type: 'SHUTDOWN' });
    expect(s.supervisor.getSnapshot()).toMatchObject({ status: 'done', value: 'closed' });
  });
});
