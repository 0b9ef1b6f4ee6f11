// troupe/testing: deterministic doubles and helpers for tests and simulations in simulated time.
import type { SimulatedClock } from 'xstate';
import { RuntimeClock } from './runtime/RuntimeClock.js';
import { TestClock } from './testing/TestClock.js';

export { TestClock } from './testing/TestClock.js';

// ── A scripted model and the steps of its scripts ──
export { ScriptedModel } from './models/ScriptedModel.js';
export type { ScriptFunction, ScriptStep, ScriptedModelOptions } from './models/ScriptedModel.js';
export { assignCall, callTools, textReply, toolCall } from './testing/steps.js';
export type { AssignCallOptions } from './testing/steps.js';
export { InvalidScriptStepError, ScriptExhaustedError, UnusedStepsError } from './errors.js';

// ── Faults: a model that fails at seeded rates ──
export { FAULT_KINDS, FaultyModel } from './models/FaultyModel.js';
export type { FaultKind, FaultRates, FaultyModelOptions } from './models/FaultyModel.js';

/** Lets every pending promise callback run (resolves after the microtask queue has drained). */
export function settleMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Lets everything due at the current simulated instant finish: two rounds of {@link settleMicrotasks}, so work that
 * yields once to the event loop (troupe does, to let an agent that ends at a deadline settle before the deadline
 * is judged) runs before the clock moves on.
 */
async function settleInstant(): Promise<void> {
  await settleMicrotasks();
  await settleMicrotasks();
}

/**
 * When the earliest timer on a `SimulatedClock` is due, or undefined when none is set. It sees the timers every
 * runtime given that clock has set, and, on a {@link TestClock}, every timer set on the clock. On a plain
 * `SimulatedClock`, a timer set on the clock directly (not through a runtime or a tool's `context.clock`) is not
 * seen: it still fires when the clock passes it, but `advanceUntilSettled` does not jump to it.
 */
export function nextTimerAt(clock: SimulatedClock): number | undefined {
  let next: number | undefined = clock instanceof TestClock ? clock.nextDue() : undefined;
  for (const runtimeClock of RuntimeClock.on(clock)) {
    const due = runtimeClock.earliestDue();
    if (due !== undefined && (next === undefined || due < next)) next = due;
  }
  return next;
}

/** Options of {@link advanceUntilSettled}. */
export interface AdvanceOptions {
  /** Give up (reject) once simulated time passes this many ms from the start (default one day). */
  limitMs?: number;
}

/**
 * Drives a `SimulatedClock` until `promise` settles: lets the work of the current instant finish, then moves the clock to the next
 * due timer, and again, so a whole run (latencies, timeouts) happens in simulated time with no real waiting.
 * Returns the promise's value. Rejects if nothing is left to wait for before it settles (a deadlock) or the
 * limit passes.
 */
export async function advanceUntilSettled<T>(
  clock: SimulatedClock,
  promise: Promise<T>,
  options: AdvanceOptions = {},
): Promise<T> {
  let settled = false;
  promise.then(
    () => (settled = true),
    () => (settled = true),
  );
  const limit = clock.now() + (options.limitMs ?? 86_400_000);
  for (;;) {
    await settleInstant();
    if (settled) return promise;
    const next = nextTimerAt(clock);
    if (next === undefined) {
      await settleInstant();
      if (settled) return promise;
      throw new Error(`Nothing is left to wait for at ${clock.now()} ms, but the promise has not settled.`);
    }
    if (next > limit) throw new Error(`Simulated time passed the limit (${options.limitMs ?? 86_400_000} ms).`);
    clock.set(Math.max(next, clock.now()));
  }
}
