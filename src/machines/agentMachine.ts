import { assign, emit, setup, type ActorRefFrom } from 'xstate';
import { createCallModel, type ModelTurn } from '../actors/callModel.js';
import { missingEnvironment } from '../actors/agentEnvironment.js';
import { createRunTools, type ToolMessage, type ToolProgress } from '../actors/runTools.js';
import { clockNow } from '../clock.js';
import { errorMessage } from '../errors.js';
import type { FailureReason, TroupeEvent } from '../events/events.js';
import type { Figures } from '../events/metrics.js';
import type { ChatMessage } from '../models/Model.js';

/** Limits on what one agent may spend; past them the agent fails with `budget` instead of calling more tools. */
export interface AgentBudget {
  /** Input plus output tokens over all turns. */
  maxTokens?: number;
  /** USD over all turns. */
  maxCostUsd?: number;
}

/** The input of one agent actor: plain JSON, so an agent could run in another process. */
export interface AgentInput {
  /** The agent's id, such as `agent:researcher:V1StGXR8`. */
  id: string;
  /** The name of its definition. */
  name: string;
  /** The runtime's run id. */
  runId: string;
  /** The agent that spawned it, or null. */
  parentId: string | null;
  /** The parent's tool call that started it, or null. */
  toolCallId: string | null;
  /** 0 for a top-level agent, parent's depth + 1 for a sub-agent. */
  depth: number;
  /** The task, sent as the first user message. */
  task: string;
  /** The system prompt. */
  systemPrompt: string;
  /** The name of the model that answers it, for events. */
  model: string;
  /** The names of the tools it may call. */
  tools: string[];
  /** Messages to start from after the system prompt (an earlier conversation when resuming). */
  history?: ChatMessage[];
  /** Model turns allowed before the agent fails with `max_turns`. */
  maxTurns: number;
  /** How long the agent may make no progress before it fails with `timeout`. */
  idleTimeoutMs: number;
  /** Spending limits. */
  budget?: AgentBudget;
}

/** How an agent ended: its answer or its failure, its own figures, and its conversation. */
export interface AgentOutcome {
  id: string;
  agent: string;
  status: 'completed' | 'failed';
  output?: string;
  reason?: FailureReason;
  error?: string;
  turns: number;
  toolCallsExecuted: number;
  own: Figures;
  messages: ChatMessage[];
}

/** The events an agent actor accepts. */
export type AgentEvent =
  | { type: 'START' }
  | { type: 'CANCEL'; error?: string }
  | { type: 'DENY'; error: string }
  | ToolProgress;

/** The fields the agent adds to every event it announces. */
type EventHeader = Pick<TroupeEvent, 'runId' | 'agentId' | 'parentId' | 'toolCallId' | 'at'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as an action names it: the header is filled in when it is emitted. */
type Announcement = DistributiveOmit<TroupeEvent, keyof EventHeader>;

interface Failure {
  reason: FailureReason;
  error: string;
}

/** What an agent knows while it runs. */
export interface AgentContext extends AgentInput {
  messages: ChatMessage[];
  turns: number;
  own: Figures;
  startedAt: number | null;
  output: string | null;
  failure: Failure | null;
  /** Interactive tool calls now waiting for a person; the idle timeout is paused while any are. */
  waitingForPeople: number;
}

const zeroFigures = (): Figures => ({
  inputTokens: 0,
  outputTokens: 0,
  costUsd: 0,
  modelCalls: 0,
  toolCalls: 0,
  toolErrors: 0,
  durationMs: 0,
});

const pendingToolCalls = (messages: readonly ChatMessage[]) => {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
};

/**
 * One agent's lifecycle: `pending` → `running` (`thinking` ⇄ `acting`) → `completed` | `failed`.
 *
 * - `pending` waits for the supervisor's `START` (or a `CANCEL`/`DENY`).
 * - `running.thinking` invokes `callModel`; a reply with tool calls goes to `acting`, one without completes the
 *   agent with its text. `running.acting` invokes `runTools` and goes back to `thinking`, or fails with
 *   `max_turns` once `maxTurns` model turns are used.
 * - An idle timeout on the actor system's clock fails the agent with `timeout`; it restarts on every step and
 *   is paused (`acting.waitingForPerson`) while an interactive tool runs.
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
  delays: {
    idleTimeout: ({ context }) => context.idleTimeoutMs,
  },
  guards: {
    wantsTools: (_, turn: ModelTurn) => turn.toolCalls.length > 0,
    emptyAnswer: (_, turn: ModelTurn) => turn.toolCalls.length === 0 && turn.content.trim() === '',
    overBudget: ({ context }, turn: ModelTurn) => {
      const { budget, own } = context;
      if (!budget || turn.toolCalls.length === 0) return false;
      const tokens = own.inputTokens + own.outputTokens + turn.inputTokens + turn.outputTokens;
      return (
        (budget.maxTokens !== undefined && tokens > budget.maxTokens) ||
        (budget.maxCostUsd !== undefined && own.costUsd + turn.costUsd > budget.maxCostUsd)
      );
    },
    turnsUsed: ({ context }) => context.turns >= context.maxTurns,
    lastPersonAnswered: ({ context }) => context.waitingForPeople <= 1,
  },
  actions: {
    markStarted: assign({ startedAt: ({ system }) => clockNow(system._clock) }),
    beginTurn: assign({ turns: ({ context }) => context.turns + 1 }),
    recordTurn: assign(({ context }, turn: ModelTurn) => ({
      messages: [
        ...context.messages,
        turn.toolCalls.length > 0
          ? { role: 'assistant' as const, content: turn.content, toolCalls: turn.toolCalls }
          : { role: 'assistant' as const, content: turn.content },
      ],
      own: {
        ...context.own,
        inputTokens: context.own.inputTokens + turn.inputTokens,
        outputTokens: context.own.outputTokens + turn.outputTokens,
        costUsd: context.own.costUsd + turn.costUsd,
        modelCalls: context.own.modelCalls + 1,
      },
    })),
    dropToolCalls: assign(({ context }) => {
      const last = context.messages[context.messages.length - 1];
      if (last?.role !== 'assistant') return {};
      return { messages: [...context.messages.slice(0, -1), { role: 'assistant' as const, content: last.content }] };
    }),
    answer: assign({ output: (_, turn: ModelTurn) => turn.content }),
    appendToolMessages: assign({
      messages: ({ context }, messages: ToolMessage[]) => [...context.messages, ...messages],
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
    settle: assign({
      own: ({ context, system }) => ({
        ...context.own,
        durationMs: context.startedAt === null ? 0 : clockNow(system._clock) - context.startedAt,
      }),
    }),
    announce: emit(({ context, system }, event: Announcement) => ({
      ...event,
      runId: context.runId,
      agentId: context.id,
      parentId: context.parentId,
      toolCallId: context.toolCallId,
      at: clockNow(system._clock),
    }) as TroupeEvent),
    announceReply: emit(({ context, system }, turn: ModelTurn): TroupeEvent => ({
      type: 'model.response',
      runId: context.runId,
      agentId: context.id,
      parentId: context.parentId,
      toolCallId: context.toolCallId,
      at: clockNow(system._clock),
      turn: context.turns,
      model: turn.model,
      usage: { inputTokens: turn.inputTokens, outputTokens: turn.outputTokens },
      costUsd: turn.costUsd,
      durationMs: turn.durationMs,
      toolCalls: turn.toolCalls.length,
    })),
  },
}).createMachine({
  id: 'agent',
  context: ({ input }) => ({
    ...input,
    messages: [
      { role: 'system', content: input.systemPrompt },
      ...(input.history ?? []).filter((message) => message.role !== 'system'),
      { role: 'user', content: input.task },
    ],
    turns: 0,
    own: zeroFigures(),
    startedAt: null,
    output: null,
    failure: null,
    waitingForPeople: 0,
  }),
  entry: {
    type: 'announce',
    params: ({ context }) => ({ type: 'agent.spawned', name: context.name, depth: context.depth, task: context.task }),
  },
  initial: 'pending',
  states: {
    pending: {
      on: {
        START: 'running',
        CANCEL: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'cancelled', error: event.error ?? 'Cancelled before it started.' }) },
        },
        DENY: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'denied', error: event.error }) },
        },
      },
    },
    running: {
      entry: ['markStarted', { type: 'announce', params: ({ context }) => ({ type: 'agent.started', name: context.name }) }],
      on: {
        CANCEL: {
          target: 'failed',
          actions: { type: 'fail', params: ({ event }) => ({ reason: 'cancelled', error: event.error ?? 'Cancelled.' }) },
        },
      },
      initial: 'thinking',
      states: {
        thinking: {
          entry: [
            'beginTurn',
            {
              type: 'announce',
              params: ({ context }) => ({
                type: 'model.request',
                turn: context.turns,
                model: context.model,
                messages: context.messages.length,
                tools: context.tools.length,
              }),
            },
          ],
          invoke: {
            src: 'callModel',
            input: ({ context }) => ({ agentId: context.id, agentName: context.name, messages: context.messages }),
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
                  { type: 'recordTurn', params: ({ event }) => event.output },
                  { type: 'announceReply', params: ({ event }) => event.output },
                  { type: 'answer', params: ({ event }) => event.output },
                ],
              },
            ],
            onError: {
              target: '#agent.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: 'error', error: errorMessage(event.error) }) },
            },
          },
          after: {
            idleTimeout: {
              target: '#agent.failed',
              actions: {
                type: 'fail',
                params: ({ context }) => ({ reason: 'timeout', error: `No progress for ${context.idleTimeoutMs} ms while waiting for the model.` }),
              },
            },
          },
        },
        acting: {
          invoke: {
            src: 'runTools',
            input: ({ context }) => ({
              agentId: context.id,
              agentName: context.name,
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
                    params: ({ context }) => ({ reason: 'max_turns', error: `The agent used all ${context.maxTurns} turns without a final answer.` }),
                  },
                ],
              },
              { target: 'thinking', actions: { type: 'appendToolMessages', params: ({ event }) => event.messages } },
            ],
            'TOOLS.FAILED': {
              target: '#agent.failed',
              actions: { type: 'fail', params: ({ event }) => ({ reason: 'error', error: event.error }) },
            },
          },
          initial: 'working',
          states: {
            working: {
              on: { 'TOOL.WAITING': { target: 'waitingForPerson', actions: 'personWaiting' } },
              after: {
                idleTimeout: {
                  target: '#agent.failed',
                  actions: {
                    type: 'fail',
                    params: ({ context }) => ({ reason: 'timeout', error: `No progress for ${context.idleTimeoutMs} ms while tools ran.` }),
                  },
                },
              },
            },
            waitingForPerson: {
              on: {
                'TOOL.WAITING': { actions: 'personWaiting' },
                'TOOL.RESUMED': [
                  { guard: 'lastPersonAnswered', target: 'working', actions: 'personAnswered' },
                  { actions: 'personAnswered' },
                ],
              },
            },
          },
        },
      },
    },
    completed: {
      type: 'final',
      entry: [
        'settle',
        {
          type: 'announce',
          params: ({ context }) => ({ type: 'agent.completed', name: context.name, output: context.output ?? '', turns: context.turns }),
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
            name: context.name,
            reason: context.failure?.reason ?? 'error',
            error: context.failure?.error ?? 'The agent failed.',
            turns: context.turns,
          }),
        },
      ],
    },
  },
  output: ({ context }) => ({
    id: context.id,
    agent: context.name,
    status: context.failure ? 'failed' : 'completed',
    ...(context.failure ? { reason: context.failure.reason, error: context.failure.error } : { output: context.output ?? '' }),
    turns: context.turns,
    toolCallsExecuted: context.own.toolCalls,
    own: context.own,
    messages: context.messages,
  }),
});

/** An agent actor. */
export type AgentActorRef = ActorRefFrom<typeof agentMachine>;
