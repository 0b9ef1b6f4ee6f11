// Every control call from code (`cancel`, `stop`, `shutdown`) at every point where an agent waits: each handle settles
// with the documented result, every agent (sub-agents included) ends exactly once in events, metrics and the store, and
// nothing is left running. Simulated time throughout: each point is reached on a TestClock with model latency.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, parallel, sleep, type AgentResult, type ModelReply, type ModelRequest } from 'troupe';
import { ScriptedModel, advanceUntilSettled, callTools, nextTimerAt, toolCall } from 'troupe/testing';
import { collect, hang, ofType, simulatedClock } from '../stubs.js';

const slow = defineTool({
  name: 'slow',
  description: 'Takes five seconds.',
  parameters: z.object({}),
  kind: 'read',
  execute: async (_, { clock, signal }) => {
    await sleep(clock, 5_000, signal);
    return 'slow done';
  },
});
const ask = defineTool({ name: 'ask', description: 'Asks a person first.', parameters: z.object({}), kind: 'read', needsApproval: true, execute: () => 'asked' });

const tools = ['slow', 'hang', 'ask', 'assign_task', 'task_output', 'wait_for_messages', 'send_message'];
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools, subagents: ['worker'] });
const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', tools: ['slow'] });
const resident = defineAgent({ name: 'listener', description: 'Listens.', systemPrompt: 'Listen.', tools: [], resident: true });

const assign = (background: boolean) =>
  toolCall('assign_task', { description: 'a part', agent: 'worker', task: 'Do the part.', ...(background ? { run_in_background: true } : {}) });
const startedId = (request: ModelRequest) =>
  request.messages.map((message) => /agent_id "([^"]+)"/.exec(message.content)?.[1]).find((id) => id !== undefined);

/**
 * What the lead does on its first turns, by the point it is controlled at: after 2.5 s, in its first tool call (or, for
 * `thinking`, after 0.5 s, in its first model call).
 */
const points: Record<string, (request: ModelRequest, turn: number) => ModelReply | string> = {
  thinking: () => 'Never given: controlled while it thinks.',
  'a slow tool': () => callTools(toolCall('slow', {})),
  'a tool that never ends': () => callTools(toolCall('hang', {})),
  'a batch of parallel tools': () => callTools(toolCall('slow', {}, 'c1'), toolCall('hang', {}, 'c2'), toolCall('slow', {}, 'c3')),
  'a tool waiting for a person': () => callTools(toolCall('ask', {})),
  'a delegated sub-agent': () => callTools(assign(false)),
  'a background sub-agent': (request, turn) =>
    turn === 0 ? callTools(assign(true)) : callTools(toolCall('task_output', { agent_id: startedId(request), blocking: true, timeout_ms: 600_000 })),
  wait_for_messages: () => callTools(toolCall('wait_for_messages', { timeout_ms: 600_000 })),
  'send_message expecting a reply': () => callTools(toolCall('send_message', { to: 'runtime', content: 'May I?', expect_reply: true, timeout_ms: 600_000 })),
};

const reply = (point: string) => (request: ModelRequest) => {
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  if (request.agentName === 'worker') return callTools(toolCall('slow', {}));
  if (request.agentName === 'listener') return 'Listening.';
  return points[point]!(request, turn);
};

type Control = 'cancel' | 'stop' | 'shutdown';

const messages: Record<Control, string> = {
  cancel: 'Cancelled (agent:lead:',
  stop: 'Stopped before it gave an answer.',
  shutdown: 'The runtime shut down.',
};

async function controlled(point: string, control: Control, options: { pending?: boolean } = {}) {
  const clock = simulatedClock();
  const model = new ScriptedModel(reply(point), { latencyMs: 1_000 });
  const runtime = createRuntime({
    model, agents: [lead, worker, resident], tools: [slow, hang, ask], clock, seed: 9, projectAgentDir: false, maxParallel: options.pending ? 1 : 5,
  });
  const events = collect(runtime.events$);
  const rejections: unknown[] = [];
  const onRejection = (reason: unknown) => rejections.push(reason);
  process.on('unhandledRejection', onRejection);
  try {
    const first = options.pending ? runtime.spawn('worker', 'Hold the only slot.') : undefined;
    const handle = runtime.spawn('lead', 'Lead.');
    const listener = runtime.spawn('listener', 'Listen.');
    await advanceUntilSettled(clock, new Promise<void>((resolve) => clock.setTimeout(resolve, point === 'thinking' ? 500 : 2_500)));
    expect(runtime.record(handle.id)?.state).toBe(options.pending ? 'pending' : 'running');
    const shutdown = control === 'shutdown' ? runtime.shutdown() : undefined;
    if (control !== 'shutdown') runtime[control](handle.id);
    const result = await advanceUntilSettled(clock, handle.result);
    if (control !== 'shutdown') runtime.stop(listener.id);
    const others = await advanceUntilSettled(clock, Promise.all([listener.result, ...(first ? [first.result] : [])]));
    await (shutdown ?? runtime.shutdown());
    return { runtime, events, result, others, rejections, clock };
  } finally {
    process.off('unhandledRejection', onRejection);
  }
}

function expectEndedOnce({ runtime, events, rejections, clock }: Awaited<ReturnType<typeof controlled>>) {
  const spawned = [...new Set(ofType(events, 'agent.spawned').map((event) => event.agentId))];
  const endings = [...ofType(events, 'agent.completed'), ...ofType(events, 'agent.failed')].map((event) => event.agentId);
  expect(endings.toSorted()).toEqual(spawned.toSorted());
  const { total, agents } = runtime.metrics();
  expect(total.agentsRunning).toBe(0);
  // Groups are not counted among the agents.
  expect(total.agentsCompleted + total.agentsFailed).toBe(spawned.filter((id) => !id.startsWith('group:')).length);
  for (const id of spawned) expect(['completed', 'failed']).toContain(agents[id]?.state);
  expect(rejections).toEqual([]);
  expect(nextTimerAt(clock)).toBeUndefined();
}

async function expectStored(runtime: Awaited<ReturnType<typeof controlled>>['runtime'], result: AgentResult) {
  const sessions = await runtime.sessions.list();
  for (const session of sessions) expect(['completed', 'failed'], session.id).toContain(session.state);
  expect((await runtime.sessions.get(result.id))?.state).toBe(result.status);
}

describe.each(['cancel', 'stop', 'shutdown'] as const)('%s', (control) => {
  it.each(Object.keys(points))('of an agent in %s', async (point) => {
    const run = await controlled(point, control);
    expect(run.result).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled' } });
    expect(run.result.error?.message).toContain(messages[control]);
    // The resident beside it ends with its answer, stopped or shut down (it has none yet while it thinks too).
    if (point === 'thinking') expect(run.others[0]).toMatchObject({ status: 'failed', reason: 'cancelled' });
    else expect(run.others[0]).toMatchObject({ status: 'completed', output: 'Listening.' });
    // A sub-agent it started is cancelled with it.
    for (const sub of ofType(run.events, 'agent.spawned').filter((event) => event.parentId === run.result.id)) {
      expect(ofType(run.events, 'agent.failed').find((event) => event.agentId === sub.agentId)?.reason).toBe('cancelled');
    }
    expectEndedOnce(run);
    await expectStored(run.runtime, run.result);
  });

  it('of an agent waiting for a slot', async () => {
    const run = await controlled('thinking', control, { pending: true });
    expect(run.result).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled' } });
    expect(ofType(run.events, 'agent.started').some((event) => event.agentId === run.result.id)).toBe(false);
    expectEndedOnce(run);
    await expectStored(run.runtime, run.result);
  });
});

describe('a pattern controlled as it runs', () => {
  it.each(['cancel', 'stop', 'shutdown'] as const)('%s of the group ends it and every step, once each', async (control) => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => callTools(toolCall('slow', {})), { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [worker], tools: [slow], clock, seed: 4, projectAgentDir: false });
    const events = collect(runtime.events$);
    const result = parallel(['worker', 'worker']).run(runtime, 'Work.');
    await advanceUntilSettled(clock, new Promise<void>((resolve) => clock.setTimeout(resolve, 2_500)));
    const group = ofType(events, 'agent.spawned').find((event) => event.group === true)!.agentId;
    const shutdown = control === 'shutdown' ? runtime.shutdown() : undefined;
    if (control !== 'shutdown') runtime[control](group);
    expect(await advanceUntilSettled(clock, result)).toMatchObject({ status: 'failed', reason: 'cancelled' });
    await (shutdown ?? runtime.shutdown());
    expectEndedOnce({ runtime, events, rejections: [], clock } as never);
  });
});
