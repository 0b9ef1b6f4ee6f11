import type { ActorRefFrom } from 'xstate';
import type { TroupeEvent } from '../events/events.js';
import { actingState } from './agentActing.js';
import { ending } from '../failure.js';
import { failure, initialContext, outcomeOf, spawnAnnouncement, approvalRequest } from './agentContext.js';
import { agentSetup, failWith, wake } from './agentSetup.js';
import { thinkingState } from './agentThinking.js';
import type { AgentOutcome } from './agentTypes.js';

export type { AgentBudget, AgentEvent, AgentInput, AgentOutcome, ApprovalHold } from './agentTypes.js';

/**
 * One agent's lifecycle: `pending` → `running` (`thinking` ⇄ `acting`) → `completed` | `failed`.
 *
 * - `pending.queued` waits for the supervisor's `START`. A delegation that needs a person's approval waits in
 *   `pending.awaitingApproval` until `APPROVE`; `DENY` fails it with `denied`, `CANCEL` with `cancelled`.
 * - `running.thinking` invokes `callModel`; a reply with tool calls goes to `acting`, one without completes the
 *   agent with its text. `running.acting` invokes `runTools` and goes back to `thinking`, or fails with
 *   `max_turns` once `maxTurns` model turns are used.
 * - An agent that waits for its sub-agents lends its slot to them (`YIELD`, `acting.waitingForAgents`) and gets
 *   one back (`RESUME`) before it thinks again (`running.waitingForSlot` if its tools end first).
 * - An idle timeout on the actor system's clock fails the agent with `timeout`; it restarts on every step and is
 *   paused while an interactive tool waits for a person or the agent waits for its sub-agents.
 * - `CANCEL` stops the running model call or tools through their AbortSignal and fails with `cancelled`; `STOP`
 *   does the same but completes the agent with its last answer when it has one.
 * - Messages: mail that reached the agent's inbox is read at the start of its next turn. A resident agent does not
 *   complete when it answers: it waits in `running.waiting` (without a slot) until a message comes; tool calls that
 *   wait for messages or replies wait there too. Woken, it asks for a slot (`running.waitingForSlot`) and thinks.
 *   The `finish` tool ends an agent after its batch; a resident that runs out of turns or budget completes with its
 *   last answer.
 *
 * Every step emits a {@link TroupeEvent}; the output is an {@link AgentOutcome}. The `callModel` and `runTools`
 * actors are given by the runtime (`agentMachine.provide({ actors })`); without them every turn fails clearly.
 */
export const agentMachine = agentSetup.createMachine({
  id: 'agent',
  context: ({ input }) => initialContext(input),
  entry: { type: 'announce', params: ({ context }) => spawnAnnouncement(context) },
  initial: 'pending',
  states: {
    pending: {
      on: {
        CANCEL: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => failure('cancelled', 'cancelled', 'user', event.error ?? 'Cancelled before it started.') },
        },
        STOP: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => failure('cancelled', 'cancelled', 'user', event.error ?? 'Stopped before it started.') },
        },
        DENY: {
          target: 'failed',
          actions: [
            {
              type: 'announce',
              params: ({ context, event }) => ({
                type: 'approval.denied',
                requestId: event.requestId ?? context.approval?.requestId ?? null,
                reason: event.error,
              }),
            },
            { type: 'fail', params: ({ event }) => failure('denied', 'denied', 'user', event.error) },
          ],
        },
      },
      initial: 'queued',
      states: {
        queued: {
          on: {
            START: '#agent.running',
            HOLD: {
              target: 'awaitingApproval',
              actions: [
                { type: 'hold', params: ({ event: { requestId, risk, reason } }) => ({ requestId, risk, reason }) },
                { type: 'announce', params: ({ context, event }) => approvalRequest(context, event) },
              ],
            },
          },
        },
        awaitingApproval: {
          on: {
            APPROVE: {
              target: 'queued',
              actions: {
                type: 'announce',
                params: ({ context }) => ({ type: 'approval.granted', requestId: context.approval?.requestId ?? '' }),
              },
            },
          },
        },
      },
    },
    running: {
      entry: ['markStarted', { type: 'announce', params: ({ context }) => ({ type: 'agent.started', name: context.input.name }) }],
      on: {
        CANCEL: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => failure('cancelled', 'cancelled', 'user', event.error ?? 'Cancelled.') },
        },
        STOP: [
          { guard: 'hasAnswer', target: '#agent.completed', actions: 'settle' },
          failWith('cancelled', 'cancelled', 'user', () => 'Stopped before it gave an answer.'),
        ],
        YIELD: { actions: 'yieldSlot' },
        RESUME: { actions: 'takeSlot' },
      },
      initial: 'thinking',
      states: {
        thinking: thinkingState,
        acting: actingState,
        waiting: {
          entry: [
            'yieldSlot',
            'releaseSlot',
            {
              type: 'announce',
              params: ({ context }) => ({
                type: 'agent.waiting',
                reason: context.messages[context.messages.length - 1]?.role === 'tool' ? 'tool_call' : 'idle',
              }),
            },
          ],
          on: {
            MESSAGE: wake,
            WAKE: wake,
            // A slot that comes back while the agent waits for messages (one it lent its sub-agents) goes back again.
            RESUME: { actions: ['yieldSlot', 'releaseSlot'] },
          },
        },
        waitingForSlot: {
          on: { RESUME: { target: 'thinking', actions: 'takeSlot' } },
        },
      },
    },
    completed: {
      type: 'final',
      entry: [
        {
          type: 'announce',
          params: ({ context }) => ({ type: 'agent.completed', name: context.input.name, output: context.output ?? '', turns: context.turns }),
        },
      ],
    },
    failed: {
      type: 'final',
      entry: [
        'settle',
        {
          type: 'announce',
          params: ({ context }) => ({
            type: 'agent.failed',
            name: context.input.name,
            reason: context.failure?.reason ?? 'error',
            error: context.failure?.error ?? ending('unexpected', 'The agent failed.', 'system'),
            turns: context.turns,
          }),
        },
      ],
    },
  },
  output: ({ context }) => outcomeOf(context),
});

/** An agent actor. */
export type AgentActorRef = ActorRefFrom<typeof agentMachine>;

