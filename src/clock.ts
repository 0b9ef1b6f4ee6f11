import { AbortedError } from './errors.js';

/** The timers of an actor system: XState's `Clock` shape (XState does not export the type itself). */
export interface Clock {
  /** Calls `fn` after `ms` milliseconds; returns an id for `clearTimeout`. */
  setTimeout(fn: (...args: any[]) => void, ms: number): any;
  /** Cancels a timer. */
  clearTimeout(id: any): void;
}

/** A clock that can tell the time: XState's `SimulatedClock` is one; the real clock is another. */
export interface TroupeClock extends Clock {
  /** Milliseconds since some fixed point. */
  now(): number;
}

/** The real clock: the host's timers and `performance.now()`. */
export const realClock: TroupeClock = {
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (id) => clearTimeout(id as ReturnType<typeof setTimeout>),
  now: () => performance.now(),
};

/**
 * A real clock that reads 0 when it is made and counts whole milliseconds: what a runtime without a `clock` option
 * uses, so its events start at 0. (Whole numbers also keep the many timestamps of a large run small in memory.)
 */
export function realClockFromNow(): TroupeClock {
  const origin = performance.now();
  return { setTimeout: realClock.setTimeout, clearTimeout: realClock.clearTimeout, now: () => Math.round(performance.now() - origin) };
}

/**
 * True for a clock whose time a simulation moves: one with `set` (XState's `SimulatedClock`), or the runtime's own clock
 * over one (`simulated`). Timers that only guard against a stall (idle timeouts) are set exactly on such a clock.
 */
export function isSimulatedClock(clock: Clock): boolean {
  return (clock as { simulated?: unknown }).simulated === true || typeof (clock as { set?: unknown }).set === 'function';
}

/** Reads the time from a clock; a clock without `now()` reads as the real clock. */
export function clockNow(clock: Clock): number {
  const withNow = clock as Partial<TroupeClock>;
  return typeof withNow.now === 'function' ? withNow.now() : performance.now();
}

/** What an aborted {@link sleep} rejects with: made once, since sleeps are aborted as a matter of course. */
const SLEEP_ABORTED = new AbortedError('The wait was aborted.');

/**
 * Waits `ms` on the given clock (so a `SimulatedClock` controls it). Rejects with {@link AbortedError} when the
 * signal is aborted, and clears its timer then, so nothing is left behind.
 */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(SLEEP_ABORTED);
      return;
    }
    const onAbort = () => {
      clock.clearTimeout(timer);
      reject(SLEEP_ABORTED);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/**
 * Waits `ms` on the given clock, as {@link sleep} does, until `stopped` rejects (then it rejects with
 * {@link AbortedError} and clears its timer). For a promise a stop already has: no AbortSignal is made, and no listener
 * is added to one and taken off again.
 */
export function sleepUnlessStopped(clock: Clock, ms: number, stopped: Promise<never> | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    const timer = clock.setTimeout(resolve, ms);
    stopped?.catch(() => {
      clock.clearTimeout(timer);
      reject(SLEEP_ABORTED);
    });
  });
}
