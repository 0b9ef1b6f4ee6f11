import { describe, expect, it } from 'vitest';
import { createRuntime, DelegationError } from 'troupe';
import { advanceUntilSettled, assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scripted, scriptedPerAgent, simulatedClock, tick, worker } from '../stubs.js';

/** The id a background assign_task returned, read from its tool message. */
const startedId = (content: string | undefined) => /Agent \S+ \((agent:[^)]+)\)/.exec(content ?? '')?.[1] ?? 'missing';

describe('background delegation and task_output', () => {
  it('returns the id at once, says running while it runs, then gives the answer', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        lead: [
          callTools(assignCall('slow', 'Dig deep.', { background: true })),
          (request) => callTools(toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content) }, 'peek')),
          (request) =>
            callTools(toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 60_000 }, 'wait')),
          (request) => `Final: ${lastToolMessage(request)?.content}`,
        ],
        slow: ['Found the bug.'],
      },
      { latencyMs: (request) => (request.agentName === 'slow' ? 10_000 : 100) },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker('slow')], clock });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Investigate.'));

    const tools = model.calls.filter((request) => request.agentName === 'lead').map((request) => lastToolMessage(request));
    expect(tools[1]!.content).toMatch(/is still running/);
    expect(tools[1]!.metadata).toMatchObject({ status: 'running', agentName: 'slow' });
    expect(tools[2]!.content).toMatch(/still running/);
    expect(tools[3]!.content).toContain('Found the bug.');
    expect(tools[3]!.metadata).toMatchObject({ status: 'completed', metrics: { own: { modelCalls: 1 } } });
    expect(result.output).toContain('Found the bug.');
    const spawned = ofType(events, 'agent.spawned').find((event) => event.name === 'slow')!;
    expect(spawned.background).toBe(true);
    // The lead went on while the background agent ran: it made its second call long before the agent ended.
    const leadRequests = ofType(events, 'model.request').filter((event) => event.agentId === result.id);
    expect(leadRequests[1]!.at).toBe(100);
    expect(clock.now()).toBe(10_200);
    await runtime.shutdown();
  });

  it('reports a failed background agent as an error, and an unknown id clearly', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('broken', 'Break.', { background: true })),
        (request) => callTools(toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true }, 'w')),
        callTools(toolCall('task_output', { agent_id: 'agent:ghost:nobody' }, 'ghost')),
        'done',
      ],
      broken: [new Error('model exploded')],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('broken')] });

    await runtime.run('lead', 'Go.');

    const tools = model.calls.filter((request) => request.agentName === 'lead').map((request) => lastToolMessage(request));
    expect(tools[2]).toMatchObject({ isError: true });
    expect(tools[2]!.content).toMatch(/failed \(error\): The model call of agent "broken" to model "scripted" failed: model exploded/);
    expect(tools[3]).toMatchObject({ isError: true });
    expect(tools[3]!.content).toMatch(/No agent has the id "agent:ghost:nobody"/);
    await runtime.shutdown();
  });

  it('refuses an agent asking for its own output at once, rather than waiting on itself', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      lead: [(request) => callTools(toolCall('task_output', { agent_id: request.agentId, blocking: true, timeout_ms: 3_600_000 }, 'self')), 'done'],
    });
    const runtime = createRuntime({ model, agents: [leader()], clock, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));

    expect(result).toMatchObject({ status: 'completed', output: 'done' });
    expect(lastToolMessage(model.calls.at(-1)!)).toMatchObject({ isError: true, content: expect.stringMatching(/is not one of the sub-agents of "lead"/) });
    expect(clock.now()).toBe(0);
    await runtime.shutdown();
  });
});

describe('a blocking task_output at the edge of its timeout', () => {
  /** A lead that starts `slow` (10 s) in the background at t=0 and then waits for it with the given timeout. */
  async function waitWithTimeout(timeoutMs: number) {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        lead: [
          callTools(assignCall('slow', 'Take ten seconds.', { background: true })),
          (request) =>
            callTools(toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: timeoutMs }, 'w')),
          'done',
        ],
        slow: ['Finished.'],
      },
      { latencyMs: (request) => (request.agentName === 'slow' ? 10_000 : 0) },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker('slow')], clock });
    await advanceUntilSettled(clock, runtime.run('lead', 'Wait for it.'));
    const message = lastToolMessage(model.calls.at(-1)!)!;
    await runtime.runUntilIdle(); // slow still ends with its answer, whoever stopped waiting for it
    await runtime.shutdown();
    return message;
  }

  it('returns the answer of an agent that ends exactly at the deadline', async () => {
    const message = await waitWithTimeout(10_000);
    expect(message.content).toContain('Finished.');
    expect(message.metadata).toMatchObject({ status: 'completed' });
  });

  it('says still running, timed out, when the agent ends one millisecond after the deadline', async () => {
    const message = await waitWithTimeout(9_999);
    expect(message.content).toMatch(/still running after waiting 9999 ms/);
    expect(message.metadata).toMatchObject({ status: 'running', timedOut: true });
  });
});

describe('background work from code', () => {
  it('spawns in the background and answers taskOutput running, then with the result', async () => {
    const clock = simulatedClock();
    const model = scripted(['All done.'], { latencyMs: 5_000 });
    const runtime = createRuntime({ model, agents: [worker()], clock });
    const handle = runtime.spawn('worker', 'Work.', { background: true });
    await tick();

    expect(await runtime.taskOutput(handle.id)).toMatchObject({ status: 'running', agentId: handle.id });
    const early = runtime.taskOutput(handle.id, { blocking: true, timeoutMs: 1_000 });
    expect(await advanceUntilSettled(clock, early)).toMatchObject({ status: 'running', timedOut: true });
    const later = runtime.taskOutput(handle.id, { blocking: true, timeoutMs: 60_000 });
    expect(await advanceUntilSettled(clock, later)).toMatchObject({ status: 'completed', output: 'All done.' });
    expect(clock.now()).toBe(5_000);
    expect((await handle.result).output).toBe('All done.');
    await expect(runtime.taskOutput('agent:worker:unknown')).rejects.toBeInstanceOf(DelegationError);
    await runtime.shutdown();
  });

  it('cancelling the caller cancels its background sub-agents', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      // Both are cancelled before they answer again.
      { lead: [callTools(assignCall('slow', 'Forever.', { background: true }))], slow: [] },
      { latencyMs: (request) => (request.agentName === 'slow' ? 60_000 : request.messages.length > 2 ? 30_000 : 0) },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker('slow')], clock });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Start something.');
    clock.increment(1);
    await tick();
    await tick();
    const child = ofType(events, 'agent.spawned').find((event) => event.name === 'slow')!;
    expect(runtime.record(child.agentId)?.state).toBe('running');

    runtime.cancel(lead.id);

    expect(await lead.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(await runtime.taskOutput(child.agentId, { blocking: true })).toMatchObject({ status: 'failed', reason: 'cancelled' });
    await runtime.shutdown();
  });
});
