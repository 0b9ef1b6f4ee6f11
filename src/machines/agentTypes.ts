import type { ModelTurn } from '../actors/callModel.js';
import type { ToolProgress } from '../actors/runTools.js';
import type { FailureReason, Risk, TroupeEvent } from '../events/events.js';
import type { ErrorInfo } from '../failure.js';
import type { Figures } from '../events/metrics.js';
import type { Message } from '../messaging/Message.js';
import type { ChatMessage } from '../models/Model.js';
import type { RetryPolicy } from '../retry.js';

/**
 * Limits on what an agent and everything it starts may spend together (its subtree): a model turn that would pass
 * one fails its agent with `budget` instead of calling more tools, and no agent may be started under a spent one.
 */
export interface AgentBudget {
  /** Model turns over the subtree. */
  maxTurns?: number;
  /** Input plus output tokens over all turns of the subtree. */
  maxTokens?: number;
  /** USD over all turns of the subtree. */
  maxCostUsd?: number;
}

/** What every actor of the tree (an agent, or a group) is made with, and stamps on its events. Plain JSON. */
export interface ActorHeader {
  /** Its id, such as `agent:researcher:V1StGXR8` or `group:sequence:V1StGXR8`. */
  id: string;
  /** The name of its definition (or of its pattern). */
  name: string;
  /** The runtime's run id. */
  runId: string;
  /** The agent (or group) that started it, or null. */
  parentId: string | null;
  /** The parent's tool call that started it, or null. */
  toolCallId: string | null;
  /** 0 at the top; an agent is one below its parent agent, a group adds none. */
  depth: number;
  /** Its task (an agent's last user message; a group's input or a summary of its steps). */
  task: string;
}

/** The input of one agent actor: plain JSON, so an agent could run in another process. */
export interface AgentInput extends ActorHeader {
  /** The caller's short summary of the task, for a delegated agent. */
  description?: string;
  /** True when the caller does not wait for this agent. */
  background?: boolean;
  /** True when this continues an ended agent's session (its `history`) under the same id. */
  resumed?: boolean;
  /** For a restarted agent: which attempt this is (2 for the first restart), from the same input as the first. */
  attempt?: number;
  /** The system prompt. */
  systemPrompt: string;
  /** The name of the model that answers it, for events. */
  model: string;
  /** The names of the tools it may call. */
  tools: string[];
  /** Messages to start from after the system prompt (an earlier conversation, or the caller's shared context). */
  history?: ChatMessage[];
  /**
   * Keep at most this many messages after the system prompt: older ones are dropped as the conversation grows, so a
   * long-lived agent's context (and memory) stays bounded. Default: keep everything.
   */
  historyLimit?: number;
  /** Model turns allowed before the agent fails with `max_turns` (counted anew when it is resumed). */
  maxTurns: number;
  /** How long the agent may make no progress before it fails with `timeout`. */
  idleTimeoutMs: number;
  /** Spending limits. */
  budget?: AgentBudget;
  /**
   * How its failed model calls are tried again (the spawn's, else its definition's, else the runtime's, else
   * `DEFAULT_RETRY`: 3 tries in all, waits from 500 ms doubling up to 30 s).
   */
  retry?: RetryPolicy;
  /**
   * A resident agent does not complete when it answers: it waits for messages (`running.waiting`) and answers them,
   * until it is stopped, calls `finish`, or runs out of turns or budget. Its result is its last answer.
   */
  resident?: boolean;
  /**
   * Tools the agent must have called (each at least once, without an error) before it gives its final answer or calls
   * `finish`; missing ones are named to it in a message and it goes on, until its turns run out (`required_tools`).
   */
  requiredToolCalls?: string[];
}

/** How an agent ended: its answer or its failure, its own figures, and its conversation. */
export interface AgentOutcome {
  id: string;
  agent: string;
  status: 'completed' | 'failed';
  output?: string;
  reason?: FailureReason;
  /** What failed, when it failed. */
  error?: ErrorInfo;
  turns: number;
  toolCallsExecuted: number;
  own: Figures;
  messages: ChatMessage[];
}

/** A delegation that waits for a person, as the supervisor tells the sub-agent. */
export interface ApprovalHold {
  requestId: string;
  risk: Risk;
  reason?: string;
}

/** The events an agent actor accepts. */
export type AgentEvent =
  /** The supervisor gives the agent a slot: it starts running. */
  | { type: 'START' }
  /** Stop now and fail with `cancelled`. */
  | { type: 'CANCEL'; error?: string }
  /** The delegation that made this agent needs a person's approval first. */
  | ({ type: 'HOLD' } & ApprovalHold)
  /** A person approved the delegation. */
  | { type: 'APPROVE' }
  /** The delegation was denied (by a person or the policy): fail with `denied`. */
  | { type: 'DENY'; error: string; requestId?: string }
  /** The agent waits for its sub-agents and lends its slot to them. */
  | { type: 'YIELD' }
  /** The agent has a slot again. */
  | { type: 'RESUME' }
  /** The idle timer ran out: no progress for `idleTimeoutMs`. */
  | { type: 'IDLE' }
  /**
   * A message reached the agent's inbox (or a call of its waiting for one); a waiting agent wakes if it may. `slot`:
   * the supervisor gives the waking agent a slot with it (it had one free), so it thinks at once.
   */
  | { type: 'MESSAGE'; message: Message; slot?: true }
  /** The calls the agent waits on have timed out: it wakes (with a slot, when `slot` says so). */
  | { type: 'WAKE'; slot?: true }
  /** End now: complete with the last answer, or fail with `cancelled` if there is none. */
  | { type: 'STOP'; error?: string }
  /**
   * This turn's model call failed and is tried again after a wait (`model.retry`): a retry is progress, so the idle
   * timer starts over (a wait is at most `retry.maxMs`).
   */
  | { type: 'MODEL.RETRY' }
  /** This turn's model call answered (from the agent's worker). */
  | { type: 'MODEL.DONE'; output: ModelTurn }
  /** This turn's model call failed (from the agent's worker). */
  | { type: 'MODEL.FAILED'; error: unknown }
  | ToolProgress;

/** The fields the agent adds to every event it announces. */
export type EventHeader = Pick<TroupeEvent, 'runId' | 'agentId' | 'parentId' | 'toolCallId' | 'at'>;
type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;
/** An event as an action names it: the header is filled in when it is emitted. */
export type Announcement = DistributiveOmit<TroupeEvent, keyof EventHeader>;

/** Why an agent failed, as it is kept until the agent ends. */
export interface Failure {
  reason: FailureReason;
  error: ErrorInfo;
}

/**
 * What an agent knows while it runs. The input is kept whole under `input` rather than spread into the context:
 * XState copies the context on every `assign`, and V8 copies an object of more than about 19 properties some
 * twenty times slower than a small one.
 */
export interface AgentContext {
  /** What the agent was made with. */
  input: AgentInput;
  messages: ChatMessage[];
  turns: number;
  own: Figures;
  startedAt: number | null;
  output: string | null;
  failure: Failure | null;
  /** Interactive tool calls now waiting for a person; the idle timeout is paused while any are. */
  waitingForPeople: number;
  /**
   * True while the agent holds one of the supervisor's `maxParallel` slots, as it was last told (`YIELD`, `RESUME`, its
   * turns). Without an inspector an agent is not told of a slot lent and returned while its tools run
   * (`quietSlotNotices`), and its slot guards ask the supervisor's table instead.
   */
  holdsSlot: boolean;
  /** The approval request the agent waits for, while it does. */
  approval: ApprovalHold | null;
  /** Its `requiredToolCalls` not called yet (without an error): empty when it has none left, or none at all. */
  required: readonly string[];
}
