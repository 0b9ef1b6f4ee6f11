// Planner: the makespan of random tool batches run by the planner and executor, against the lower bound (the
// longest dependency chain, or the total work divided by the concurrency cap, whichever is larger).
import { SimulatedClock } from 'xstate';
import { RuntimeClock, schedule, sleep, type PlannedCall } from 'troupe';
import { executePlan } from '../src/tools/executePlan.js';
import { advanceUntilSettled } from 'troupe/testing';
import { report, seeded } from './measure.js';

const PATHS = ['src/a.ts', 'src/b.ts', 'src/lib/c.ts', 'docs', 'docs/x.md', 'README.md'];

function randomBatch(random: () => number): { calls: PlannedCall[]; durations: number[] } {
  const size = 5 + Math.floor(random() * 36);
  const calls: PlannedCall[] = [];
  const durations: number[] = [];
  for (let i = 0; i < size; i++) {
    const roll = random();
    const kind = roll < 0.6 ? 'read' : roll < 0.9 ? 'write' : 'other';
    const targets =
      random() < 0.1 ? undefined : Array.from({ length: Math.floor(random() * 3) }, () => PATHS[Math.floor(random() * PATHS.length)]!);
    calls.push(targets === undefined ? { kind } : { kind, targets });
    durations.push(1 + Math.floor(random() * 100));
  }
  return { calls, durations };
}

/** The longest chain of durations through the dependency graph. */
function criticalPath(dependsOn: readonly (readonly number[])[], durations: readonly number[]): number {
  const finish: number[] = [];
  dependsOn.forEach((deps, index) => {
    finish[index] = durations[index]! + Math.max(0, ...deps.map((dep) => finish[dep]!));
  });
  return Math.max(0, ...finish);
}

export async function planner(batches: number): Promise<void> {
  for (const cap of [Infinity, 3]) {
    const random = seeded(42);
    let sum = 0;
    let worst = 0;
    for (let b = 0; b < batches; b++) {
      const { calls, durations } = randomBatch(random);
      const plan = schedule(calls);
      const clock = new SimulatedClock();
      const timers = new RuntimeClock(clock); // troupe's clock: advanceUntilSettled sees the timers set through it
      const run = executePlan(plan, (index) => sleep(timers, durations[index]!), cap === Infinity ? {} : { maxConcurrency: cap });
      await advanceUntilSettled(clock, run);
      const total = durations.reduce((a, d) => a + d, 0);
      const bound = Math.max(criticalPath(plan.dependsOn, durations), cap === Infinity ? 0 : total / cap);
      const ratio = clock.now() / bound;
      sum += ratio;
      worst = Math.max(worst, ratio);
    }
    report({
      bench: 'planner',
      name: `makespan / lower bound, ${batches} random batches, ${cap === Infinity ? 'no cap' : `cap ${cap}`}`,
      value: sum / batches,
      unit: '× bound (mean)',
      detail: { worst: Number(worst.toFixed(3)) },
      ...(cap === Infinity ? { target: 'exactly the critical path without a cap', pass: Math.abs(worst - 1) < 1e-9 } : {}),
    });
  }
}
