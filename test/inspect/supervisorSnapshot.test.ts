// What an inspector is sent of the supervisor: every snapshot carries its context, serialised. The logic, the agent
// table and the post office serialise as references and counts, so the context stays small however many agents run.
import type { InspectionEvent } from 'xstate';
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { worker } from '../stubs.js';

/** The largest serialised context of the supervisor's snapshots over a run of `n` one-turn agents. */
async function largestSupervisorContext(n: number): Promise<{ bytes: number; snapshots: number }> {
  let bytes = 0;
  let snapshots = 0;
  const inspect = (event: InspectionEvent) => {
    if (event.type !== '@xstate.snapshot' || (event.actorRef as { id?: string }).id !== 'supervisor') return;
    snapshots += 1;
    const context = (event.snapshot as { context?: unknown }).context;
    bytes = Math.max(bytes, Buffer.byteLength(JSON.stringify(context)));
  };
  const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [worker()], inspect, maxParallel: 8, projectAgentDir: false });
  await Promise.all(Array.from({ length: n }, (_, index) => runtime.run('worker', `Task ${index}`)));
  await runtime.shutdown();
  return { bytes, snapshots };
}

describe("the supervisor's snapshots under an inspector", () => {
  it('carry at most 2 KB of serialised context, with 10 agents and with 1,000', async () => {
    const few = await largestSupervisorContext(10);
    const many = await largestSupervisorContext(1_000);
    expect(few.snapshots).toBeGreaterThan(10);
    expect(many.snapshots).toBeGreaterThan(1_000);
    expect(few.bytes).toBeLessThanOrEqual(2_048);
    expect(many.bytes).toBeLessThanOrEqual(2_048);
    // It does not grow with the number of agents: only counts get longer.
    expect(many.bytes - few.bytes).toBeLessThan(32);
  });

  it('serialises the logic as the machines ids, and the table and post office as counts', async () => {
    let context: Record<string, unknown> | undefined;
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.snapshot' && (event.actorRef as { id?: string }).id === 'supervisor') {
        context = JSON.parse(JSON.stringify((event.snapshot as { context?: unknown }).context)) as Record<string, unknown>;
      }
    };
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [worker()], inspect, projectAgentDir: false });
    await runtime.run('worker', 'Task');
    await runtime.shutdown();
    expect(context).toEqual({
      logic: { agent: 'agent', group: 'group' },
      maxParallel: 5,
      agents: { agents: 1, active: 0, running: 0, queued: 0 },
      postOffice: { mailboxes: 0, topics: 0 },
      inspected: true,
      wakeLine: { inLine: 0 }, // the receivers waiting to be woken, as a count
    });
  });
});
