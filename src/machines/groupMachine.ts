import { assign, setup, type ActorRefFrom } from 'xstate';
import { realClock } from '../clock.js';
import type { FailureReason, TroupeEvent } from '../events/events.js';
import { emptyFigures } from '../events/metrics.js';
import { ending, type ErrorInfo } from '../failure.js';
import { clockedGroupAnnounce } from './agentClock.js';
import { failure } from './agentContext.js';
import type { ActorHeader, AgentOutcome, Failure } from './agentTypes.js';

/** The input of one group actor: the header every actor of the tree has (a group adds no depth). */
export type GroupInput = ActorHeader;

/** The events a group actor accepts. */
export type GroupEvent =
  /** The supervisor starts the group (at once: a group takes no slot). */
  | { type: 'START' }
  /** The pattern ended with this combined output. */
  | { type: 'END'; output: string }
  /** The pattern failed. */
  | { type: 'FAIL'; reason: FailureReason; error: ErrorInfo }
  /** Stop now and fail with `cancelled`. */
  | { type: 'CANCEL'; error?: string }
  /** A group has no answer of its own until it ends: it fails with `cancelled`, as an agent without one does. */
  | { type: 'STOP'; error?: string };

/** What a group knows. */
export interface GroupContext {
  input: GroupInput;
  output: string | null;
  failure: Failure | null;
}

/**
 * A group: the lifecycle of a pattern run (`sequence`, `parallel`, …) in the supervisor's actor system, so the
 * agents it runs have a parent, and events, metrics and cancellation see the pattern as one node of the tree.
 *
 * `pending` → (`START`) `running` → (`END`) `completed` | (`FAIL`, `CANCEL`, `STOP`) `failed`. It calls no model and
 * holds no slot; its children do the work. It emits `agent.spawned` (with `group: true`), `agent.started` and
 * `agent.completed` / `agent.failed` with the usual header, and its output is an {@link AgentOutcome} whose own
 * figures are zero (its children's figures are in its subtree).
 */
export const groupMachine = setup({
  types: {
    context: {} as GroupContext,
    input: {} as GroupInput,
    events: {} as GroupEvent,
    emitted: {} as TroupeEvent,
    output: {} as AgentOutcome,
  },
  actions: {
    // Made for the real clock; the runtime provides it made for its own.
    announce: clockedGroupAnnounce<GroupContext, GroupEvent>(realClock),
    keepOutput: assign({ output: (_, output: string) => output }),
    fail: assign({ failure: (_, failure: Failure) => failure }),
  },
}).createMachine({
  id: 'group',
  context: ({ input }) => ({ input, output: null, failure: null }),
  entry: {
    type: 'announce',
    params: ({ context: { input } }) => ({ type: 'agent.spawned', name: input.name, depth: input.depth, task: input.task, group: true }),
  },
  initial: 'pending',
  on: {
    CANCEL: {
      target: '.failed',
      actions: { type: 'fail', params: ({ event }) => failure('cancelled', 'cancelled', 'user', event.error ?? 'Cancelled.') },
    },
    STOP: {
      target: '.failed',
      actions: {
        type: 'fail',
        params: ({ event }) => failure('cancelled', 'cancelled', 'user', event.error ?? 'Stopped before it gave an answer.'),
      },
    },
  },
  states: {
    pending: {
      on: { START: 'running' },
    },
    running: {
      entry: { type: 'announce', params: ({ context }) => ({ type: 'agent.started', name: context.input.name }) },
      on: {
        END: { target: 'completed', actions: { type: 'keepOutput', params: ({ event }) => event.output } },
        FAIL: { target: 'failed', actions: { type: 'fail', params: ({ event }) => ({ reason: event.reason, error: event.error }) } },
      },
    },
    completed: {
      type: 'final',
      entry: {
        type: 'announce',
        params: ({ context }) => ({ type: 'agent.completed', name: context.input.name, output: context.output ?? '', turns: 0 }),
      },
    },
    failed: {
      type: 'final',
      entry: {
        type: 'announce',
        params: ({ context }) => ({
          type: 'agent.failed',
          name: context.input.name,
          reason: context.failure?.reason ?? 'error',
          error: context.failure?.error ?? ending('unexpected', 'The group failed.', 'system'),
          turns: 0,
        }),
      },
    },
  },
  output: ({ context }) => outcomeOf(context),
});

/** A group actor. */
export type GroupActorRef = ActorRefFrom<typeof groupMachine>;

/** A group's outcome: its combined output or its failure; no turns, no figures and no conversation of its own. */
function outcomeOf(context: GroupContext): AgentOutcome {
  const { input, failure } = context;
  return {
    id: input.id,
    agent: input.name,
    status: failure ? 'failed' : 'completed',
    ...(failure ? { reason: failure.reason, error: failure.error } : { output: context.output ?? '' }),
    turns: 0,
    toolCallsExecuted: 0,
    own: emptyFigures(),
    messages: [],
  };
}
