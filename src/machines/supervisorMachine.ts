import { createActor, enqueueActions, setup, type ActorRefFrom } from 'xstate';
import type { AgentActorRef, AgentInput, AgentOutcome, agentMachine } from './agentMachine.js';
import { AgentTable } from './agentTable.js';
import { errorMessage } from '../errors.js';

/** A request to spawn one agent. */
export interface SpawnRequest {
  /** The new agent's input (its id included). */
  input: AgentInput;
  /** Higher runs first among waiting agents; equal priorities run first come, first served. Default 0. */
  priority?: number;
}

/** The events the supervisor accepts. */
export type SupervisorEvent =
  | { type: 'SPAWN'; request: SpawnRequest }
  | { type: 'CANCEL'; id: string; error?: string }
  | { type: 'SHUTDOWN' }
  | { type: `xstate.done.actor.${string}`; output: AgentOutcome }
  | { type: `xstate.error.actor.${string}`; error: unknown };

/** The supervisor's input. */
export interface SupervisorInput {
  /** The agent logic to run (the agent machine with its actors provided). */
  agentLogic: typeof agentMachine;
  /** At most this many agents run at once; the rest wait in `pending`. */
  maxParallel: number;
}

/** What the supervisor keeps. */
export interface SupervisorContext {
  agentLogic: typeof agentMachine;
  maxParallel: number;
  agents: AgentTable;
}

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';

/** What the supervisor does when an agent's actor ends: release it, then hand its outcome to the runtime. */
const whenAgentEnds = [
  { type: 'release', params: ({ event }: { event: SupervisorEvent }) => ({ outcome: outcomeOf(event) }) },
  { type: 'reportOutcome', params: ({ event }: { event: SupervisorEvent }) => ({ outcome: outcomeOf(event) }) },
] as const;

/**
 * The supervisor: spawns every agent as an actor of its actor system (id and systemId `agent:<name>:<nanoid>`,
 * parent: the supervisor), keeps a record of each with its parent and depth, starts pending agents in priority
 * then FIFO order while fewer than `maxParallel` run, cancels whole subtrees, and releases each agent's actor
 * when it ends (the record stays).
 *
 * `open` accepts work; `SHUTDOWN` cancels every live agent and waits in `closing` until the last one has ended,
 * then the supervisor is `closed` (final) and leaves no actor or timer behind.
 *
 * The runtime provides two actions: `observeAgent` (called with a new agent's id after its actor is made and
 * before it starts, to listen to its events) and `reportOutcome` (called with each ended agent's outcome).
 */
export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    input: {} as SupervisorInput,
    events: {} as SupervisorEvent,
  },
  actions: {
    /** Provided by the runtime: subscribe to the new agent's events before it starts. */
    observeAgent: (_, _params: { id: string }) => {},
    /** Provided by the runtime: deliver an ended agent's outcome. */
    reportOutcome: (_, _params: { outcome: AgentOutcome }) => {},
    startActor: ({ context }, { id }: { id: string }) => {
      context.agents.actor(id)?.start();
    },
    startQueued: ({ context }) => {
      const { agents } = context;
      while (agents.running < context.maxParallel) {
        const id = agents.queue.take();
        if (id === undefined) break;
        const record = agents.record(id);
        const actor = agents.actor(id);
        // Skip agents that ended while they waited (cancelled; their done event may still be in the mailbox).
        if (record?.state !== 'pending' || !actor || actor.getSnapshot().status !== 'active') continue;
        record.state = 'running';
        agents.running += 1;
        actor.send({ type: 'START' });
      }
    },
    release: ({ context }, { outcome }: { outcome: AgentOutcome }) => {
      context.agents.release(outcome.id, outcome.status);
    },
    cancelSubtree: ({ context }, { id, error }: { id: string; error?: string }) => {
      // Children first, so no parent ends while one of its sub-agents could still report to it.
      for (const agentId of context.agents.subtree(id).reverse()) {
        context.agents.actor(agentId)?.send({ type: 'CANCEL', error: error ?? `Cancelled (${id} was cancelled).` });
      }
    },
    cancelAll: ({ context }) => {
      for (const actor of [...context.agents.liveActors()]) {
        actor.send({ type: 'CANCEL', error: 'The runtime shut down.' });
      }
    },
  },
  guards: {
    noLiveAgents: ({ context }) => context.agents.active === 0,
    isLastLiveAgent: ({ context }) => context.agents.active <= 1,
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input }) => ({ agentLogic: input.agentLogic, maxParallel: input.maxParallel, agents: new AgentTable() }),
  initial: 'open',
  states: {
    open: {
      on: {
        SPAWN: {
          // The agent's actor is made while the transition is resolved, not inside a custom action: making an
          // actor evaluates its machine's initial context, which XState expects outside custom actions.
          actions: enqueueActions(({ context, event, self, enqueue }) => {
            const { input, priority } = event.request;
            const actor: AgentActorRef = createActor(context.agentLogic, {
              id: input.id,
              systemId: input.id,
              parent: self,
              input,
            });
            context.agents.add(
              { id: input.id, name: input.name, parentId: input.parentId, depth: input.depth, state: 'pending' },
              actor,
            );
            context.agents.queue.push(input.id, priority);
            enqueue({ type: 'observeAgent', params: { id: input.id } });
            enqueue({ type: 'startActor', params: { id: input.id } });
            enqueue('startQueued');
          }),
        },
        CANCEL: { actions: { type: 'cancelSubtree', params: ({ event }) => ({ id: event.id, error: event.error }) } },
        'xstate.done.actor.*': { actions: [...whenAgentEnds, 'startQueued'] },
        'xstate.error.actor.*': { actions: [...whenAgentEnds, 'startQueued'] },
        SHUTDOWN: [{ guard: 'noLiveAgents', target: 'closed' }, { target: 'closing' }],
      },
    },
    closing: {
      entry: 'cancelAll',
      on: {
        SPAWN: {
          actions: {
            type: 'reportOutcome',
            params: ({ event }) => ({ outcome: refusal(event.request.input, 'The runtime is shutting down.') }),
          },
        },
        'xstate.done.actor.*': [
          { guard: 'isLastLiveAgent', target: 'closed', actions: whenAgentEnds },
          { actions: whenAgentEnds },
        ],
        'xstate.error.actor.*': [
          { guard: 'isLastLiveAgent', target: 'closed', actions: whenAgentEnds },
          { actions: whenAgentEnds },
        ],
      },
    },
    closed: { type: 'final' },
  },
});

/** The outcome carried by an agent's done event, or a failure made from its error event. */
function outcomeOf(event: SupervisorEvent): AgentOutcome {
  if (event.type.startsWith(DONE) && 'output' in event) return event.output;
  const id = event.type.startsWith(ERROR) ? event.type.slice(ERROR.length) : 'unknown';
  const reason = `The agent's actor crashed: ${errorMessage('error' in event ? event.error : event)}`;
  return failedOutcome(id, id.split(':')[1] ?? 'unknown', 'error', reason);
}

/** The outcome of an agent the supervisor would not start. */
function refusal(input: AgentInput, error: string): AgentOutcome {
  return failedOutcome(input.id, input.name, 'cancelled', error);
}

function failedOutcome(id: string, agent: string, reason: AgentOutcome['reason'], error: string): AgentOutcome {
  return {
    id,
    agent,
    status: 'failed',
    reason,
    error,
    turns: 0,
    toolCallsExecuted: 0,
    own: { inputTokens: 0, outputTokens: 0, costUsd: 0, modelCalls: 0, toolCalls: 0, toolErrors: 0, durationMs: 0 },
    messages: [],
  };
}

/** The supervisor actor. */
export type SupervisorActorRef = ActorRefFrom<typeof supervisorMachine>;
