// slot accounting when an agent that lent its slot ends up parked in running.waiting.
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { assign, call, lastToolMessage, leader, simulatedClock, toolReply, worker } from '../stubs.js';

const startedId = (content: string | undefined) => /\((agent:[^)]+)\)/.exec(content ?? '')?.[1] ?? 'missing';

describe('slots and running.waiting', () => {
  it('an agent whose lent slot comes back while it waits for messages does not keep it, and still wakes', async () => {
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      {
        lead: [
          toolReply(assign('slow', 'Slow.', { run_in_background: true })),
          // One batch: a blocking task_output that gives up at 1 s (the slot stays lent to `slow`), and a wait for messages.
          (request) =>
            toolReply(
              call('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 1_000 }, 'w'),
              call('wait_for_messages', { timeout_ms: 10_000 }, 'm'),
            ),
          'done',
        ],
        slow: ['slow done'],
      },
      { latencyMs: (request) => (request.agentName === 'slow' ? 5_000 : 0) },
    );
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { tools: ['assign_task', 'task_output', 'wait_for_messages'] }), worker('slow')],
      clock,
      maxParallel: 1,
      projectAgentDir: false,
    });
    const lead = runtime.spawn('lead', 'Go.');

    // Until 5 s: lead waits in running.waiting (its wait has a 10 s timeout); slow ends at 5 s.
    clock.set(0);
    for (let t = 0; t <= 6_000; t += 500) {
      await new Promise((r) => setImmediate(r));
      await new Promise((r) => setImmediate(r));
      clock.set(t);
    }
    await new Promise((r) => setImmediate(r));
    // Parked in running.waiting: it should hold no slot.
    expect(runtime.record(lead.id)?.state).toBe('running');
    expect(runtime.record(lead.id)?.parked).toBe(true);
    expect(runtime.record(lead.id)?.holdsSlot).not.toBe(true);

    // Its wait times out at 10 s: it must wake and answer.
    await runtime.runUntilIdle();
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    await runtime.shutdown();
  });

  it('the same run, driven only by runUntilIdle, completes instead of ending in a DeadlockError', async () => {
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      {
        lead: [
          toolReply(assign('slow', 'Slow.', { run_in_background: true })),
          (request) =>
            toolReply(
              call('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 1_000 }, 'w'),
              call('wait_for_messages', { timeout_ms: 10_000 }, 'm'),
            ),
          'done',
        ],
        slow: ['slow done'],
      },
      { latencyMs: (request) => (request.agentName === 'slow' ? 5_000 : 0) },
    );
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { tools: ['assign_task', 'task_output', 'wait_for_messages'] }), worker('slow')],
      clock,
      maxParallel: 1,
      projectAgentDir: false,
    });
    const lead = runtime.spawn('lead', 'Go.');
    await expect(runtime.runUntilIdle()).resolves.toMatchObject({ waiting: [] });
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    await runtime.shutdown();
  });
});

describe('slot count after a lent slot came back to a parked agent', () => {
  it('leaks no slot: with maxParallel 2, two later agents still run side by side', async () => {
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      {
        lead: [
          toolReply(assign('slow', 'Slow.', { run_in_background: true })),
          (request) =>
            toolReply(
              call('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 1_000 }, 'w'),
              call('wait_for_messages', { timeout_ms: 10_000 }, 'm'),
            ),
          'done',
        ],
        // `hog` holds the second slot until the lead has lent its own to `slow`, so the lent slot is not given back at 1 s.
        hog: ['hog done'],
        slow: ['slow done'],
        a: ['a done'],
        b: ['b done'],
      },
      { latencyMs: (request) => ({ slow: 5_000, hog: 6_000, a: 100, b: 100 })[request.agentName] ?? 0 },
    );
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { tools: ['assign_task', 'task_output', 'wait_for_messages'] }), worker('slow'), worker('hog'), worker('a'), worker('b')],
      clock,
      maxParallel: 2,
      projectAgentDir: false,
    });
    const hog = runtime.spawn('hog', 'Hog a slot.');
    const lead = runtime.spawn('lead', 'Go.');
    await runtime.runUntilIdle();
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    expect(await hog.result).toMatchObject({ status: 'completed' });

    const started = clock.now();
    const a = runtime.spawn('a', 'A.');
    const b = runtime.spawn('b', 'B.');
    await runtime.runUntilIdle();
    await a.result;
    await b.result;
    // Both fit under maxParallel 2: they run side by side, so both end 100 ms after they were spawned.
    expect(clock.now() - started).toBe(100);
    await runtime.shutdown();
  });
});
