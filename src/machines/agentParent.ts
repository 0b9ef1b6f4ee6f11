import type { ActorLogic, ActorSystem, EventObject, Snapshot } from 'xstate';

/** The logic of the agents' parent: no input, no state of its own (its snapshot is only its status). */
export type AgentParentLogic = ActorLogic<Snapshot<undefined>, EventObject, unknown, ActorSystem<any>>;

/**
 * The logic of the actor that is the parent of agents when no inspector watches (the runtime makes one, a child of the
 * supervisor in the same actor system). XState sends an actor's done or error event to its parent; with the supervisor
 * as parent, each agent's end cost a macrostep of the supervisor (transitions selected, actions resolved, a snapshot
 * made). This actor hands each event to `take`, which ends the agent on the supervisor's table at once or passes the
 * event on to the supervisor; it keeps no state of its own and makes no snapshot per event.
 */
export function agentParentLogic(take: (event: EventObject, system: ActorSystem<any>) => void): AgentParentLogic {
  return {
    transition: (snapshot, event, { system }) => {
      if (event.type === 'xstate.stop') return { status: 'stopped', output: undefined, error: undefined };
      take(event, system);
      return snapshot;
    },
    getInitialSnapshot: () => ({ status: 'active', output: undefined, error: undefined }),
    getPersistedSnapshot: (snapshot) => snapshot,
  };
}
