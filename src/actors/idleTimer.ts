import { fromCallback, type EventObject } from 'xstate';

/** What the idle timer needs: how long the agent may make no progress. */
export interface IdleTimerInput {
  ms: number;
}

/**
 * The `idleTimer` actor logic: sends `IDLE` to its agent once `ms` pass on the actor system's clock, and clears its
 * timer when it is stopped (the agent made progress and left the state). It is an invoked actor rather than an
 * XState `after` transition on purpose: XState keeps delayed events in one table for the whole actor system and
 * scans all of it whenever any actor stops, which makes every stop cost as much as the number of live agents.
 */
export const idleTimer = fromCallback<EventObject, IdleTimerInput>(({ input, sendBack, system }) => {
  const clock = system._clock;
  const timer = clock.setTimeout(() => sendBack({ type: 'IDLE' }), input.ms);
  return () => clock.clearTimeout(timer);
});
