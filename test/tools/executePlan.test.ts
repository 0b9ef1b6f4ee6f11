import fc from 'fast-check';
import { describe, expect, it, vi } from 'vitest';
import { ConfigurationError } from '../../src/errors.js';
import { callsArbitrary } from '../support/plannedCalls.js';
import { CALLS_STARTED_TOGETHER, executePlan } from '../../src/tools/executePlan.js';
import { schedule, type PlannedCall, type ToolPlan } from '../../src/tools/schedule.js';

/** Lets every pending promise reaction run; a fixed number of microtask turns, no timers. */
async function flush(): Promise<void> {
  for (let turn = 0; turn < 20; turn++) await Promise.resolve();
}

interface Deferred {
  promise: Promise<void>;
  resolve: () => void;
  reject: (error: unknown) => void;
}

function deferred(): Deferred {
  let resolve!: () => void;
  let reject!: (error: unknown) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** A `run` whose calls stay pending until the test settles them by index (`finish` fulfils some, then flushes). */
function controlledRun() {
  const started: number[] = [];
  const calls = new Map<number, Deferred>();
  const run = (index: number): Promise<void> => {
    started.push(index);
    const call = deferred();
    calls.set(index, call);
    return call.promise;
  };
  const finish = async (...indexes: number[]): Promise<void> => {
    for (const index of indexes) calls.get(index)?.resolve();
    await flush();
  };
  return { run, started, calls, finish };
}

/** Tracks whether the promise has settled, to check it at quiescent points. */
function track(promise: Promise<void>): { readonly done: boolean } {
  const state = { done: false };
  void promise.then(() => (state.done = true));
  return state;
}

const plan = (dependsOn: number[][]): ToolPlan => ({ dependsOn, stages: [] });

describe('executePlan', () => {
  it('resolves at once for an empty plan', async () => {
    const run = vi.fn(async () => {});
    await executePlan(plan([]), run, {});
    expect(run).not.toHaveBeenCalled();
  });

  it('starts every independent call when there is no limit: a wave at once, each next a microtask later', async () => {
    const { run, started, calls } = controlledRun();
    const wave = Array.from({ length: CALLS_STARTED_TOGETHER }, (_, index) => index);
    const done = executePlan(plan(Array.from({ length: CALLS_STARTED_TOGETHER + 2 }, () => [])), run, {});
    expect(started).toEqual(wave);
    await Promise.resolve();
    expect(started).toEqual([...wave, CALLS_STARTED_TOGETHER]);
    await Promise.resolve();
    expect(started).toEqual([...wave, CALLS_STARTED_TOGETHER, CALLS_STARTED_TOGETHER + 1]); // none has settled: all run at once
    for (const call of calls.values()) call.resolve();
    await done;
  });

  it('runs a plan of several waves in index order, each call once, up to its limit at a time', async () => {
    const n = CALLS_STARTED_TOGETHER * 3 + 5;
    const order: number[] = [];
    let running = 0;
    let most = 0;
    const run = async (index: number): Promise<void> => {
      order.push(index);
      most = Math.max(most, ++running);
      await flush();
      running--;
    };
    await executePlan(plan(Array.from({ length: n }, () => [])), run, { maxConcurrency: CALLS_STARTED_TOGETHER * 2 });
    expect(order).toEqual(Array.from({ length: n }, (_, index) => index));
    expect(most).toBeGreaterThanOrEqual(CALLS_STARTED_TOGETHER);
    expect(most).toBeLessThanOrEqual(CALLS_STARTED_TOGETHER * 2);
  });

  it('hears a call that returns nothing settle when it calls back, in a chain, a free plan and a graph', async () => {
    for (const dependsOn of [[[], [0], [1]], [[], [], []], [[], [0], [0], [1, 2]]]) {
      const started: number[] = [];
      const callbacks = new Map<number, () => void>();
      const state = track(
        executePlan(plan(dependsOn), (index, settled) => {
          started.push(index);
          callbacks.set(index, settled);
        }),
      );
      await flush();
      const first = [...started];
      expect(first.length).toBeGreaterThan(0);
      expect(state.done).toBe(false); // nothing settles a call but its callback
      for (let index = 0; index < dependsOn.length; index++) {
        await flush();
        expect(started).toContain(index); // started once what it waits for called back
        callbacks.get(index)!();
      }
      await flush();
      expect(started.toSorted((a, b) => a - b)).toEqual(dependsOn.map((_, index) => index));
      expect(state.done).toBe(true);
    }
  });

  it('starts a call only once its dependencies have settled', async () => {
    const { run, started, finish } = controlledRun();
    const state = track(executePlan(plan([[], [], [0, 1]]), run, {}));
    await flush();
    expect(started).toEqual([0, 1]);
    await finish(0);
    expect(started).toEqual([0, 1]);
    await finish(1);
    expect(started).toEqual([0, 1, 2]);
    expect(state.done).toBe(false);
    await finish(2);
    expect(state.done).toBe(true);
  });

  it('follows dependencies in any direction, not only backwards', async () => {
    const { run, started, calls } = controlledRun();
    const done = executePlan(plan([[1], []]), run, {});
    expect(started).toEqual([1]);
    calls.get(1)?.resolve();
    await flush();
    expect(started).toEqual([1, 0]);
    calls.get(0)?.resolve();
    await done;
  });

  it('does not let a failed call block the calls after it, and still resolves', async () => {
    const started: number[] = [];
    const run = (index: number): Promise<void> => {
      started.push(index);
      if (index === 0) return Promise.reject(new Error('boom'));
      if (index === 1) throw new Error('thrown synchronously');
      return Promise.resolve();
    };
    await expect(executePlan(plan([[], [0], [1]]), run, {})).resolves.toBeUndefined();
    expect(started).toEqual([0, 1, 2]);
  });

  it('never runs more than maxConcurrency calls and starts ready calls in index order', async () => {
    const { run, started, calls } = controlledRun();
    const done = executePlan(plan([[], [], [], [], []]), run, { maxConcurrency: 2 });
    await flush();
    expect(started).toEqual([0, 1]);
    calls.get(1)?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2]);
    calls.get(0)?.resolve();
    calls.get(2)?.resolve();
    await flush();
    expect(started).toEqual([0, 1, 2, 3, 4]);
    calls.get(3)?.resolve();
    calls.get(4)?.resolve();
    await done;
  });

  it('prefers a lower index that becomes ready later over a higher one already waiting', async () => {
    const { run, started, calls } = controlledRun();
    // 0 and 3 are ready; 1 and 2 wait for 0. With one slot: 0, then 1 (ready after 0), 2, 3.
    const done = executePlan(plan([[], [0], [0], []]), run, { maxConcurrency: 1 });
    for (const expected of [0, 1, 2, 3]) {
      await flush();
      expect(started.at(-1)).toBe(expected);
      calls.get(expected)?.resolve();
    }
    await done;
    expect(started).toEqual([0, 1, 2, 3]);
  });

  it('rounds a fractional maxConcurrency down', async () => {
    const { run, started, calls } = controlledRun();
    const done = executePlan(plan([[], [], []]), run, { maxConcurrency: 2.5 });
    await flush();
    expect(started).toEqual([0, 1]);
    for (let i = 0; i < 3; i++) {
      calls.get(i)?.resolve();
      await flush();
    }
    await done;
    expect(started).toEqual([0, 1, 2]);
  });

  it('starts nothing when the signal is already aborted', async () => {
    const run = vi.fn(async () => {});
    await executePlan(plan([[], []]), run, { signal: AbortSignal.abort() });
    expect(run).not.toHaveBeenCalled();
  });

  it('starts nothing new once aborted, and resolves when the running calls settle', async () => {
    const { run, started, calls } = controlledRun();
    const controller = new AbortController();
    const state = track(executePlan(plan([[], [], [0], [1]]), run, { signal: controller.signal }));
    await flush();
    expect(started).toEqual([0, 1]);
    controller.abort();
    calls.get(0)?.resolve();
    await flush();
    expect(started).toEqual([0, 1]);
    expect(state.done).toBe(false);
    calls.get(1)?.resolve();
    await flush();
    expect(state.done).toBe(true);
    expect(started).toEqual([0, 1]);
  });

  it('starts nothing new once aborted when no call waits for another, and resolves when the running ones settle', async () => {
    const { run, started, finish } = controlledRun();
    const controller = new AbortController();
    const state = track(executePlan(plan([[], [], [], []]), run, { maxConcurrency: 2, signal: controller.signal }));
    await flush();
    expect(started).toEqual([0, 1]);
    await finish(0);
    expect(started).toEqual([0, 1, 2]);
    controller.abort();
    await finish(1);
    expect(started).toEqual([0, 1, 2]);
    expect(state.done).toBe(false);
    await finish(2);
    expect(state.done).toBe(true);
  });

  it('starts nothing more once aborted between two paced starts', async () => {
    const { run, started, calls } = controlledRun();
    const controller = new AbortController();
    const state = track(executePlan(plan(Array.from({ length: CALLS_STARTED_TOGETHER + 3 }, () => [])), run, { signal: controller.signal }));
    expect(started).toHaveLength(CALLS_STARTED_TOGETHER);
    controller.abort();
    await flush();
    expect(started).toHaveLength(CALLS_STARTED_TOGETHER);
    for (const call of calls.values()) call.resolve();
    await flush();
    expect(state.done).toBe(true);
    expect(started).toHaveLength(CALLS_STARTED_TOGETHER);
  });

  it('runs every call of a plan without dependencies once, however many fail', async () => {
    const ran: number[] = [];
    const run = async (index: number) => {
      ran.push(index);
      if (index % 3 === 0) throw new Error(`call ${index} failed`);
    };
    await executePlan(plan(Array.from({ length: 10 }, () => [])), run, { maxConcurrency: 3 });
    expect(ran).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it.each([0, -1, 0.5, Number.NaN])('rejects maxConcurrency %s before starting anything', async (maxConcurrency) => {
    const run = vi.fn(async () => {});
    await expect(executePlan(plan([[]]), run, { maxConcurrency })).rejects.toBeInstanceOf(ConfigurationError);
    expect(run).not.toHaveBeenCalled();
  });

  it.each([
    ['a cycle', [[1], [0]]],
    ['a self-dependency', [[0]]],
    ['a missing call', [[], [2]]],
    ['a fractional index', [[], [0.5]]],
  ])('rejects a plan with %s before starting anything', async (_name, dependsOn) => {
    const run = vi.fn(async () => {});
    await expect(executePlan(plan(dependsOn), run, {})).rejects.toBeInstanceOf(ConfigurationError);
    expect(run).not.toHaveBeenCalled();
  });
});

/* ---------------------------------------------------------------- properties */


/** An independent statement of the conflict rules: targets as path segments, one list a prefix of the other. */
function conflict(a: PlannedCall, b: PlannedCall): boolean {
  if (a.kind === 'read' && b.kind === 'read') return false;
  if (a.targets === undefined || b.targets === undefined) return true;
  const segments = (target: string): string[] => target.replace(/\/+$/, '').split('/');
  const overlap = (x: string[], y: string[]): boolean => {
    const [short, long] = x.length <= y.length ? [x, y] : [y, x];
    return short.every((segment, i) => segment === long[i]);
  };
  return a.targets.some((x) => (b.targets ?? []).some((y) => overlap(segments(x), segments(y))));
}

type Outcome = 'ok' | 'reject' | 'throw';

interface Scenario {
  calls: PlannedCall[];
  /** Virtual durations: the fake settles the running call that would end first (ties by index). */
  durations: number[];
  outcomes: Outcome[];
  maxConcurrency: number | undefined;
  /** Abort after this many calls have settled, if set. */
  abortAfter: number | undefined;
}

const scenarioArbitrary: fc.Arbitrary<Scenario> = callsArbitrary()
  .chain((calls) => {
    const perCall = <T>(item: fc.Arbitrary<T>): fc.Arbitrary<T[]> =>
      fc.array(item, { minLength: calls.length, maxLength: calls.length });
    return fc.record({
      calls: fc.constant(calls),
      durations: perCall(fc.integer({ min: 1, max: 6 })),
      outcomes: perCall(fc.constantFrom<Outcome>('ok', 'ok', 'ok', 'reject', 'throw')),
      maxConcurrency: fc.option(fc.integer({ min: 1, max: 4 }), { nil: undefined }),
      abortAfter: fc.option(fc.nat({ max: calls.length }), { nil: undefined, freq: 3 }),
    });
  });

interface Report {
  violations: string[];
  starts: number[];
  aborted: boolean;
}

/**
 * Runs a scenario's plan through executePlan with a fake `run`: virtual time, no timers. At every quiescent
 * point the fake settles the running call that ends first, and it checks the invariants as it goes.
 */
async function simulate(scenario: Scenario): Promise<Report> {
  const { calls, durations, outcomes, maxConcurrency, abortAfter } = scenario;
  const { dependsOn } = schedule(calls);
  const cap = maxConcurrency ?? Infinity;
  const controller = new AbortController();
  const running = new Map<number, { end: number; call: Deferred }>();
  const settled = new Set<number>();
  const starts: number[] = [];
  const violations: string[] = [];
  let now = 0;
  let startedThisStep: number[] = [];
  let threwThisStep = false;

  const run = (index: number): Promise<void> => {
    starts.push(index);
    startedThisStep.push(index);
    if (controller.signal.aborted) violations.push(`${index} started after the abort`);
    for (const dep of dependsOn[index] ?? []) {
      if (!settled.has(dep)) violations.push(`${index} started before its dependency ${dep} settled`);
    }
    for (const other of running.keys()) {
      if (conflict(calls[other] as PlannedCall, calls[index] as PlannedCall)) {
        violations.push(`${index} started while the conflicting ${other} was running`);
      }
    }
    if (outcomes[index] === 'throw') {
      settled.add(index);
      threwThisStep = true;
      throw new Error(`call ${index} throws`);
    }
    const call = deferred();
    running.set(index, { end: now + (durations[index] ?? 1), call });
    if (running.size > cap) violations.push(`${running.size} calls running, over the limit of ${cap}`);
    return call.promise;
  };

  const execution = executePlan({ dependsOn, stages: [] }, run, { maxConcurrency, signal: controller.signal });
  const state = track(execution);
  if (abortAfter === 0) controller.abort();

  for (;;) {
    await flush();
    if (state.done && running.size > 0) violations.push('resolved while calls were still running');
    if (!controller.signal.aborted) checkGreedy();
    startedThisStep = [];
    threwThisStep = false;
    const next = firstToEnd();
    if (next === undefined) break;
    const entry = running.get(next) as { end: number; call: Deferred };
    running.delete(next);
    settled.add(next);
    now = entry.end;
    if (outcomes[next] === 'reject') entry.call.reject(new Error(`call ${next} fails`));
    else entry.call.resolve();
    if (abortAfter !== undefined && settled.size >= abortAfter) controller.abort();
  }
  await execution;
  if (!state.done) violations.push('did not resolve');
  return { violations, starts, aborted: controller.signal.aborted };

  /**
   * A ready call may only wait for a free slot, and then only behind calls of lower index. (A call that throws
   * at once settles within the step and may let a lower index become ready late, so the order is then not checked.)
   */
  function checkGreedy(): void {
    const waiting = calls
      .map((_, index) => index)
      .filter((index) => !starts.includes(index) && (dependsOn[index] ?? []).every((dep) => settled.has(dep)));
    if (waiting.length > 0 && running.size < cap) violations.push(`${waiting.join(', ')} ready but not started`);
    if (threwThisStep) return;
    const lowestWaiting = Math.min(...waiting);
    for (const index of startedThisStep) {
      if (index > lowestWaiting) violations.push(`${index} started before the lower ready ${lowestWaiting}`);
    }
  }

  function firstToEnd(): number | undefined {
    let best: number | undefined;
    for (const [index, { end }] of running) {
      const bestEnd = best === undefined ? Infinity : (running.get(best)?.end ?? Infinity);
      if (end < bestEnd || (end === bestEnd && best !== undefined && index < best)) best = index;
    }
    return best;
  }
}

describe('executePlan properties', () => {
  it('never runs conflicting calls together, never exceeds the limit, and runs every call exactly once', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const report = await simulate(scenario);
        expect(report.violations).toEqual([]);
        const counts = new Map<number, number>();
        for (const index of report.starts) counts.set(index, (counts.get(index) ?? 0) + 1);
        for (const count of counts.values()) expect(count).toBe(1);
        if (!report.aborted) expect(report.starts.toSorted((a, b) => a - b)).toEqual(scenario.calls.map((_, i) => i));
      }),
      { numRuns: 300 },
    );
  });

  it('runs every call exactly once when nothing aborts, whatever fails', async () => {
    await fc.assert(
      fc.asyncProperty(scenarioArbitrary, async (scenario) => {
        const report = await simulate({ ...scenario, abortAfter: undefined });
        expect(report.violations).toEqual([]);
        expect(report.starts.toSorted((a, b) => a - b)).toEqual(scenario.calls.map((_, i) => i));
      }),
      { numRuns: 200 },
    );
  });
});
