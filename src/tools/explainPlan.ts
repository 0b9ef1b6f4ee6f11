/**
 * A turn's plan in words, for the `tool.plan` event: the stages by call id, and for each call that waits, the calls
 * it waits for and why (`writes src/a.ts that call_1 reads`, one call at a time, a concurrency cap).
 */
import type { ToolWait } from '../events/events.js';
import type { ToolKind } from './defineTool.js';
import type { PlannedCall, ToolPlan } from './schedule.js';
import { TargetCache } from './targetOverlap.js';

/** What the `tool.plan` event says of a turn, besides its header. */
export interface PlanExplanation {
  /** Call ids by stage (see `ToolPlan.stages`); one call a stage when the calls run one at a time. */
  stages: string[][];
  /** Each call that does not start at once, with the calls it waits for and why. */
  waits: ToolWait[];
  /** The cap on calls at once, when there is one. */
  maxConcurrency?: number;
}

const VERBS: Record<ToolKind, [string, string]> = { read: ['reads', 'read'], write: ['writes', 'write'], other: ['changes', 'change'] };

/**
 * Explains a plan made by `schedule` for calls whose ids are `ids` (same order), run under `maxConcurrency`
 * (`Infinity` for no cap). At a cap of 1 the calls run one at a time in the model's order, so each waits for the one
 * before it (`sequential`). Otherwise each call with dependencies waits for them (`conflict`, with the targets that
 * overlap), and the calls of the first stage past the cap wait for the ones that take the slots (`concurrency_cap`):
 * what is known before anything runs (a call whose dependencies end may still wait for a slot).
 *
 * @example
 * explainPlan([{ kind: 'read', targets: ['a.ts'] }, { kind: 'write', targets: ['a.ts'] }], schedule(…), ['c1', 'c2'], 3);
 * // => { stages: [['c1'], ['c2']], waits: [{ callId: 'c2', after: ['c1'], cause: 'conflict', reason: 'writes a.ts that c1 reads' }], maxConcurrency: 3 }
 */
export function explainPlan(calls: readonly PlannedCall[], plan: ToolPlan, ids: readonly string[], maxConcurrency: number): PlanExplanation {
  const cap = Number.isFinite(maxConcurrency) ? { maxConcurrency } : {};
  if (maxConcurrency <= 1) return { stages: ids.map((id) => [id]), waits: sequentialWaits(ids), ...cap };
  const stages = plan.stages.map((stage) => stage.map((index) => ids[index] as string));
  const waits: ToolWait[] = [];
  const cache = new TargetCache();
  plan.dependsOn.forEach((deps, j) => {
    if (deps.length === 0) return;
    const reason = deps.map((i) => conflictReason(calls[j] as PlannedCall, calls[i] as PlannedCall, ids[i] as string, cache)).join('; ');
    waits.push({ callId: ids[j] as string, after: deps.map((i) => ids[i] as string), cause: 'conflict', reason });
  });
  const first = stages[0] ?? [];
  if (first.length > maxConcurrency) {
    const running = first.slice(0, maxConcurrency); // one list, shared by every call that waits for a slot
    const reason = `at most ${maxConcurrency} calls run at a time`;
    for (const callId of first.slice(maxConcurrency)) waits.push({ callId, after: running, cause: 'concurrency_cap', reason });
  }
  return { stages, waits, ...cap };
}

/** One call at a time: each waits for the one before it. */
function sequentialWaits(ids: readonly string[]): ToolWait[] {
  const reason = 'one call at a time, in the order asked';
  return ids.slice(1).map((callId, k) => ({ callId, after: [ids[k] as string], cause: 'sequential', reason }));
}

/** Why `later` waits for `earlier` (whose id is `earlierId`), such as `writes src/a.ts that call_1 reads`. */
function conflictReason(later: PlannedCall, earlier: PlannedCall, earlierId: string, cache: TargetCache): string {
  const [laterVerb, laterBase] = VERBS[later.kind];
  const [earlierVerb, earlierBase] = VERBS[earlier.kind];
  if (later.targets === undefined) return `may ${laterBase} anything (it names no targets), and ${earlierId} ${earlierVerb} ${named(earlier)}`;
  if (earlier.targets === undefined) return `${laterVerb} ${named(later)}, and ${earlierId} may ${earlierBase} anything (it names no targets)`;
  for (const x of later.targets) {
    for (const y of earlier.targets) {
      if (!cache.overlap(x, y)) continue;
      return x === y ? `${laterVerb} ${x} that ${earlierId} ${earlierVerb}` : `${laterVerb} ${x}, which overlaps ${y} that ${earlierId} ${earlierVerb}`;
    }
  }
  return `${laterVerb} what ${earlierId} ${earlierVerb}`; // not reached: a dependency's targets overlap
}

/** A call's targets as a reason names them. */
function named(call: PlannedCall): string {
  return call.targets === undefined ? 'anything' : call.targets.join(', ');
}
