import {
  and,
  not,
  assign,
  emit,
  sendParent,
  setup,
  type ActorRefFrom,
} from 'xstate';
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
  withAnswer,
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

/** What every end of a tool batch does first: append its tool messages and count its calls. */
const endOfBatch = [
  { type: 'appendToolMessages' as const, params: ({ event }: { event: Extract<AgentEvent, { type: 'TOOLS.DONE' }> }) => event },
];

/**
 * A waiting agent that may wake (its waits ended, or mail came): it asks for a slot, unless it has no turn left, when
 * it ends with its last answer (or fails with `max_turns` without one).
 */
const wake = [
  { guard: and(['mailReady', 'turnsUsed', 'hasAnswer']), target: '#agent.completed' as const, actions: 'settle' as const },
  {
    guard: and(['mailReady', 'turnsUsed']),
    ...failWith('max_turns', (context) => `The agent used all ${context.input.maxTurns} turns.`),
  },
  // The supervisor had a slot free and gave it with the message: think at once.
  { guard: and(['mailReady', 'slotGiven']), target: 'thinking' as const, actions: 'takeSlot' as const },
  { guard: 'mailReady' as const, target: 'waitingForSlot' as const, actions: 'requestSlot' as const },
  // A slot given for mail this agent does not wake for goes back.
  { guard: 'slotGiven' as const, actions: 'releaseSlot' as const },
];

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
      // A final answer is kept even when it crossed the budget; a resident would wait for more, so it ends.
      if (!budget || (turn.toolCalls.length === 0 && context.input.resident !== true)) return false;
      const tokens = own.inputTokens + own.outputTokens + turn.inputTokens + turn.outputTokens;
      return (
        (budget.maxTokens !== undefined && tokens > budget.maxTokens) ||
        (budget.maxCostUsd !== undefined && own.costUsd + turn.costUsd > budget.maxCostUsd)
      );
    },
    turnsUsed: ({ context }) => context.turns >= context.input.maxTurns,
    /** A reply without tool calls leaves the agent an answer: its own text, or the agent's last answer. */
    answers: ({ context, event }) => {
      const turn = (event as { output?: ModelTurn }).output;
      const own = turn !== undefined && turn.toolCalls.length === 0 && turn.content.trim() !== '';
      return own || (context.output ?? '').trim() !== '';
    },
    /** A resident past its budget ends with its answer (this turn's, or its last) when it has one. */
    residentOverBudget: ({ context }, turn: ModelTurn) => {
      const { budget } = context.input;
      if (context.input.resident !== true || !budget) return false;
      const { own } = context;
      const tokens = own.inputTokens + own.outputTokens + turn.inputTokens + turn.outputTokens;
      const over =
        (budget.maxTokens !== undefined && tokens > budget.maxTokens) ||
        (budget.maxCostUsd !== undefined && own.costUsd + turn.costUsd > budget.maxCostUsd);
      const answer = turn.toolCalls.length === 0 && turn.content.trim() !== '' ? turn.content : (context.output ?? '');
      return over && answer.trim() !== '';
    },
    resident: ({ context }) => context.input.resident === true,
    hasAnswer: ({ context }) => context.output !== null && context.output.trim() !== '',
    finishes: ({ event }) => event.type === 'TOOLS.DONE' && event.finish !== undefined,
    waitsForMail: ({ event }) => event.type === 'TOOLS.DONE' && event.waiting === true,
    finishesWithAnswer: ({ context, event }) =>
      event.type === 'TOOLS.DONE' && (event.finish?.answer ?? context.output ?? '').trim() !== '',
    /** Provided by the runtime: the agent may wake (all its waits ended, or mail came while it waited for none). */
    mailReady: () => false,
    holdsSlot: ({ context }) => context.holdsSlot,
    slotGiven: ({ event }) => (event.type === 'MESSAGE' || event.type === 'WAKE') && event.slot === true,
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
    appendToolMessages: assign(({ context }, done: { messages: ToolMessage[]; ended: number; failed: number }) => ({
      messages: withToolMessages(context.messages, done.messages),
      own: { ...context.own, toolCalls: context.own.toolCalls + done.ended, toolErrors: context.own.toolErrors + done.failed },
    })),
    /** Provided by the runtime: reads the agent's mail (if any) into its conversation. */
    takeMail: () => {},
    /** A resident's answer: recorded, kept as its result so far, and it waits for the next message. */
    recordResidentAnswer: assign(({ context }, turn: ModelTurn) => withAnswer(context, turn)),
    recordFinish: assign({
      output: ({ context }, done: { finish?: { answer?: string } }) => done.finish?.answer ?? context.output,
    }),
    releaseSlot: sendParent(({ context }) => ({ type: 'SLOT.RELEASE' as const, id: context.input.id })),
    requestSlot: sendParent(({ context }) => ({ type: 'SLOT.REQUEST' as const, id: context.input.id })),
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
        STOP: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'cancelled', error: event.error ?? 'Stopped before it started.' }) },
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
        STOP: [
          { guard: 'hasAnswer', target: '#agent.completed', actions: 'settle' },
          failWith('cancelled', () => 'Stopped before it gave an answer.'),
        ],
        YIELD: { actions: 'yieldSlot' },
        RESUME: { actions: 'takeSlot' },
      },
      initial: 'thinking',
      states: {
        thinking: {
          entry: [
            'takeMail',
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
                guard: { type: 'residentOverBudget', params: ({ event }) => event.output },
                target: '#agent.completed',
                actions: [
                  { type: 'recordResidentAnswer', params: ({ event }) => event.output },
                  'dropToolCalls',
                  { type: 'announceReply', params: ({ event }) => event.output },
                  'settle',
                ],
              },
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
                // A resident on its last turn ends with its answer (this turn's, or its last).
                guard: and(['resident', 'turnsUsed', 'answers']),
                target: '#agent.completed',
                actions: [
                  { type: 'recordResidentAnswer', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                  'settle',
                ],
              },
              {
                guard: and(['resident', 'turnsUsed']),
                target: '#agent.failed',
                actions: [
                  { type: 'recordTurn', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                  { type: 'fail', params: ({ context }) => ({ reason: 'max_turns', error: `The agent used all ${context.input.maxTurns} turns without an answer.` }) },
                ],
              },
              {
                // A resident that answered while mail came in reads it at once.
                guard: and(['resident', 'mailReady']),
                target: 'thinking',
                reenter: true,
                actions: [
                  { type: 'recordResidentAnswer', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                ],
              },
              {
                guard: 'resident',
                target: 'waiting',
                actions: [
                  { type: 'recordResidentAnswer', params: ({ event }) => event.output },
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
              header: { runId: context.input.runId, parentId: context.input.parentId, toolCallId: context.input.toolCallId },
            }),
          },
          on: {
            // Every branch first appends the batch's tool messages and counts its calls.
            'TOOLS.DONE': [
              {
                guard: and(['finishes', 'finishesWithAnswer']),
                target: '#agent.completed',
                actions: [...endOfBatch, { type: 'recordFinish', params: ({ event }) => event }, 'settle'],
              },
              {
                guard: 'finishes',
                target: '#agent.failed',
                actions: [
                  ...endOfBatch,
                  { type: 'fail', params: { reason: 'error', error: 'The agent called finish without an answer, and it had given none before.' } },
                ],
              },
              {
                // A resident out of turns ends with its last answer.
                guard: and(['turnsUsed', 'resident', 'hasAnswer']),
                target: '#agent.completed',
                actions: [...endOfBatch, 'settle'],
              },
              {
                guard: 'turnsUsed',
                target: '#agent.failed',
                actions: [
                  ...endOfBatch,
                  {
                    type: 'fail',
                    params: ({ context }) => ({ reason: 'max_turns', error: `The agent used all ${context.input.maxTurns} turns without a final answer.` }),
                  },
                ],
              },
              { guard: and(['waitsForMail', not('mailReady')]), target: 'waiting', actions: endOfBatch },
              { guard: 'holdsSlot', target: 'thinking', actions: endOfBatch },
              { target: 'waitingForSlot', actions: endOfBatch },
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
