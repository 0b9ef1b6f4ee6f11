// The sub-agents a turn delegates to are made together once the turn's calls have asked for them (SpawnBatch), and
// nothing that reads the runtime sees them missing meanwhile: limits, reads of a sub-agent, and spawns from code.
import { describe, expect, it } from 'vitest';
import { createRuntime, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools } from 'troupe/testing';
import { SimulatedClock } from 'xstate';
import { collect, leader, ofType, worker } from '../stubs.js';

const toolMessages = (request: ModelRequest) => request.messages.filter((message) => message.role === 'tool');

/** A lead that hands `n` tasks to workers in one turn, then sums up; workers answer at once. */
function fanModel(n: number) {
  return new ScriptedModel((request) => {
    if (request.agentName === 'worker') return 'part done';
    if (toolMessages(request).length > 0) return 'all done';
    return callTools(...Array.from({ length: n }, (_, index) => assignCall('worker', `Part ${index}.`, { id: `p${index}` })));
  });
}

describe('the spawns of a turn', () => {
  it("are made together after the turn's calls have asked for them, in the order of the calls", async () => {
    const runtime = createRuntime({ model: fanModel(4), agents: [leader(), worker()], maxParallel: 8, maxToolConcurrency: 4 });
    const events = collect(runtime.events$);
    const result = await runtime.run('lead', 'Split.');
    expect(result.status).toBe('completed');
    const lead = result.id;
    const order = events
      .filter((event) => (event.type === 'tool.call' && event.agentId === lead) || (event.type === 'agent.spawned' && event.parentId === lead))
      .map((event) => (event.type === 'tool.call' ? `call ${event.callId}` : `spawned ${event.toolCallId}`));
    expect(order).toEqual(['call p0', 'call p1', 'call p2', 'call p3', 'spawned p0', 'spawned p1', 'spawned p2', 'spawned p3']);
    await runtime.shutdown();
  });

  it('are not counted as waiting for a slot by maxPending once they are made with free slots', async () => {
    // Five sub-agents asked for in one turn, with slots for all: none waits for a slot, so maxPending 2 refuses none,
    // though all five were asked for before the first was made.
    const runtime = createRuntime({ model: fanModel(5), agents: [leader(), worker()], maxParallel: 8, maxPending: 2, maxToolConcurrency: 5 });
    const events = collect(runtime.events$);
    const result = await runtime.run('lead', 'Split.');
    expect(result.status).toBe('completed');
    const results = ofType(events, 'tool.result').filter((event) => event.agentId === result.id);
    expect(results.map((event) => event.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
    expect(runtime.metrics().total.agentsCompleted).toBe(6);
    await runtime.shutdown();
  });

  it('are made before anything reads one of them: a background sub-agent is running when its id comes back', async () => {
    const runtime = createRuntime({
      model: new ScriptedModel((request) => {
        if (request.agentName === 'worker') return 'part done';
        return toolMessages(request).length > 0 ? 'started it' : callTools(assignCall('worker', 'Part.', { id: 'bg', background: true }));
      }),
      agents: [leader(), worker()],
      maxParallel: 4,
    });
    const events = collect(runtime.events$);
    const result = await runtime.run('lead', 'Start one.');
    expect(result.status).toBe('completed');
    const answer = ofType(events, 'tool.result').find((event) => event.callId === 'bg');
    // Made when the delegation asked for its state, in the call itself: not "waiting to start".
    expect(answer?.content).toMatch(/is still running/);
    await runtime.shutdown();
  });

  it('from code are made at once: a simulated clock moved right after a spawn times its first model call from the spawn', async () => {
    const clock = new SimulatedClock();
    const model = new ScriptedModel(() => 'done', { latencyMs: 100 });
    const runtime = createRuntime({ model, agents: [worker()], clock });
    const handle = runtime.spawn('worker', 'Go.');
    expect(runtime.record(handle.id)?.state).toBe('running');
    clock.increment(100);
    const result = await handle.result;
    expect(result).toMatchObject({ status: 'completed', output: 'done' });
    await runtime.shutdown();
  });
});
