// troupe/testing: deterministic doubles and helpers for tests and simulations in simulated time.
// Node's types for a project whose tsconfig lists no `types` (see src/index.ts).
/// <reference types="node" preserve="true" />
import type { SimulatedClock } from 'xstate';
import { DeadlockError, TimeLimitError } from './errors.js';
import { RuntimeClock } from './runtime/RuntimeClock.js';
import { TestClock } from './testing/TestClock.js';

export { TestClock } from './testing/TestClock.js';

// ── A scripted model and the steps of its scripts ──
export { ScriptedModel } from './models/ScriptedModel.js';
export type { ScriptFunction, ScriptRequest, ScriptStep, ScriptedModelOptions } from './models/ScriptedModel.js';
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
 * How many turns of real time (a millisecond each) work gets, with no timer set meanwhile, before simulated time jumps
 * to an idle timeout: a tool that reads a file or a model that asks a server works in real time, and may finish.
 */
const GRACE_TURNS = 100;

/**
 * Drives a `SimulatedClock` until `promise` settles: lets the work of the current instant finish, then moves the clock to the next
 * due timer, and again, so a whole run (latencies, timeouts) happens in simulated time with no real waiting. Before it
 * moves to an idle timeout (a runtime's watchdog), work in real time (a file read, a server's answer) gets a moment of
 * real time to end, as `runUntilIdle` gives it. Returns the promise's value. Rejects with a `DeadlockError` (naming the
 * agents that wait) if nothing is left to wait for before it settles, or a `TimeLimitError` once the limit passes.
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
  const limitMs = options.limitMs ?? 86_400_000;
  const limit = clock.now() + limitMs;
  let stalled = 0;
  let seen = timersSet(clock);
  for (;;) {
    await settleInstant();
    if (settled) return promise;
    if (RuntimeClock.on(clock).some((runtimeClock) => runtimeClock.realTimeWork)) {
      // Work that takes no simulated time runs in real time (a file tool's reads and writes): time stands still for it.
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    const next = nextTimerAt(clock);
    if (next === undefined) {
      await settleInstant();
      if (settled) return promise;
      throw new DeadlockError(RuntimeClock.on(clock).flatMap((runtimeClock) => runtimeClock.waitingAgents?.() ?? []), clock.now());
    }
    if (timersSet(clock) !== seen) [seen, stalled] = [timersSet(clock), 0];
    if (watchdogAt(clock, next) && stalled < GRACE_TURNS) {
      stalled += 1;
      await new Promise((resolve) => setTimeout(resolve, 1));
      continue;
    }
    if (next > limit) throw new TimeLimitError(limitMs, clock.now());
    stalled = 0;
    clock.set(Math.max(next, clock.now()));
  }
}

/** Every timer ever set through the runtimes on this clock: it grows as their work moves on. */
function timersSet(clock: SimulatedClock): number {
  let count = 0;
  for (const runtimeClock of RuntimeClock.on(clock)) count += runtimeClock.timersSet;
  return count;
}

/** True when the timer due at `at` is a runtime's idle timeout, and no other timer is due then. */
function watchdogAt(clock: SimulatedClock, at: number): boolean {
  if (clock instanceof TestClock && clock.nextDue() === at) return false;
  let watchdog = false;
  for (const runtimeClock of RuntimeClock.on(clock)) {
    if (runtimeClock.nextTimerAt() !== at) continue;
    if (runtimeClock.nextTimerKind() !== 'watchdog') return false;
    watchdog = true;
  }
  return watchdog;
}
