// The planner and executePlan together, as a turn runs its calls: random batches over paths, directories, globs and
// keys, each call taking a random number of ticks, checked against an oracle that knows nothing of the planner: two
// calls truly conflict when one is not a read and some concrete path (from a fixed universe) is named by both.
import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { executePlan } from '../../src/tools/executePlan.js';
import { callsConflict, schedule, type PlannedCall } from '../../src/tools/schedule.js';
import { globCallsArbitrary } from '../support/plannedCalls.js';

/** Concrete things a target may name: files, folders' files, look-alikes, absolute paths and keys. */
const UNIVERSE = [
  ...['src/a.ts', 'src/b.ts', 'src/x.md', 'src/lib/c.ts', 'src/lib/d.md', 'src/lib/deep/e.ts'],
  ...['srcx', 'srcx/a.ts', 'docs/x.md', 'docs/y/z.md', 'a.md', '/etc/hosts', '/etc'],
  ...['blackboard:plan', 'blackboard:notes', 'table:orders'],
];

/** The things of the universe a target names: a glob what it matches, a path itself and everything below it. */
function named(target: string): Set<string> {
  const trimmed = target === '/' ? '/' : target.replace(/\/+$/, '');
  const glob = picomatch.scan(trimmed).isGlob;
  const matches = glob ? picomatch(trimmed, { dot: true }) : undefined;
  return new Set(
    UNIVERSE.filter((thing) =>
      matches
        ? matches(thing) || thing.split('/').some((_, i, parts) => matches(parts.slice(0, i + 1).join('/')))
        : thing === trimmed || thing.startsWith(trimmed === '/' ? '/' : `${trimmed}/`),
    ),
  );
}

/** True when the two calls must not overlap in time: one writes (or is other) and they may touch a common thing. */
function trulyConflict(a: PlannedCall, b: PlannedCall): boolean {
  if (a.kind === 'read' && b.kind === 'read') return false;
  if (a.targets === undefined || b.targets === undefined) return true;
  return a.targets.some((x) => {
    const mine = named(x);
    return b.targets!.some((y) => [...named(y)].some((thing) => mine.has(thing)));
  });
}

/** Runs a batch as a turn would, each call `ticks[i]` microtask turns long; the start and end tick of each call. */
async function runBatch(calls: readonly PlannedCall[], ticks: readonly number[], maxConcurrency?: number) {
  let clock = 0;
  const spans: { start: number; end: number; runs: number }[] = calls.map(() => ({ start: -1, end: -1, runs: 0 }));
  await executePlan(
    schedule(calls),
    async (index) => {
      const span = spans[index]!;
      span.runs += 1;
      span.start = clock++;
      for (let tick = 0; tick < (ticks[index] ?? 0); tick++) await Promise.resolve();
      span.end = clock++;
    },
    { maxConcurrency },
  );
  return spans;
}

describe('a planned turn, run', () => {
  it('runs every call once, never two truly conflicting calls at once, and conflicting calls in the model’s order', async () => {
    await fc.assert(
      fc.asyncProperty(
        globCallsArbitrary(12),
        fc.array(fc.nat(4), { minLength: 12, maxLength: 12 }),
        fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
        async (calls, ticks, cap) => {
          const spans = await runBatch(calls, ticks, cap);
          expect(spans.map((span) => span.runs)).toEqual(calls.map(() => 1));
          calls.forEach((later, j) => {
            for (let i = 0; i < j; i++) {
              if (!trulyConflict(calls[i]!, later)) continue;
              // The earlier call ended before the later one started: not at once, and in order.
              expect(spans[i]!.end, `call ${i} ends before call ${j} starts`).toBeLessThan(spans[j]!.start);
            }
          });
        },
      ),
      { numRuns: 300 },
    );
  });

  it('never misses a true conflict, and with no cap stages the longest chain of conflicts the oracle sees wherever it agrees', () => {
    fc.assert(
      fc.property(globCallsArbitrary(10), (calls) => {
        const { stages } = schedule(calls);
        let agrees = true;
        const depth: number[] = [];
        calls.forEach((call, j) => {
          for (let i = 0; i < j; i++) {
            const truly = trulyConflict(calls[i]!, call);
            const planned = callsConflict(calls[i]!, call);
            if (truly) expect(planned, `the planner orders ${i} and ${j}`).toBe(true); // conservative: never misses one
            if (truly !== planned) agrees = false;
          }
          depth[j] = 1 + Math.max(0, ...calls.slice(0, j).flatMap((earlier, i) => (trulyConflict(earlier, call) ? [depth[i]!] : [])));
        });
        const longest = Math.max(0, ...depth);
        // Where it must guess (two globs it cannot tell apart) it may order more, never less.
        if (agrees) expect(stages).toHaveLength(longest);
        else expect(stages.length).toBeGreaterThanOrEqual(longest);
      }),
      { numRuns: 500 },
    );
  });
});
