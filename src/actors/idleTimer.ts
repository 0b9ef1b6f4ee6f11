import type { AnyActorRef } from 'xstate';
import { clockNow, isSimulatedClock, type Clock } from '../clock.js';

/** An armed idle timer: the clock's handle, when it was last started and for how long, and whose it is. */
interface Armed {
  /** The clock's timer, until it is cleared or fires: due at or before the deadline (`at + ms`). */
  handle: unknown;
  /** When the timer was last started: its deadline is `at + ms`. */
  at: number;
  ms: number;
  agent: AnyActorRef;
  clock: Clock;
  /** Stopped, its handle cleared at the end of the step (see {@link stopIdleTimer}) unless it is started again first. */
  stopped: boolean;
}

/** The running idle timer of each agent actor (at most one: it lives while the agent is in one state). */
const timers = new WeakMap<AnyActorRef, Armed>();

/** Timers stopped in the current step, cleared together a microtask later (see {@link stopIdleTimer}). */
let stopping: Armed[] = [];

/** Clears the timers stopped in the step that just ended and not started again since. */
function clearStopped(): void {
  const stopped = stopping;
  stopping = [];
  for (let i = 0; i < stopped.length; i++) {
    const armed = stopped[i]!;
    if (armed.stopped) unset(armed);
  }
}

/** Stops a timer and clears its clock timer now, if it still has one; it is forgotten. */
function unset(armed: Armed): void {
  armed.stopped = true;
  if (armed.handle !== undefined) armed.clock.clearTimeout(armed.handle);
  armed.handle = undefined;
  if (timers.get(armed.agent) === armed) timers.delete(armed.agent);
}

/**
 * Starts an agent's idle timer: `IDLE` is sent to the agent once `ms` pass on the actor system's clock, unless
 * {@link stopIdleTimer} comes first. The agent machine starts it on entering a state where it waits for progress and
 * stops it on leaving.
 *
 * It is a plain timer on the system clock rather than an XState `after` transition, on purpose: XState keeps delayed
 * events in one table for the whole actor system and scans all of it whenever any actor stops, so with many live
 * agents every stop would cost as much as the number of agents. It is not an invoked actor either: an actor more per
 * turn costs more than the rest of the turn's bookkeeping.
 *
 * A timer started again with the same length while it runs, or in the step that stopped it (an agent going from
 * thinking to acting, or back; a tool call of a batch ending), keeps its clock timer when its deadline is the same (it
 * is started again in the same instant). On the real clock it keeps it when its deadline moves too: the clock's timer
 * fires at the deadline it was set for, finds the deadline later, and is set again for the time left. Idle timeouts
 * last minutes and turns milliseconds, so most timers are stopped long before they come due: a timer cleared and set
 * again at every step cost two removals and two insertions in the clock's heaps of timers, a few µs a tool turn with a
 * thousand agents running (the real clock counts whole milliseconds, so a step rarely came in the instant of the one
 * before). A simulated clock gets the exact deadline at once: a simulation that jumps to the next idle timeout when
 * nothing else is due must not stop at a stale one.
 */
export function startIdleTimer(self: AnyActorRef, clock: Clock, ms: number): void {
  const now = clockNow(clock);
  const armed = timers.get(self);
  if (armed !== undefined) {
    const kept = now === armed.at || (now > armed.at && !isSimulatedClock(clock));
    if (kept && armed.ms === ms && armed.clock === clock && armed.handle !== undefined) {
      armed.at = now;
      armed.stopped = false;
      return;
    }
    unset(armed);
  }
  const next: Armed = { handle: undefined, at: now, ms, agent: self, clock, stopped: false };
  arm(next, ms);
  timers.set(self, next);
}

/** Sets an idle timer's clock timer, due in `ms`. */
function arm(armed: Armed, ms: number): void {
  // A watchdog: on the runtime's clock, a simulation jumps to it only when nothing else is running.
  const set = armed.clock.setTimeout as (fn: () => void, ms: number, kind?: 'watchdog') => unknown;
  armed.handle = set.call(armed.clock, () => idle(armed), ms, 'watchdog');
}

/**
 * An idle timer's clock timer came due: the agent hears `IDLE`, unless the timer was stopped in the same step, or was
 * started again since it was set (its deadline moved: it is set again for the time left).
 */
function idle(armed: Armed): void {
  armed.handle = undefined;
  if (!armed.stopped) {
    const left = armed.at + armed.ms - clockNow(armed.clock);
    if (left > 0) {
      arm(armed, left);
      return;
    }
  }
  if (timers.get(armed.agent) === armed) timers.delete(armed.agent);
  if (armed.stopped) return;
  armed.stopped = true;
  armed.agent.send({ type: 'IDLE' });
}

/**
 * Starts an agent's idle timer over, if one runs: progress that is not a step of the agent (one tool call of a batch
 * ended while others still run). Nothing when none runs (the agent waits for a person or for its sub-agents). On the
 * real clock only its deadline moves (see {@link startIdleTimer}).
 */
export function renewIdleTimer(self: AnyActorRef, clock: Clock): void {
  const armed = timers.get(self);
  if (armed === undefined || armed.stopped) return;
  startIdleTimer(self, clock, armed.ms);
}

/**
 * Stops an agent's idle timer, if one runs. The clock's timer is cleared a microtask later, with every other timer
 * stopped meanwhile, so an agent that starts its timer again in the same step keeps the one it had (see
 * {@link startIdleTimer}); until then a stopped timer that comes due sends nothing.
 */
export function stopIdleTimer(self: AnyActorRef, _clock: Clock): void {
  const armed = timers.get(self);
  if (armed === undefined || armed.stopped) return;
  armed.stopped = true;
  if (stopping.push(armed) === 1) queueMicrotask(clearStopped);
}
