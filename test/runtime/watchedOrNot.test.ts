// Without an inspector the runtime does much of the actor system's bookkeeping at once, without the steps an inspector
// would draw: agents spawned and ended without a step of the supervisor, a slot given back from the agent's own step,
// messages routed without a step of the supervisor or an `enqueueActions`, a slot lent to sub-agents and given back without a step of the agent,
// every change of an agent's context made in place rather than with `assign`.
// None of it may change what a run does: the same events, in the same order, at the same simulated times.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, type ModelRequest, type TroupeEvent } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { hang } from '../stubs.js';
import { WOKEN_TOGETHER } from '../../src/machines/routing.js';

const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['assign_task', 'task_output', hang], subagents: ['worker'] });
// Its own idle timeout: its model call takes longer than a lead's.
const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', idleTimeoutMs: 60_000 });

const assign = (task: string, background = false) =>
  toolCall('assign_task', { description: 'a part', agent: 'worker', task, ...(background ? { run_in_background: true } : {}) }, `call_${task}`);

/**
 * Three leads under two slots, each lead's idle timeout shorter than a worker's turn. A waits for two workers and
 * answers; B waits for one while another of its tools hangs, so it times out once its worker ends; C starts a worker in
 * the background, waits for it less long than it runs (its slot lent, then wanted back while both slots are taken),
 * then waits for it to the end.
 */
function reply(request: ModelRequest) {
  if (request.agentName === 'worker') return `worked on ${request.messages.at(-1)!.content.slice(0, 20)}`;
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  const task = request.messages.find((message) => message.role === 'user')!.content;
  const started = request.messages.map((message) => /agent_id "([^"]+)"/.exec(message.content)?.[1]).find((id) => id !== undefined);
  if (task.startsWith('A')) return turn === 0 ? callTools(assign('a1'), assign('a2')) : 'A done';
  if (task.startsWith('B')) return callTools(assign('b1'), toolCall('hang', {}));
  if (turn === 0) return callTools(assign('c1', true));
  if (turn === 1) return callTools(toolCall('task_output', { agent_id: started, blocking: true, timeout_ms: 300 }));
  if (turn === 2) return callTools(toolCall('task_output', { agent_id: started, blocking: true }));
  return 'C done';
}

async function run(inspected: boolean) {
  const clock = new SimulatedClock();
  const model = new ScriptedModel(reply, { latencyMs: (request: ModelRequest, index: number) => (request.agentName === 'worker' ? 1_000 + (index % 5) * 100 : 50) });
  const runtime = createRuntime({ model, agents: [lead, worker], clock, seed: 11, maxParallel: 2, idleTimeoutMs: 400, projectAgentDir: false, ...(inspected ? { inspect: () => {} } : {}) });
  const events: string[] = [];
  runtime.events$.subscribe((event: TroupeEvent) => events.push(JSON.stringify(event)));
  const results = Promise.all(['A', 'B', 'C'].map((task) => runtime.run('lead', task)));
  await runtime.runUntilIdle();
  const outcomes = (await results).map((result) => [result.status, result.reason ?? null, result.output ?? null]);
  await runtime.shutdown();
  return { outcomes, events };
}

const host = defineAgent({ name: 'host', description: 'Hosts.', systemPrompt: 'Host.', tools: ['publish', 'send_message', 'wait_for_messages', 'finish'], resident: true });
const guest = defineAgent({ name: 'guest', description: 'Visits.', systemPrompt: 'Visit.', tools: ['send_message', 'reply', 'wait_for_messages', 'finish'], subscribe: ['room'], resident: true });

/**
 * A host and four resident guests under two slots: the host greets the room (a topic) and collects the guests' answers
 * for a while; each guest answers the host by name and waits for it; the host then sends each guest that answered a
 * farewell, which ends it, and a question the runtime asked it meanwhile is answered with `reply` by the guest it went to.
 */
function party(request: ModelRequest) {
  const last = request.messages.at(-1)!.content;
  const turn = request.messages.filter((message) => message.role === 'assistant').length;
  if (request.agentName === 'host') {
    if (turn === 0) return callTools(toolCall('publish', { topic: 'room', content: 'hello' }), toolCall('wait_for_messages', { timeout_ms: 2_000, collect: true }));
    if (turn === 1) {
      const guests = [...new Set(request.messages.flatMap((message) => [...message.content.matchAll(/from (agent:guest:\S+)\]/g)].map((match) => match[1]!)))];
      return callTools(...guests.map((to, at) => toolCall('send_message', { to, content: 'bye' }, `bye_${at}`)), toolCall('finish', { answer: `said bye to ${guests.length}` }));
    }
    return 'hosted';
  }
  if (turn === 0) return 'ready';
  if (last.endsWith('] bye')) return callTools(toolCall('finish', { answer: 'left' }));
  const question = /\[message (\S+) from runtime\] how are you/.exec(last);
  if (question) return callTools(toolCall('reply', { content: 'fine' }), toolCall('wait_for_messages', { from: 'host' }));
  if (last.endsWith('] hello')) return callTools(toolCall('send_message', { to: 'host', content: `here at turn ${turn}` }), toolCall('wait_for_messages', { from: 'host' }));
  return callTools(toolCall('wait_for_messages', { from: 'host', timeout_ms: 500 }));
}

async function party$(inspected: boolean) {
  const clock = new SimulatedClock();
  const model = new ScriptedModel(party, { latencyMs: (request: ModelRequest, index: number) => (request.agentName === 'host' ? 30 : 100 + (index % 3) * 40) });
  const runtime = createRuntime({ model, agents: [host, guest], clock, seed: 5, maxParallel: 2, projectAgentDir: false, ...(inspected ? { inspect: () => {} } : {}) });
  const events: string[] = [];
  runtime.events$.subscribe((event: TroupeEvent) => events.push(JSON.stringify(event)));
  const guests = [1, 2, 3, 4].map((n) => runtime.spawn('guest', `Guest ${n}.`));
  await runtime.runUntilIdle();
  const hosted = runtime.spawn('host', 'Host the party.');
  const answer = runtime.request(guests[1]!.id, 'how are you', { timeoutMs: 1_000 }).then(
    (message) => message.content,
    (error: Error) => error.name,
  );
  await runtime.runUntilIdle();
  const outcomes = await Promise.all([hosted, ...guests].map(async (handle) => {
    const result = await handle.result;
    return [result.status, result.output ?? null];
  }));
  const replied = await answer;
  await runtime.shutdown();
  return { outcomes, events, replied };
}

const READERS = WOKEN_TOGETHER + 60;
const reader = defineAgent({ name: 'reader', description: 'Reads.', systemPrompt: 'Read.', subscribe: ['news'], resident: true });

/**
 * A wave and sixty more resident readers whose model answers at once (no latency: a turn goes on a microtask at a
 * time), and one message to all of them: past the wave woken one at a time, the first readers end their turns before
 * the last are woken.
 */
async function readers$(inspected: boolean) {
  const model = new ScriptedModel(() => 'Read.');
  const runtime = createRuntime({ model, agents: [reader], clock: new SimulatedClock(), seed: 3, maxParallel: READERS, projectAgentDir: false, ...(inspected ? { inspect: () => {} } : {}) });
  const events: string[] = [];
  runtime.events$.subscribe((event: TroupeEvent) => events.push(JSON.stringify(event)));
  for (let n = 0; n < READERS; n++) runtime.spawn('reader', 'Read the news.');
  await runtime.runUntilIdle();
  await runtime.publish('news', 'extra');
  const report = await runtime.runUntilIdle();
  await runtime.shutdown();
  return { events, waiting: report.waiting.length };
}

describe('a run watched by an inspector or not', () => {
  it('wakes the receivers of a message in a wave, then one at a time, either way: the same events in the same order', async () => {
    const unwatched = await readers$(false);
    const watched = await readers$(true);
    expect(unwatched.waiting).toBe(READERS);
    expect(unwatched.events.filter((event) => event.includes('"model.request"')).length).toBe(READERS * 2);
    // Woken a microtask apart past the wave, the first readers' turns end before the last readers are woken (in one loop, every
    // reader was woken, and asked its model, before any turn ended): so the order depends on the line being used.
    const second = unwatched.events.filter((event) => event.includes('"turn":2'));
    const firstAnswer = second.findIndex((event) => event.includes('"model.response"'));
    const lastRequest = second.findLastIndex((event) => event.includes('"model.request"'));
    expect(firstAnswer).toBeLessThan(lastRequest);
    expect(watched.events).toEqual(unwatched.events);
  });

  it('routes messages, topics and replies alike, with the same events at the same simulated times', async () => {
    const unwatched = await party$(false);
    const watched = await party$(true);
    expect(unwatched.replied).toBe('fine');
    expect(unwatched.outcomes).toEqual([
      ['completed', 'said bye to 4'],
      ['completed', 'left'],
      ['completed', 'left'],
      ['completed', 'left'],
      ['completed', 'left'],
    ]);
    expect(unwatched.events.filter((event) => event.includes('"message.delivered"')).length).toBeGreaterThan(10);
    expect(unwatched.events).toEqual(watched.events);
    expect(unwatched.replied).toEqual(watched.replied);
  });

  it('gives the same events at the same simulated times, and the same results', async () => {
    const unwatched = await run(false);
    const watched = await run(true);
    expect(unwatched.outcomes).toEqual([
      ['completed', null, 'A done'],
      ['failed', 'timeout', null],
      ['completed', null, 'C done'],
    ]);
    expect(unwatched.events.length).toBeGreaterThan(50);
    expect(unwatched.events).toEqual(watched.events);
    expect(unwatched.outcomes).toEqual(watched.outcomes);
  });
});
