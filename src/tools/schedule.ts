/**
 * The planner for one model turn's tool calls: which calls must wait for which, so that independent calls run
 * side by side and conflicting ones run in the order the model wrote them.
 *
 * Two calls conflict unless both are reads, and a conflict only orders them when their targets overlap: paths,
 * directories, globs or keys that can name a common thing (the rule is in `targetOverlap.ts`). A later call waits
 * for every earlier call it conflicts with, directly or through other calls.
 */
import type { ToolKind } from './defineTool.js';
import { compiledOverlap, TargetCache, type Target } from './targetOverlap.js';

export { targetsOverlap } from './targetOverlap.js';

/** What the planner needs to know about one call. */
export interface PlannedCall {
  /** How the call's tool touches the world. */
  readonly kind: ToolKind;
  /**
   * The paths, directories, globs (`src/**\/*.ts`) or keys (`blackboard:plan`) the call touches. `undefined`
   * means unknown: the call may touch anything, so a non-read overlaps every call and a read overlaps every
   * non-read. An empty list touches nothing.
   */
  readonly targets?: readonly string[] | undefined;
}

/** The plan for one batch of calls; every number is an index into the calls given to {@link schedule}. */
export interface ToolPlan {
  /**
   * For each call, the earlier calls it must wait for, in ascending order. The list is minimal: a call that is
   * already waited for through another listed call is left out. Every index is smaller than the call's own.
   */
  dependsOn: number[][];
  /**
   * The levels of the dependency graph, for display: stage 0 holds the calls that wait for nothing, and a
   * call's stage is one more than the highest stage among its dependencies. Each stage is in ascending order.
   */
  stages: number[][];
}

/**
 * Plans one batch of tool calls. Call `j` depends on an earlier call `i` when they conflict (not both reads)
 * and their targets overlap (see {@link targetsOverlap}); `dependsOn[j]` keeps only the dependencies not
 * already implied through another one. A batch of reads only, or one where no call names its targets (a lead's
 * `assign_task` calls, most hand-written tools), is planned in O(n); a batch with targets in O(n² · t²) for n
 * calls of t targets each (each distinct target compiled once per call of `schedule`).
 *
 * @example
 * schedule([
 *   { kind: 'read', targets: ['a.ts'] },
 *   { kind: 'write', targets: ['a.ts'] },
 *   { kind: 'write', targets: ['b.ts'] },
 * ]);
 * // => { dependsOn: [[], [0], []], stages: [[0, 2], [1]] }
 */
export function schedule(calls: readonly PlannedCall[]): ToolPlan {
  if (calls.every((call) => call.kind === 'read')) return { dependsOn: calls.map(() => []), stages: calls.length > 0 ? [calls.map((_, i) => i)] : [] };
  const dependsOn = calls.every((call) => call.targets === undefined) ? barrierDependencies(calls) : pairwiseDependencies(calls);
  return { dependsOn, stages: stagesOf(dependsOn) };
}

/**
 * The plan's dependencies found by checking every earlier call against every later one: the general case, in
 * O(n² · t²). Exported for the tests, which compare the O(n) cases with it.
 */
export function pairwiseDependencies(calls: readonly PlannedCall[]): number[][] {
  const cache = new TargetCache();
  const compiled = calls.map((call) => compileCall(call, cache));
  return reducedDependencies(compiled.length, (i, j) => conflictCompiled(compiled[i] as CompiledCall, compiled[j] as CompiledCall));
}

/**
 * The dependencies when no call names its targets, in O(n): every non-read is a barrier. A read waits for the last
 * non-read before it; a non-read waits for the reads since that barrier, or for the barrier itself when there were
 * none (the reads wait for it already, so it is implied through them).
 */
function barrierDependencies(calls: readonly PlannedCall[]): number[][] {
  let barrier = -1;
  let readsSince: number[] = [];
  return calls.map((call, j) => {
    if (call.kind === 'read') {
      readsSince.push(j);
      return barrier < 0 ? [] : [barrier];
    }
    const deps = readsSince.length > 0 ? readsSince : barrier < 0 ? [] : [barrier];
    barrier = j;
    readsSince = [];
    return deps;
  });
}

/**
 * True when two calls must not run at the same time, so the later one waits: they are not both reads, and
 * their targets overlap (see {@link targetsOverlap}; an unknown-target non-read overlaps everything; an
 * unknown-target read overlaps every non-read).
 */
export function callsConflict(a: PlannedCall, b: PlannedCall): boolean {
  const cache = new TargetCache();
  return conflictCompiled(compileCall(a, cache), compileCall(b, cache));
}

/** A call with its targets read once (see {@link TargetCache}). */
interface CompiledCall {
  readonly kind: ToolKind;
  readonly targets: readonly Target[] | undefined;
}

function compileCall(call: PlannedCall, cache: TargetCache): CompiledCall {
  return { kind: call.kind, targets: call.targets?.map((target) => cache.compile(target)) };
}

/** {@link callsConflict} for calls whose targets are compiled. */
function conflictCompiled(a: CompiledCall, b: CompiledCall): boolean {
  if (a.kind === 'read' && b.kind === 'read') return false;
  if (a.targets === undefined || b.targets === undefined) return true;
  for (const x of a.targets) {
    for (const y of b.targets) if (compiledOverlap(x, y)) return true;
  }
  return false;
}

/**
 * The transitive reduction of the "conflicts with an earlier call" graph. Earlier conflicting calls are visited
 * from the nearest back; one already reachable through a chosen dependency is skipped. Reachability is kept as
 * one bit set of ancestors per call, so a batch of n calls costs O(n²) conflict checks and O(n³ / 32) word ORs.
 */
function reducedDependencies(n: number, conflict: (earlier: number, later: number) => boolean): number[][] {
  const words = Math.ceil(n / 32);
  const ancestors = Array.from({ length: n }, () => new Uint32Array(words));
  const dependsOn: number[][] = [];
  for (let j = 0; j < n; j++) {
    const mine = ancestors[j] as Uint32Array;
    const deps: number[] = [];
    for (let i = j - 1; i >= 0; i--) {
      if (hasBit(mine, i) || !conflict(i, j)) continue;
      deps.push(i);
      setBit(mine, i);
      orInto(mine, ancestors[i] as Uint32Array);
    }
    dependsOn.push(deps.reverse());
  }
  return dependsOn;
}

/** The levels of a dependency graph whose edges point to smaller indices. */
function stagesOf(dependsOn: readonly (readonly number[])[]): number[][] {
  const stageOf: number[] = [];
  const stages: number[][] = [];
  dependsOn.forEach((deps, i) => {
    const stage = deps.reduce((highest, d) => Math.max(highest, (stageOf[d] ?? 0) + 1), 0);
    stageOf[i] = stage;
    (stages[stage] ??= []).push(i);
  });
  return stages;
}

function hasBit(set: Uint32Array, index: number): boolean {
  return (((set[index >>> 5] ?? 0) >>> (index & 31)) & 1) === 1;
}

function setBit(set: Uint32Array, index: number): void {
  set[index >>> 5] = (set[index >>> 5] ?? 0) | (1 << (index & 31));
}

function orInto(target: Uint32Array, source: Uint32Array): void {
  for (let w = 0; w < target.length; w++) target[w] = (target[w] ?? 0) | (source[w] ?? 0);
}
