/**
 * Runs a {@link ToolPlan}: a greedy list scheduler that starts each call as soon as everything it depends on
 * has settled, up to a concurrency cap. With no cap, every call starts the moment its last dependency settles,
 * so the batch takes as long as its longest dependency chain.
 */
import { ConfigurationError } from '../errors.js';
import type { ToolPlan } from './schedule.js';

/**
 * Runs call `index`. It returns a promise that settles when the call has (its outcome is not read), or nothing, when it
 * calls `settled` itself, once, as the call settles (later, never before it has returned): a call whose end is already
 * a reaction of its own (the tool runner's) then costs no promise more to be heard.
 */
export type RunCall = (index: number, settled: () => void) => Promise<void> | void;

/** The options of {@link executePlan}. */
export interface ExecutePlanOptions {
  /** At most this many calls run at a time (rounded down; at least 1). Defaults to no limit. */
  maxConcurrency?: number | undefined;
  /** Once aborted, no further call is started; the calls already running are awaited. Only `aborted` is read. */
  signal?: Pick<AbortSignal, 'aborted'> | undefined;
}

/**
 * Runs every call of `plan` once through `run`, starting a call when all its dependencies have settled and a
 * slot is free; calls that are ready together start in index order. A dependency that fails (a `run` that
 * rejects or throws) still counts as settled, so it never blocks the calls after it, and the returned promise
 * still resolves: `run` is expected to turn failures into results itself.
 *
 * Once `options.signal` is aborted nothing new starts, and the promise resolves when the running calls settle.
 * Uses no timers. Only `plan.dependsOn` is read; `plan.stages` is for display.
 *
 * @throws ConfigurationError (as a rejection, before any call starts) when `maxConcurrency` is below 1 or not a
 * number, or when `plan.dependsOn` names a call that does not exist or has a cycle.
 */
export function executePlan(plan: ToolPlan, run: RunCall, options: ExecutePlanOptions = {}): Promise<void> {
  // Not an async function: a trader's turn of two calls made five promises in this file, most of them for awaits.
  try {
    const limit = concurrencyLimit(options.maxConcurrency);
    if (isChain(plan.dependsOn)) return runInTurn(plan.dependsOn.length, run, options.signal);
    if (isFree(plan.dependsOn)) return runFree(plan.dependsOn.length, run, limit, options.signal);
    return runGraph(plan.dependsOn, run, limit, options.signal);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** Runs calls as their dependencies settle (see {@link executePlan}), on a graph checked first. */
function runGraph(
  dependsOn: ToolPlan['dependsOn'],
  run: RunCall,
  limit: number,
  signal: ExecutePlanOptions['signal'],
): Promise<void> {
  const dependents = dependentsOf(dependsOn);
  const waitingFor = dependsOn.map((deps) => distinct(deps).length);
  const ready = waitingFor.flatMap((count, index) => (count === 0 ? [index] : []));
  return new Promise<void>((resolve) => {
    let running = 0;

    const settle = (index: number): void => {
      running--;
      for (const next of dependents[index] ?? []) {
        const left = (waitingFor[next] ?? 0) - 1;
        waitingFor[next] = left;
        if (left === 0) insertSorted(ready, next);
      }
      pump();
    };

    const pump = paced(
      () => running < limit && ready.length > 0 && !signal?.aborted,
      () => {
        const index = ready.shift() as number;
        running++;
        startSettled(run, index, () => settle(index));
      },
      () => running === 0 && resolve(),
      () => running,
    );

    pump();
  });
}

/**
 * True when each call waits for the one before it and for nothing else (one call, or a turn whose calls are all
 * barriers: writes and other calls without targets, such as a trader's publish then wait). Such a plan is valid by
 * its shape and runs in turn, without the graph's bookkeeping.
 */
function isChain(dependsOn: readonly (readonly number[])[]): boolean {
  for (let index = 0; index < dependsOn.length; index++) {
    const deps = dependsOn[index]!;
    if (index === 0 ? deps.length !== 0 : deps.length !== 1 || deps[0] !== index - 1) return false;
  }
  return true;
}

/**
 * Runs calls 0 … n − 1 one after another, each as the one before settles; none starts once `signal` aborts. Each next
 * call starts from the settling of the one before, with no loop waiting in between (an await a call cost a promise).
 */
function runInTurn(n: number, run: RunCall, signal: ExecutePlanOptions['signal']): Promise<void> {
  return new Promise<void>((resolve) => new InTurn(n, run, signal, resolve).next());
}

/** The calls of a chain, started one after another (see {@link runInTurn}). */
class InTurn {
  private index = 0;
  /** Starts the next call: the one `startSettled` calls back as a call settles. */
  private readonly after: () => void;

  constructor(
    private readonly n: number,
    private readonly run: RunCall,
    private readonly signal: ExecutePlanOptions['signal'],
    private readonly done: () => void,
  ) {
    // Assigned here, not an initialiser: tsx names a function written as one each time it is made.
    this.after = () => this.next();
  }

  next(): void {
    if (this.index >= this.n || this.signal?.aborted) this.done();
    else startSettled(this.run, this.index++, this.after);
  }
}

/** True when no call waits for another (a fan-out of `assign_task`, reads side by side): no graph to keep. */
function isFree(dependsOn: readonly (readonly number[])[]): boolean {
  for (let index = 0; index < dependsOn.length; index++) if (dependsOn[index]!.length !== 0) return false;
  return true;
}

/**
 * Runs calls 0 … n − 1, at most `limit` at a time, each started in index order as a slot frees; none once `signal`
 * aborts. With free slots, up to {@link CALLS_STARTED_TOGETHER} start at once, and each next one a microtask after
 * the one before (see {@link paced}).
 */
function runFree(n: number, run: RunCall, limit: number, signal: ExecutePlanOptions['signal']): Promise<void> {
  return new Promise<void>((resolve) => {
    let next = 0;
    let running = 0;
    const settle = (): void => {
      running--;
      pump();
    };
    const pump = paced(
      () => running < limit && next < n && !signal?.aborted,
      () => {
        running++;
        startSettled(run, next++, settle);
      },
      () => running === 0 && resolve(),
      () => running,
    );
    pump();
  });
}

/**
 * The most calls a turn starts in one go: past this many under way, each next call starts a microtask after the one
 * before (see {@link paced}).
 */
export const CALLS_STARTED_TOGETHER = 128;

/**
 * A pump that starts calls in waves: each call of `pump()` starts calls while `canStart()` and fewer than
 * {@link CALLS_STARTED_TOGETHER} are under way (`underWay()`), then, while more can start, one more a microtask later
 * (one such microtask waiting at a time); `idle` is called after each call of `pump()` that leaves nothing to wait for.
 *
 * Calls started together go on together: each of their sub-agents takes its first step, then each its second, so one
 * piece of code runs for all of them in a row. Started a microtask apart, every step of every call under way ran in
 * turn with the others (a sub-agent's launch, another's model reply, a third's end), and the same XState steps cost
 * about a third more: a fan-out of 100 read 1.38× the same agents run flat, 1.16× started together. But started all in
 * one loop, the 10,000 calls of a fan-out each spawned its sub-agent before any sub-agent took its second step, so all
 * 10,000 were under way at once and what each held between its steps outlived the young collections (9.1 KB promoted
 * per sub-agent, against 4.5 KB in waves of 128 and 7.3 KB in waves of 1,024). As the first wave's calls end, each
 * starts one more in its place, so the next wave keeps together too. All still start in the same instant (a
 * simulation's times do not change), in the same order.
 */
function paced(canStart: () => boolean, start: () => void, idle: () => void, underWay: () => number): () => void {
  let queued = false;
  const later = (): void => {
    queued = false;
    pump();
  };
  const pump = (): void => {
    if (canStart()) {
      start();
      while (underWay() < CALLS_STARTED_TOGETHER && canStart()) start();
      if (!queued && canStart()) {
        queued = true;
        queueMicrotask(later);
      }
    }
    idle();
  };
  return pump;
}

/**
 * Starts one call; `after` runs once it settles, however it settles: when its promise settles, when it calls back (a
 * call that returns no promise), or a microtask later for one that throws at once.
 */
function startSettled(run: RunCall, index: number, after: () => void): void {
  try {
    const running = run(index, after);
    if (running !== undefined) void Promise.resolve(running).then(after, after);
  } catch {
    queueMicrotask(after);
  }
}

/** The cap as a whole number of slots. */
function concurrencyLimit(maxConcurrency: number | undefined): number {
  if (maxConcurrency === undefined) return Infinity;
  if (typeof maxConcurrency !== 'number' || !(maxConcurrency >= 1)) {
    throw new ConfigurationError(`maxConcurrency must be at least 1 (got ${String(maxConcurrency)}).`);
  }
  return Math.floor(maxConcurrency);
}

/**
 * For each call, the calls that wait for it (each once). Checks that every dependency names an existing call and
 * that the graph has no cycle, so that every call is eventually started.
 */
function dependentsOf(dependsOn: readonly (readonly number[])[]): number[][] {
  const n = dependsOn.length;
  const dependents: number[][] = Array.from({ length: n }, () => []);
  dependsOn.forEach((deps, index) => {
    for (const dep of distinct(deps)) {
      if (!Number.isInteger(dep) || dep < 0 || dep >= n || dep === index) {
        throw new ConfigurationError(`Call ${index} of the plan depends on ${String(dep)}, which is not another call.`);
      }
      (dependents[dep] as number[]).push(index);
    }
  });
  if (!isAcyclic(dependsOn, dependents)) throw cycleError();
  return dependents;
}

/** Kahn's algorithm: true when every call can be reached by removing settled calls one by one. */
function isAcyclic(dependsOn: readonly (readonly number[])[], dependents: readonly (readonly number[])[]): boolean {
  const left = dependsOn.map((deps) => distinct(deps).length);
  const queue = left.flatMap((count, index) => (count === 0 ? [index] : []));
  let visited = 0;
  for (let head = 0; head < queue.length; head++) {
    visited++;
    for (const next of dependents[queue[head] as number] ?? []) {
      left[next] = (left[next] ?? 0) - 1;
      if (left[next] === 0) queue.push(next);
    }
  }
  return visited === dependsOn.length;
}

/** A call's dependencies, each once; no Set is made for the usual none or one (a fan-out has thousands of calls). */
function distinct(deps: readonly number[]): readonly number[] {
  return deps.length < 2 ? deps : [...new Set(deps)];
}

function cycleError(): ConfigurationError {
  return new ConfigurationError('The plan has a dependency cycle, so some calls could never start.');
}

/** Inserts `value` into the ascending array `sorted`, keeping it ascending. */
function insertSorted(sorted: number[], value: number): void {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if ((sorted[middle] as number) < value) low = middle + 1;
    else high = middle;
  }
  sorted.splice(low, 0, value);
}
