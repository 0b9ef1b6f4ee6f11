import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { callsArbitrary, globCallsArbitrary, untargetedCallsArbitrary } from '../support/plannedCalls.js';
import { callsConflict, pairwiseDependencies, schedule, targetsOverlap, type PlannedCall } from '../../src/tools/schedule.js';

const read = (...targets: string[]): PlannedCall => ({ kind: 'read', targets });
const write = (...targets: string[]): PlannedCall => ({ kind: 'write', targets });
const other = (...targets: string[]): PlannedCall => ({ kind: 'other', targets });

describe('targetsOverlap', () => {
  it('matches equal targets, ignoring trailing slashes', () => {
    expect(targetsOverlap('a.ts', 'a.ts')).toBe(true);
    expect(targetsOverlap('src/', 'src')).toBe(true);
    expect(targetsOverlap('src//', 'src/')).toBe(true);
    expect(targetsOverlap('a.ts', 'b.ts')).toBe(false);
  });

  it('matches a path prefix only at a "/" boundary, in either order', () => {
    expect(targetsOverlap('src', 'src/a.ts')).toBe(true);
    expect(targetsOverlap('src/a.ts', 'src')).toBe(true);
    expect(targetsOverlap('src/', 'src/lib/a.ts')).toBe(true);
    expect(targetsOverlap('src', 'srcx')).toBe(false);
    expect(targetsOverlap('src', 'srcx/a.ts')).toBe(false);
    expect(targetsOverlap('src/a', 'src/ab')).toBe(false);
  });

  it('treats "/" as the root of every absolute path', () => {
    expect(targetsOverlap('/', '/etc/hosts')).toBe(true);
    expect(targetsOverlap('/etc/', '/etc/hosts')).toBe(true);
    expect(targetsOverlap('/', 'relative.ts')).toBe(false);
  });

  it('matches the empty string only with itself', () => {
    expect(targetsOverlap('', '')).toBe(true);
    expect(targetsOverlap('', '/a')).toBe(false);
    expect(targetsOverlap('', 'a')).toBe(false);
  });
});

describe('callsConflict', () => {
  it('never orders two reads, whatever their targets', () => {
    expect(callsConflict(read('a'), read('a'))).toBe(false);
    expect(callsConflict({ kind: 'read' }, { kind: 'read' })).toBe(false);
  });

  it('orders a read with unknown targets after any non-read', () => {
    expect(callsConflict({ kind: 'read' }, write('a'))).toBe(true);
    expect(callsConflict(other(), { kind: 'read' })).toBe(true);
  });
});

describe('schedule', () => {
  it('returns an empty plan for no calls', () => {
    expect(schedule([])).toEqual({ dependsOn: [], stages: [] });
  });

  it('runs reads in parallel, even of the same file or unknown targets', () => {
    const plan = schedule([read('a.ts'), read('a.ts'), { kind: 'read' }, read('src')]);
    expect(plan).toEqual({ dependsOn: [[], [], [], []], stages: [[0, 1, 2, 3]] });
  });

  it('orders two writes to the same file', () => {
    expect(schedule([write('a.ts'), write('a.ts')])).toEqual({ dependsOn: [[], [0]], stages: [[0], [1]] });
  });

  it('runs writes to different files in parallel', () => {
    expect(schedule([write('a.ts'), other('b.ts'), write('c.ts')])).toEqual({
      dependsOn: [[], [], []],
      stages: [[0, 1, 2]],
    });
  });

  it('orders a read after an earlier write of the same file, and a write after an earlier read', () => {
    expect(schedule([write('a.ts'), read('a.ts'), write('a.ts')]).dependsOn).toEqual([[], [0], [1]]);
  });

  it('treats a non-read with unknown targets as a barrier', () => {
    const plan = schedule([read('a'), write('b'), { kind: 'other' }, read('c'), write('d')]);
    expect(plan.dependsOn).toEqual([[], [], [0, 1], [2], [2]]);
    expect(plan.stages).toEqual([[0, 1], [2], [3, 4]]);
  });

  it('lets reads with unknown targets share a stage but orders them around writes', () => {
    const plan = schedule([{ kind: 'read' }, read('x'), write('a'), { kind: 'read' }]);
    expect(plan.dependsOn).toEqual([[], [], [0], [2]]);
    expect(plan.stages).toEqual([[0, 1], [2], [3]]);
  });

  it('orders calls whose targets overlap by prefix, but not by a mere string prefix', () => {
    const plan = schedule([write('src/a.ts'), write('srcx/b.ts'), other('src/'), read('src/lib/c.ts')]);
    expect(plan.dependsOn).toEqual([[], [], [0], [2]]);
  });

  it('orders a call whose targets overlap through any one of its targets', () => {
    expect(schedule([write('a', 'b'), write('c', 'b/d.ts')]).dependsOn).toEqual([[], [0]]);
  });

  it('lets a call with an empty target list run with anything but an unknown-target non-read', () => {
    expect(schedule([write('a'), write(), { kind: 'write' }, write()]).dependsOn).toEqual([[], [], [0, 1], [2]]);
  });

  it('keeps only the dependencies not implied by another one', () => {
    const plan = schedule([write('a'), write('a'), write('a'), read('a')]);
    expect(plan.dependsOn).toEqual([[], [0], [1], [2]]);
    expect(plan.stages).toEqual([[0], [1], [2], [3]]);
  });

  it('stages a mixed batch by the longest chain before each call', () => {
    const plan = schedule([
      read('src/a.ts'), // 0
      read('src/b.ts'), // 1
      write('src/a.ts'), // 2 after 0
      write('docs/x.md'), // 3
      read('src/a.ts'), // 4 after 2
      other('src'), // 5 after 1, 2, 4 (2 through 4)
      read('docs'), // 6 after 3
    ]);
    expect(plan.dependsOn).toEqual([[], [], [0], [], [2], [1, 4], [3]]);
    expect(plan.stages).toEqual([[0, 1, 3], [2, 6], [4], [5]]);
  });
});

/* ---------------------------------------------------------------- properties */

/** An independent statement of the rules: targets as lists of path segments, one a prefix of the other. */
function oracleOverlap(a: string, b: string): boolean {
  const segments = (target: string): string[] => target.replace(/\/+$/, '').split('/');
  const [x, y] = [segments(a), segments(b)];
  const [short, long] = x.length <= y.length ? [x, y] : [y, x];
  return short.every((segment, i) => segment === long[i]);
}

function oracleConflict(a: PlannedCall, b: PlannedCall): boolean {
  if (a.kind === 'read' && b.kind === 'read') return false;
  if (a.targets === undefined || b.targets === undefined) return true;
  return a.targets.some((x) => (b.targets ?? []).some((y) => oracleOverlap(x, y)));
}

/** For each call, the set of calls it waits for, directly or not. */
function ancestors(dependsOn: readonly (readonly number[])[]): Set<number>[] {
  const result: Set<number>[] = [];
  dependsOn.forEach((deps, j) => {
    const mine = new Set<number>();
    for (const d of deps) {
      mine.add(d);
      for (const a of result[d] ?? []) mine.add(a);
    }
    result[j] = mine;
  });
  return result;
}

describe('schedule properties', () => {
  it('targetsOverlap agrees with the segment-prefix rule and is symmetric', () => {
    const segment = fc.constantFrom('a', 'ab', 'b', 'src', '');
    const target = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
    fc.assert(
      fc.property(target, target, (a, b) => {
        fc.pre(a.replace(/\/+$/, '') !== '' && b.replace(/\/+$/, '') !== '');
        expect(targetsOverlap(a, b)).toBe(oracleOverlap(a, b));
        expect(targetsOverlap(b, a)).toBe(targetsOverlap(a, b));
      }),
    );
  });

  it('makes every later call of a conflicting pair reachable from the earlier one', () => {
    fc.assert(
      fc.property(callsArbitrary(), (calls) => {
        const reach = ancestors(schedule(calls).dependsOn);
        calls.forEach((later, j) => {
          for (let i = 0; i < j; i++) {
            if (oracleConflict(calls[i] as PlannedCall, later)) expect(reach[j]?.has(i), `${i} -> ${j}`).toBe(true);
          }
        });
      }),
    );
  });

  it('only points backwards, to conflicting calls, in ascending order, with no implied edges', () => {
    fc.assert(
      fc.property(callsArbitrary(), (calls) => {
        const { dependsOn } = schedule(calls);
        expect(dependsOn).toHaveLength(calls.length);
        const reach = ancestors(dependsOn);
        dependsOn.forEach((deps, j) => {
          expect(deps).toEqual([...new Set(deps)].sort((x, y) => x - y));
          for (const d of deps) {
            expect(d).toBeGreaterThanOrEqual(0);
            expect(d).toBeLessThan(j);
            expect(oracleConflict(calls[d] as PlannedCall, calls[j] as PlannedCall)).toBe(true);
            expect(deps.some((other) => other !== d && reach[other]?.has(d))).toBe(false);
          }
        });
      }),
    );
  });

  it('stages every call once, one past its deepest dependency', () => {
    fc.assert(
      fc.property(callsArbitrary(), (calls) => {
        const { dependsOn, stages } = schedule(calls);
        const stageOf = new Map<number, number>();
        stages.forEach((stage, s) => {
          expect(stage.length).toBeGreaterThan(0);
          expect(stage).toEqual([...stage].sort((x, y) => x - y));
          for (const i of stage) stageOf.set(i, s);
        });
        expect([...stageOf.keys()].sort((x, y) => x - y)).toEqual(calls.map((_, i) => i));
        dependsOn.forEach((deps, i) => {
          expect(stageOf.get(i)).toBe(Math.max(-1, ...deps.map((d) => stageOf.get(d) ?? NaN)) + 1);
        });
      }),
    );
  });

  it('plans a batch without targets (or of reads only) in O(n) exactly as the pairwise reference does', () => {
    fc.assert(
      fc.property(untargetedCallsArbitrary(), (calls) => {
        expect(schedule(calls).dependsOn).toEqual(pairwiseDependencies(calls));
        const reads = calls.map((call) => ({ ...call, kind: 'read' as const }));
        expect(schedule(reads).dependsOn).toEqual(pairwiseDependencies(reads));
      }),
    );
  });

  it('plans 3,000 untargeted calls as the pairwise reference does: reads between barriers, barriers after them', () => {
    const calls: PlannedCall[] = Array.from({ length: 3_000 }, (_, i) => ({ kind: i % 97 === 0 || i % 89 === 0 ? 'write' : 'read' }));
    const { dependsOn, stages } = schedule(calls);
    expect(dependsOn).toEqual(pairwiseDependencies(calls));
    expect(dependsOn[96]).toEqual([89]); // the read after the barrier at 89
    expect(dependsOn[97]).toEqual([90, 91, 92, 93, 94, 95, 96]); // the barrier after the reads since 89
    expect(stages.flat().sort((a, b) => a - b)).toEqual(calls.map((_, i) => i));
  });

  it('plans a few hundred calls', () => {
    const calls: PlannedCall[] = Array.from({ length: 400 }, (_, i) =>
      i % 50 === 49 ? { kind: 'other' } : i % 3 === 0 ? read(`f${i % 7}`) : write(`f${i % 7}`, `d/${i % 11}`),
    );
    const { dependsOn, stages } = schedule(calls);
    expect(dependsOn).toHaveLength(400);
    expect(stages.flat()).toHaveLength(400);
  });
});

/* ------------------------------------------------------------- globs and keys (the properties) */

/** The length (in calls) of the longest chain of conflicting calls, each later in the batch than the one before. */
function longestConflictChain(calls: readonly PlannedCall[]): number {
  const chain: number[] = [];
  calls.forEach((call, j) => {
    let longest = 0;
    for (let i = 0; i < j; i++) if (callsConflict(calls[i] as PlannedCall, call)) longest = Math.max(longest, chain[i] ?? 0);
    chain[j] = longest + 1;
  });
  return Math.max(0, ...chain);
}

describe('schedule with globs and keys', () => {
  it('orders a glob write after the reads it can touch, and runs disjoint extensions side by side', () => {
    // src/a.ts may be a directory, so both globs wait for its read; the two globs share no path.
    const plan = schedule([read('src/a.ts'), read('docs/x.md'), write('src/**/*.ts'), write('src/**/*.md'), read('src/lib')]);
    expect(plan.dependsOn).toEqual([[], [], [0], [0], [2, 3]]);
    expect(plan.stages).toEqual([[0, 1], [2, 3], [4]]);
  });

  it('orders keys of one store, not keys of two', () => {
    expect(schedule([write('blackboard:plan'), read('blackboard:plan'), write('plan'), write('table:orders')]).dependsOn).toEqual([[], [0], [], []]);
  });

  it('runs no two conflicting calls at once, keeps their order, and stages the longest conflict chain', () => {
    fc.assert(
      fc.property(globCallsArbitrary(), (calls) => {
        const { dependsOn, stages } = schedule(calls);
        const reach = ancestors(dependsOn);
        calls.forEach((later, j) => {
          for (let i = 0; i < j; i++) {
            // Ordered, earlier first: never at once, and in the model's order.
            if (callsConflict(calls[i] as PlannedCall, later)) expect(reach[j]?.has(i), `${i} -> ${j}`).toBe(true);
          }
          for (const d of dependsOn[j] ?? []) expect(callsConflict(calls[d] as PlannedCall, later)).toBe(true);
        });
        expect(stages.flat().sort((x, y) => x - y)).toEqual(calls.map((_, i) => i)); // every call once
        expect(stages).toHaveLength(longestConflictChain(calls));
      }),
    );
  });

  it('plans a large batch with globs in the order the pairwise reference checks on small ones', () => {
    fc.assert(
      fc.property(globCallsArbitrary(30), (calls) => {
        expect(schedule(calls).dependsOn).toEqual(pairwiseDependencies(calls));
      }),
    );
    const targets = ['src/**/*.ts', 'docs/**', 'src/lib/a.ts', 'blackboard:plan', 'src/*.md'];
    const calls: PlannedCall[] = Array.from({ length: 2_000 }, (_, i) =>
      i % 9 === 0 ? write(targets[i % targets.length] as string) : read(targets[(i * 7) % targets.length] as string),
    );
    const { dependsOn, stages } = schedule(calls);
    expect(stages.flat()).toHaveLength(2_000);
    dependsOn.forEach((deps, j) => deps.forEach((d) => expect(callsConflict(calls[d] as PlannedCall, calls[j] as PlannedCall)).toBe(true)));
  });
});
