import type { AnyActorRef } from 'xstate';
import type { Clock } from '../clock.js';

/** The running idle timer of each agent actor (at most one: it lives while the agent is in one state). */
const timers = new WeakMap<AnyActorRef, unknown>();

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
  timers.set(
    self,
    set.call(
      clock,
      () => {
        timers.delete(self);
        self.send({ type: 'IDLE' });
      },
      ms,
      'watchdog',
    ),
  );
}

/** Stops an agent's idle timer, if one runs. */
export function stopIdleTimer(self: AnyActorRef, clock: Clock): void {
  if (!timers.has(self)) return;
  clock.clearTimeout(timers.get(self));
  timers.delete(self);
}
