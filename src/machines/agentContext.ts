import type { ModelTurn } from '../actors/callModel.js';
import type { ToolMessage } from '../actors/runTools.js';
import { addCost, emptyFigures, type Figures } from '../events/metrics.js';
import { renderMessage, type Message } from '../messaging/Message.js';
import type { ChatMessage } from '../models/Model.js';
import type { TroupeEvent } from '../events/events.js';
import type { Fault } from '../errors.js';
import type { FailureReason } from '../events/events.js';
import { ending, type EndingCode } from '../failure.js';
import type { ActorHeader, AgentContext, AgentEvent, AgentInput, AgentOutcome, Announcement, Failure } from './agentTypes.js';

/** What an agent knows when it is made: the system prompt, any earlier conversation, then its task. */
export function initialContext(input: AgentInput): AgentContext {
  return {
    input,
    messages:
      input.history === undefined || input.history.length === 0
        ? [
            { role: 'system', content: input.systemPrompt },
            { role: 'user', content: input.task },
          ]
        : [
            { role: 'system', content: input.systemPrompt },
            ...input.history.filter((message) => message.role !== 'system'),
            { role: 'user', content: input.task },
          ],
    turns: 0,
    own: emptyFigures(),
    startedAt: null,
    output: null,
    failure: null,
    waitingForPeople: 0,
    holdsSlot: false,
    approval: null,
    required: input.requiredToolCalls ?? NONE_REQUIRED,
  };
}

const NONE_REQUIRED: readonly string[] = Object.freeze([]);

/**
 * The required tools still not called once a batch ended: the names of the batch's calls that ended without an error
 * (read from the assistant message that made them, the conversation's last) are crossed off.
 */
export function requiredAfter(context: AgentContext, done: { messages: readonly ToolMessage[] }): readonly string[] {
  if (context.required.length === 0) return context.required;
  const names = new Map(pendingToolCalls(context.messages).map((call) => [call.id, call.name]));
  const called = new Set(done.messages.filter((message) => message.isError !== true).map((message) => names.get(message.toolCallId)));
  return context.required.filter((name) => !called.has(name));
}

/** The message that tells an agent which required tools it has not called yet. */
export function requiredReminder(required: readonly string[], finishing: boolean): ChatMessage {
  const names = required.map((name) => `\`${name}\``).join(', ');
  const one = required.length === 1;
  return {
    role: 'user',
    content: `${finishing ? 'You called finish, but you' : 'You'} have not called ${names} yet: ${one ? 'it is' : 'they are'} required. Call ${one ? 'it' : 'them'} before you ${finishing ? 'finish' : 'give your final answer'}.`,
  };
}

/** The tool calls of the last assistant message, which `acting` runs. */
export function pendingToolCalls(messages: readonly ChatMessage[]) {
  const last = messages[messages.length - 1];
  return last?.role === 'assistant' ? (last.toolCalls ?? []) : [];
}

/** The context after a model turn: its reply appended, its usage and cost counted. */
export function withTurn(context: AgentContext, turn: ModelTurn): Pick<AgentContext, 'messages' | 'own'> {
  const reply: ChatMessage =
    turn.toolCalls.length > 0
      ? { role: 'assistant', content: turn.content, toolCalls: turn.toolCalls }
      : { role: 'assistant', content: turn.content };
  const limit = context.input.historyLimit;
  return {
    messages: limit === undefined ? context.messages.concat(reply) : windowed(context.messages, reply, limit),
    own: {
      ...context.own,
      inputTokens: context.own.inputTokens + turn.inputTokens,
      outputTokens: context.own.outputTokens + turn.outputTokens,
      costUsd: addCost(context.own.costUsd, turn.costUsd),
      modelCalls: context.own.modelCalls + 1,
    },
  };
}

/**
 * The conversation with `reply` appended, cut to the system prompt and at most `limit` later messages. The cut never
 * leaves a tool result without the assistant message that asked for it: the window starts after such results.
 */
export function windowed(messages: readonly ChatMessage[], reply: ChatMessage, limit: number): ChatMessage[] {
  const system = messages[0]?.role === 'system' ? 1 : 0;
  let start = Math.max(system, messages.length + 1 - limit);
  while (start < messages.length && messages[start]!.role === 'tool') start += 1;
  // One array of the size it needs, filled in order (a slice then a spread behind the system prompt made two, and
  // pushes leave room to grow: see `withToolMessages`).
  const kept = new Array<ChatMessage>(system + messages.length - start + 1);
  let at = 0;
  if (system === 1) kept[at++] = messages[0]!;
  for (let index = start; index < messages.length; index += 1) kept[at++] = messages[index]!;
  kept[at] = reply;
  return kept;
}

/** The conversation with the last reply's tool calls removed (they will not run), so it stays valid to resume. */
export function withoutPendingToolCalls(messages: ChatMessage[]): ChatMessage[] {
  const last = messages[messages.length - 1];
  if (last?.role !== 'assistant' || !last.toolCalls) return messages;
  return [...messages.slice(0, -1), { role: 'assistant', content: last.content }];
}

/** What a batch's end gives the actions that record it. */
export type BatchEnd = { messages: ToolMessage[]; ended: number; failed: number };

/** The context after a batch: its tool messages appended, its calls counted, required tools it called crossed off. */
export function withBatch(context: AgentContext, done: BatchEnd): Pick<AgentContext, 'messages' | 'own' | 'required'> {
  return {
    messages: withToolMessages(context.messages, done.messages),
    own: { ...context.own, toolCalls: context.own.toolCalls + done.ended, toolErrors: context.own.toolErrors + done.failed },
    required: requiredAfter(context, done),
  };
}

/**
 * The conversation with one turn's tool messages appended. Conversations are made with `concat`, which makes its
 * result exactly as long as it is, where a spread or pushes leave room to grow (ten messages took 29 slots): a
 * conversation stays alive until the agent's next turn, so in a run of many agents that room is copied by every young
 * collection and then kept in the old generation.
 */
export function withToolMessages(messages: ChatMessage[], answers: readonly ToolMessage[]): ChatMessage[] {
  return messages.concat(answers);
}

/** An agent's output: its answer or failure, its own figures and its conversation. */
export function outcomeOf(context: AgentContext): AgentOutcome {
  return {
    id: context.input.id,
    agent: context.input.name,
    status: context.failure ? 'failed' : 'completed',
    ...(context.failure ? { reason: context.failure.reason, error: context.failure.error } : { output: context.output ?? '' }),
    turns: context.turns,
    toolCallsExecuted: context.own.toolCalls,
    own: context.own,
    messages: context.messages,
  };
}

/** An event with the header every event of this agent carries: run, agent, parent, parent's tool call, time. */
export function stamp(context: AgentContext, at: number, event: Announcement): TroupeEvent {
  return stampEvent(context.input, at, event);
}

/** An event with the header of the actor it is about: run, id, parent, parent's tool call, time. */
export function stampEvent(header: Pick<ActorHeader, 'runId' | 'id' | 'parentId' | 'toolCallId'>, at: number, event: Announcement): TroupeEvent {
  const stamped = { type: event.type, runId: header.runId, agentId: header.id, parentId: header.parentId, toolCallId: header.toolCallId, at };
  return Object.assign(stamped, event) as TroupeEvent;
}

/** A failure the runtime decides: why the agent failed, and what failed as plain JSON (its code, side, message). */
export function failure(reason: FailureReason, code: EndingCode, fault: Fault, message: string, retryable?: boolean): Failure {
  return { reason, error: ending(code, message, fault, retryable) };
}

// The failures the agent machine names (its `fail…` actions), one function each.

/** `CANCEL`: by a caller, a parent that ended, or shutdown. */
export const cancelled = (context: AgentContext, event: AgentEvent) =>
  failure('cancelled', 'cancelled', 'user', errorOf(event) ?? (context.startedAt === null ? 'Cancelled before it started.' : 'Cancelled.'));
/** `STOP` of an agent that has no answer to end with. */
export const stopped = (context: AgentContext, event: AgentEvent) =>
  failure('cancelled', 'cancelled', 'user', errorOf(event) ?? (context.startedAt === null ? 'Stopped before it started.' : 'Stopped before it gave an answer.'));
/** `DENY`: a person or the delegation policy refused it. */
export const denied = (_: AgentContext, event: AgentEvent) => failure('denied', 'denied', 'user', errorOf(event) ?? 'Denied.');
/** The last turn was used without an answer. */
export const outOfTurns = (context: AgentContext) =>
  failure('max_turns', 'max_turns', 'user', `The agent used all ${context.input.maxTurns} turns without a final answer.`);
/** The turns ran out while required tools were still not called. */
export const missingRequired = (context: AgentContext) =>
  failure(
    'required_tools',
    'required_tools',
    'model',
    `The agent used ${context.input.maxTurns === 1 ? 'its one turn' : `all ${context.input.maxTurns} turns`} without calling ${context.required.join(', ')}, which it must call before it finishes.`,
  );
/** A turn went past a budget: the agent's own or one above it, as `why` says. */
export const overBudget = (why: string) => failure('budget', 'budget_exceeded', 'user', why);
/** The model answered with nothing. */
export const emptyAnswer = () => failure('error', 'empty_answer', 'model', 'The model gave an empty answer.', true);
/** `finish` without an answer, and none given before. */
export const noAnswer = () => failure('error', 'no_answer', 'model', 'The agent called finish without an answer, and it had given none before.');
/** What an idle timeout's message says to do about it. */
const IDLE_HINT = '(idleTimeoutMs: raise it on the runtime, the agent or the spawn for longer waits)';
/** No progress while the model thought (`thinking`) or tools ran (`acting`). */
export const idle = (context: AgentContext, fault: 'model' | 'tool') =>
  failure('timeout', 'idle_timeout', fault, `No progress for ${context.input.idleTimeoutMs} ms while ${fault === 'model' ? 'waiting for the model' : 'tools ran'} ${IDLE_HINT}.`, true);

function errorOf(event: AgentEvent): string | undefined {
  return 'error' in event && typeof event.error === 'string' ? event.error : undefined;
}

/** An agent's figures with its running time set: from `startedAt` to `now` (zero if it never started). */
export function settled(own: Figures, startedAt: number | null, now: number): Figures {
  return { ...own, durationMs: startedAt === null ? 0 : now - startedAt };
}

/** A resident's answer: its reply recorded, and its text kept as the agent's result so far (an empty one is not). */
export function withAnswer(context: AgentContext, turn: ModelTurn): Pick<AgentContext, 'messages' | 'own' | 'output'> {
  const { messages, own } = withTurn(context, turn);
  const answer = turn.toolCalls.length === 0 && turn.content.trim() !== '' ? turn.content : context.output;
  return { messages, own, output: answer };
}

/**
 * The conversation after reading mail: each waiting call's tool message gets its answer, then every message from the
 * inbox follows as a user message that says who sent it.
 */
export function withMail(
  messages: ChatMessage[],
  answers: readonly { callId: string; content: string; isError: boolean }[],
  mail: readonly Message[],
): ChatMessage[] {
  const next = messages.slice(); // exact in size, as `concat` below (see withToolMessages)
  for (const answer of answers) {
    for (let index = next.length - 1; index >= 0; index -= 1) {
      const message = next[index]!;
      if (message.role === 'tool' && message.toolCallId === answer.callId) {
        const answered = { ...message, content: answer.content };
        if (answer.isError) answered.isError = true;
        next[index] = answered;
        break;
      }
    }
  }
  return mail.length === 0 ? next : next.concat(mail.map((message): ChatMessage => ({ role: 'user', content: renderMessage(message) })));
}

