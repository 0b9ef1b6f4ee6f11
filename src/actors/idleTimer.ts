import type { AnyActorRef } from 'xstate';
import { clockNow, type Clock } from '../clock.js';

/** An armed idle timer: the clock's handle, when it was set and for how long. */
interface Armed {
  handle: unknown;
  at: number;
  ms: number;
}

/** The running idle timer of each agent actor (at most one: it lives while the agent is in one state). */
const timers = new WeakMap<AnyActorRef, Armed>();

/**
 * Starts an agent's idle timer: `IDLE` is sent to the agent once `ms` pass on the actor system's clock, unless
 * {@link stopIdleTimer} comes first. The agent machine starts it on entering a state where it waits for progress and
 * stops it on leaving.
 *
 * It is a plain timer on the system clock rather than an XState `after` transition, on purpose: XState keeps delayed
 * events in one table for the whole actor system and scans all of it whenever any actor stops, so with many live
 * agents every stop would cost as much as the number of agents. It is not an invoked actor either: an actor more per
 * turn costs more than the rest of the turn's bookkeeping.
 */
export function startIdleTimer(self: AnyActorRef, clock: Clock, ms: number): void {
  stopIdleTimer(self, clock);
  // A watchdog: on the runtime's clock, a simulation jumps to it only when nothing else is running.
  const set = clock.setTimeout as (fn: () => void, ms: number, kind?: 'watchdog') => unknown;
  const handle = set.call(
    clock,
    () => {
      timers.delete(self);
      self.send({ type: 'IDLE' });
    },
    ms,
    'watchdog',
  );
  timers.set(self, { handle, at: clockNow(clock), ms });
}

/**
 * Starts an agent's idle timer over, if one runs: progress that is not a step of the agent (one tool call of a batch
 * ended while others still run). Nothing when none runs (the agent waits for a person or for its sub-agents), nor when
 * no time has passed since it was set (its deadline would be the same).
 */
export function renewIdleTimer(self: AnyActorRef, clock: Clock): void {
  const armed = timers.get(self);
  if (armed === undefined || clockNow(clock) === armed.at) return;
  startIdleTimer(self, clock, armed.ms);
}

/** Stops an agent's idle timer, if one runs. */
export function stopIdleTimer(self: AnyActorRef, clock: Clock): void {
  const armed = timers.get(self);
  if (armed === undefined) return;
  clock.clearTimeout(armed.handle);
  timers.delete(self);
}
