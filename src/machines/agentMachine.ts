import { assign, emit, setup, type ActorRefFrom } from 'xstate';
import { createCallModel, type ModelTurn } from '../actors/callModel.js';
import { missingEnvironment } from '../actors/agentEnvironment.js';
import { createRunTools, type ToolMessage } from '../actors/runTools.js';
import { startIdleTimer, stopIdleTimer } from '../actors/idleTimer.js';
import { clockNow } from '../clock.js';
import { errorMessage } from '../errors.js';
import type { TroupeEvent } from '../events/events.js';
import {
  initialContext,
  outcomeOf,
  pendingToolCalls,
  replyAnnouncement,
  settled,
  spawnAnnouncement,
  stamp,
  approvalRequest,
  withToolMessages,
  withTurn,
  withoutPendingToolCalls,
} from './agentContext.js';
import type {
  AgentContext,
  AgentEvent,
  AgentInput,
  AgentOutcome,
  Announcement,
  ApprovalHold,
  Failure,
} from './agentTypes.js';

export type { AgentBudget, AgentEvent, AgentInput, AgentOutcome, ApprovalHold } from './agentTypes.js';

/** The transition into `failed` with a reason, for the places that only differ in the message. */
const failWith = (reason: Failure['reason'], error: (context: AgentContext) => string) => ({
  target: '#agent.failed' as const,
  actions: { type: 'fail' as const, params: ({ context }: { context: AgentContext }) => ({ reason, error: error(context) }) },
});

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
 * - `CANCEL` stops the running model call or tools through their AbortSignal and fails with `cancelled`.
 *
 * Every step emits a {@link TroupeEvent}; the output is an {@link AgentOutcome}. The `callModel` and `runTools`
 * actors are given by the runtime (`agentMachine.provide({ actors })`); without them every turn fails clearly.
 */
export const agentMachine = setup({
  types: {
    context: {} as AgentContext,
    input: {} as AgentInput,
    events: {} as AgentEvent,
    emitted: {} as TroupeEvent,
    output: {} as AgentOutcome,
  },
  actors: {
    callModel: createCallModel(missingEnvironment),
    runTools: createRunTools(missingEnvironment),
  },
  guards: {
    wantsTools: (_, turn: ModelTurn) => turn.toolCalls.length > 0,
    emptyAnswer: (_, turn: ModelTurn) => turn.toolCalls.length === 0 && turn.content.trim() === '',
    overBudget: ({ context }, turn: ModelTurn) => {
      const { own } = context;
      const { budget } = context.input;
      if (!budget || turn.toolCalls.length === 0) return false;
      const tokens = own.inputTokens + own.outputTokens + turn.inputTokens + turn.outputTokens;
      return (
        (budget.maxTokens !== undefined && tokens > budget.maxTokens) ||
        (budget.maxCostUsd !== undefined && own.costUsd + turn.costUsd > budget.maxCostUsd)
      );
    },
    turnsUsed: ({ context }) => context.turns >= context.input.maxTurns,
    holdsSlot: ({ context }) => context.holdsSlot,
    lastPersonAnswered: ({ context }) => context.waitingForPeople <= 1,
    lastPersonAnsweredWithSlot: ({ context }) => context.waitingForPeople <= 1 && context.holdsSlot,
  },
  actions: {
    startIdleTimer: ({ context, self, system }) => startIdleTimer(self, system._clock, context.input.idleTimeoutMs),
    stopIdleTimer: ({ self, system }) => stopIdleTimer(self, system._clock),
    markStarted: assign({ startedAt: ({ system }) => clockNow(system._clock), holdsSlot: true }),
    takeSlot: assign({ holdsSlot: true }),
    yieldSlot: assign({ holdsSlot: false }),
    hold: assign({ approval: (_, hold: ApprovalHold) => hold }),
    beginTurn: assign({ turns: ({ context }) => context.turns + 1 }),
    recordTurn: assign(({ context }, turn: ModelTurn) => withTurn(context, turn)),
    /** The final turn, in one assign: its reply recorded, the answer kept and the agent's running time settled. */
    recordAnswer: assign(({ context, system }, turn: ModelTurn) => {
      const { messages, own } = withTurn(context, turn);
      return { messages, own: settled(own, context.startedAt, clockNow(system._clock)), output: turn.content };
    }),
    dropToolCalls: assign({ messages: ({ context }) => withoutPendingToolCalls(context.messages) }),
    appendToolMessages: assign({
      messages: ({ context }, answers: ToolMessage[]) => withToolMessages(context.messages, answers),
    }),
    countTool: assign({
      own: ({ context }, ended: { status: 'ok' | 'error' }) => ({
        ...context.own,
        toolCalls: context.own.toolCalls + 1,
        toolErrors: context.own.toolErrors + (ended.status === 'error' ? 1 : 0),
      }),
    }),
    personWaiting: assign({ waitingForPeople: ({ context }) => context.waitingForPeople + 1 }),
    personAnswered: assign({ waitingForPeople: ({ context }) => Math.max(0, context.waitingForPeople - 1) }),
    fail: assign({ failure: (_, failure: Failure) => failure }),
    settle: assign({ own: ({ context, system }) => settled(context.own, context.startedAt, clockNow(system._clock)) }),
    announce: emit(({ context, system }, event: Announcement) => stamp(context, clockNow(system._clock), event)),
    announceReply: emit(({ context, system }, turn: ModelTurn) => stamp(context, clockNow(system._clock), replyAnnouncement(context, turn))),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => initialContext(input),
  entry: { type: 'announce', params: ({ context }) => spawnAnnouncement(context) },
  initial: 'pending',
  states: {
    pending: {
      on: {
        CANCEL: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'cancelled', error: event.error ?? 'Cancelled before it started.' }) },
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
            { type: 'fail', params: ({ event }) => ({ reason: 'denied', error: event.error }) },
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
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'cancelled', error: event.error ?? 'Cancelled.' }) },
        },
        YIELD: { actions: 'yieldSlot' },
        RESUME: { actions: 'takeSlot' },
      },
      initial: 'thinking',
      states: {
        thinking: {
          entry: [
            'beginTurn',
            'startIdleTimer',
            {
              type: 'announce',
              params: ({ context }) => ({
                type: 'model.request',
                turn: context.turns,
                model: context.input.model,
                messages: context.messages.length,
                tools: context.input.tools.length,
              }),
            },
          ],
          exit: 'stopIdleTimer',
          invoke: {
            src: 'callModel',
            input: ({ context }) => ({
              agentId: context.input.id,
              agentName: context.input.name,
              depth: context.input.depth,
              messages: context.messages,
            }),
            onDone: [
              {
                guard: { type: 'overBudget', params: ({ event }) => event.output },
                target: '#agent.failed',
                actions: [
                  { type: 'recordTurn', params: ({ event }) => event.output },
                  'dropToolCalls',
                  { type: 'announceReply', params: ({ event }) => event.output },
                  { type: 'fail', params: { reason: 'budget', error: 'The agent went over its budget.' } },
                ],
              },
              {
                guard: { type: 'wantsTools', params: ({ event }) => event.output },
                target: 'acting',
                actions: [
                  { type: 'recordTurn', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                ],
              },
              {
                guard: { type: 'emptyAnswer', params: ({ event }) => event.output },
                target: '#agent.failed',
                actions: [
                  { type: 'recordTurn', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                  { type: 'fail', params: { reason: 'error', error: 'The model gave an empty answer.' } },
                ],
              },
              {
                target: '#agent.completed',
                actions: [
                  { type: 'recordAnswer', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                ],
              },
            ],
            onError: {
              target: '#agent.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: 'error', error: errorMessage(event.error) }) },
            },
          },
          on: {
            IDLE: failWith('timeout', (context) => `No progress for ${context.input.idleTimeoutMs} ms while waiting for the model.`),
          },
        },
        acting: {
          invoke: {
            src: 'runTools',
            input: ({ context }) => ({
              agentId: context.input.id,
              agentName: context.input.name,
              depth: context.input.depth,
              messages: context.messages,
              toolCalls: pendingToolCalls(context.messages),
            }),
          },
          on: {
            'TOOL.STARTED': {
              actions: {
                type: 'announce',
                params: ({ event }) => ({ type: 'tool.call', callId: event.callId, tool: event.tool, arguments: event.arguments }),
              },
            },
            'TOOL.DENIED': {
              actions: {
                type: 'announce',
                params: ({ event }) => ({ type: 'tool.denied', callId: event.callId, tool: event.tool, reason: event.reason, error: event.error }),
              },
            },
            'TOOL.ENDED': {
              actions: [
                { type: 'countTool', params: ({ event }) => event },
                {
                  type: 'announce',
                  params: ({ event }) => ({
                    type: 'tool.result',
                    callId: event.callId,
                    tool: event.tool,
                    status: event.status,
                    durationMs: event.durationMs,
                    ...(event.error === undefined ? {} : { error: event.error }),
                  }),
                },
              ],
            },
            'TOOLS.DONE': [
              {
                guard: 'turnsUsed',
                target: '#agent.failed',
                actions: [
                  { type: 'appendToolMessages', params: ({ event }) => event.messages },
                  {
                    type: 'fail',
                    params: ({ context }) => ({ reason: 'max_turns', error: `The agent used all ${context.input.maxTurns} turns without a final answer.` }),
                  },
                ],
              },
              {
                guard: 'holdsSlot',
                target: 'thinking',
                actions: { type: 'appendToolMessages', params: ({ event }) => event.messages },
              },
              { target: 'waitingForSlot', actions: { type: 'appendToolMessages', params: ({ event }) => event.messages } },
            ],
            'TOOLS.FAILED': {
              target: '#agent.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: 'error', error: event.error }) },
            },
          },
          initial: 'working',
          states: {
            working: {
              entry: 'startIdleTimer',
              exit: 'stopIdleTimer',
              on: {
                'TOOL.WAITING': { target: 'waitingForPerson', actions: 'personWaiting' },
                YIELD: { target: 'waitingForAgents', actions: 'yieldSlot' },
                IDLE: failWith('timeout', (context) => `No progress for ${context.input.idleTimeoutMs} ms while tools ran.`),
              },
            },
            waitingForPerson: {
              on: {
                'TOOL.WAITING': { actions: 'personWaiting' },
                'TOOL.RESUMED': [
                  { guard: 'lastPersonAnsweredWithSlot', target: 'working', actions: 'personAnswered' },
                  { guard: 'lastPersonAnswered', target: 'waitingForAgents', actions: 'personAnswered' },
                  { actions: 'personAnswered' },
                ],
              },
            },
            waitingForAgents: {
              on: {
                'TOOL.WAITING': { target: 'waitingForPerson', actions: 'personWaiting' },
                RESUME: { target: 'working', actions: 'takeSlot' },
              },
            },
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
            error: context.failure?.error ?? 'The agent failed.',
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
