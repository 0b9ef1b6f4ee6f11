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
  plannerSpeed(batches >= 100 ? [1_000, 10_000] : [100, 1_000]);
}

/**
 * One turn of n calls: a fan-out of sub-agent calls (reads, a write every 50th), or file calls with targets (with
 * `globs`, every tenth a glob such as `src/part3/**\/*.ts`).
 */
function wideTurn(n: number, targeted: boolean, globs = false): PlannedCall[] {
  return Array.from({ length: n }, (_, i) => {
    const kind = i % 50 === 49 ? 'write' : 'read';
    if (!targeted) return { kind };
    return { kind, targets: [globs && i % 10 === 0 ? `src/part${i % 40}/**/*.ts` : `src/part${i % 40}/file${i % 7}.ts`] };
  });
}

/** µs the planner takes per call for one turn of n calls, untargeted (O(n)) and with targets (pairwise). */
function plannerSpeed(sizes: readonly number[]): void {
  const perCall = (calls: PlannedCall[]) => {
    for (let r = 0; r < 3; r++) schedule(calls); // warm
    // Enough runs for 200 ms: one untargeted turn takes well under a millisecond.
    let runs = 0;
    const started = performance.now();
    while (performance.now() - started < 200) {
      schedule(calls);
      runs += 1;
    }
    return ((performance.now() - started) * 1000) / runs / calls.length;
  };
  const untargeted = sizes.map((n) => perCall(wideTurn(n, false)));
  sizes.forEach((n, index) => {
    const targeted = perCall(wideTurn(n, true));
    const globbed = perCall(wideTurn(n, true, true));
    report({
      bench: 'planner',
      name: `µs per call, one turn of ${n} calls without targets`,
      value: untargeted[index]!,
      unit: 'µs',
      detail: { withTargetsUs: Number(targeted.toFixed(3)), withGlobsUs: Number(globbed.toFixed(3)) },
    });
  });
  const growth = untargeted[untargeted.length - 1]! / untargeted[0]!;
  report({
    bench: 'planner',
    name: `growth of µs per untargeted call, ${sizes[0]} → ${sizes[sizes.length - 1]} calls`,
    value: growth,
    unit: '×',
    target: 'linear (at most 1.2×)',
    pass: growth <= 1.2,
  });
}
