// Without an inspector the runtime does much of the actor system's bookkeeping at once, without the steps an inspector
// would draw: agents spawned and ended without a step of the supervisor, a slot given back from the agent's own step,
// messages routed without an `enqueueActions`, a slot lent to sub-agents and given back without a step of the agent.
// None of it may change what a run does: the same events, in the same order, at the same simulated times.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, type ModelRequest, type TroupeEvent } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { hang } from '../stubs.js';

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

describe('a run watched by an inspector or not', () => {
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
