// Slot accounting when an agent that lent its slot to a sub-agent ends up parked in running.waiting: the slot that
// comes back is given back again, and the agent gets one when it wakes; none is leaked or counted twice.
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { assignCall, callTools, toolCall } from 'troupe/testing';
import { lastToolMessage, leader, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

const startedId = (content: string | undefined) => /\((agent:[^)]+)\)/.exec(content ?? '')?.[1] ?? 'missing';

/**
 * A lead that starts `slow` (5 s) in the background, then in one batch waits for it with a blocking `task_output` that
 * gives up at 1 s (its slot stays lent to `slow`) and waits 10 s for messages; more agents and latencies as given.
 */
function lendThenPark(maxParallel: number, more: Record<string, number> = {}) {
  const clock = simulatedClock();
  const latencies: Record<string, number> = { slow: 5_000, ...more };
  const model = scriptedPerAgent(
    {
      lead: [
        callTools(assignCall('slow', 'Slow.', { background: true })),
        (request) =>
          callTools(
            toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 1_000 }, 'w'),
            toolCall('wait_for_messages', { timeout_ms: 10_000 }, 'm'),
          ),
        'done',
      ],
      slow: ['slow done'],
      ...Object.fromEntries(Object.keys(more).map((name) => [name, [`${name} done`]])),
    },
    { latencyMs: (request) => latencies[request.agentName] ?? 0 },
  );
  const agents = [leader('lead', { tools: ['assign_task', 'task_output', 'wait_for_messages'] }), worker('slow'), ...Object.keys(more).map((name) => worker(name))];
  const runtime = createRuntime({ model, agents, clock, maxParallel, projectAgentDir: false });
  return { clock, runtime };
}

/** Lets the work of this instant finish. */
const settle = async () => {
  await new Promise((resolve) => setImmediate(resolve));
  await new Promise((resolve) => setImmediate(resolve));
};

describe('slots and running.waiting', () => {
  it('an agent whose lent slot comes back while it waits for messages does not keep it, and still wakes', async () => {
    const { clock, runtime } = lendThenPark(1);
    const lead = runtime.spawn('lead', 'Go.');
    // Until 6 s: the lead waits in running.waiting (its wait has a 10 s timeout); slow ends at 5 s.
    for (let t = 0; t <= 6_000; t += 500) {
      await settle();
      clock.set(t);
    }
    await settle();
    expect(runtime.record(lead.id)).toMatchObject({ state: 'running', parked: true });
    expect(runtime.record(lead.id)?.holdsSlot).not.toBe(true);
    // Its wait times out at 10 s: it wakes and answers.
    await runtime.runUntilIdle();
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    await runtime.shutdown();
  });

  it('the same run, driven only by runUntilIdle, completes instead of ending in a DeadlockError', async () => {
    const { runtime } = lendThenPark(1);
    const lead = runtime.spawn('lead', 'Go.');
    await expect(runtime.runUntilIdle()).resolves.toMatchObject({ waiting: [] });
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    await runtime.shutdown();
  });

  it('leaks no slot: with maxParallel 2, two later agents still run side by side', async () => {
    // `hog` holds the second slot until the lead has lent its own to `slow`, so the lent slot is not given back at 1 s.
    const { clock, runtime } = lendThenPark(2, { hog: 6_000, a: 100, b: 100 });
    const hog = runtime.spawn('hog', 'Hog a slot.');
    const lead = runtime.spawn('lead', 'Go.');
    await runtime.runUntilIdle();
    expect(await lead.result).toMatchObject({ status: 'completed', output: 'done' });
    expect(await hog.result).toMatchObject({ status: 'completed' });

    const started = clock.now();
    const a = runtime.spawn('a', 'A.');
    const b = runtime.spawn('b', 'B.');
    await runtime.runUntilIdle();
    await Promise.all([a.result, b.result]);
    // Both fit under maxParallel 2: they run side by side, so both end 100 ms after they were spawned.
    expect(clock.now() - started).toBe(100);
    await runtime.shutdown();
  });
});
