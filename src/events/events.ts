import { z } from 'zod';
import { ErrorInfo } from '../failure.js';
import { Message } from '../messaging/Message.js';
import { Usage } from '../models/Model.js';

/** Why an agent failed. */
export const FailureReason = z.enum(['error', 'timeout', 'cancelled', 'max_turns', 'budget', 'denied', 'required_tools']);
/** Why an agent failed. */
export type FailureReason = z.infer<typeof FailureReason>;

/** The fields every event carries. */
const base = {
  /** The runtime that produced the event. */
  runId: z.string(),
  /** The agent the event is about. */
  agentId: z.string(),
  /** The agent that spawned it, or null for a top-level agent. */
  parentId: z.string().nullable(),
  /** The parent's tool call that started this agent, if any. */
  toolCallId: z.string().nullable(),
  /** Milliseconds on the actor system's clock. */
  at: z.number(),
};

/**
 * An agent was created (or an ended one was resumed with a new task); it waits in `pending` until the supervisor
 * starts it.
 */
export const AgentSpawned = z.object({
  type: z.literal('agent.spawned'),
  ...base,
  name: z.string(),
  depth: z.number().int().nonnegative(),
  task: z.string(),
  /** The caller's short summary of the task, for a delegated agent. */
  description: z.string().optional(),
  /** True when the caller went on without waiting for this agent. */
  background: z.boolean().optional(),
  /** True when this continues an ended agent's session under the same id. */
  resumed: z.boolean().optional(),
  /** True for a resident agent: it waits for messages after answering, until it is stopped. */
  resident: z.boolean().optional(),
  /** True for a group (a pattern such as `sequence`): no model, its children do the work. */
  group: z.boolean().optional(),
  /** For a restarted agent: which attempt this is (2 for the first restart); absent on the first. */
  attempt: z.number().int().positive().optional(),
});

/** The supervisor started the agent. */
export const AgentStarted = z.object({ type: z.literal('agent.started'), ...base, name: z.string() });

/** The agent answered without tool calls; `output` is that answer. */
export const AgentCompleted = z.object({
  type: z.literal('agent.completed'),
  ...base,
  name: z.string(),
  output: z.string(),
  turns: z.number().int().nonnegative(),
});

/** The agent ended without an answer. */
export const AgentFailed = z.object({
  type: z.literal('agent.failed'),
  ...base,
  name: z.string(),
  reason: FailureReason,
  /** What failed, as plain JSON: its code, message and side. */
  error: ErrorInfo,
  turns: z.number().int().nonnegative(),
});

/**
 * A failed agent is started again (its `restart` is `on-failure`, the failure's reason is `error` or `timeout`, and
 * its restart intensity has room): under the same id, fresh from the input it was launched with. Its caller goes on
 * waiting and gets the last attempt's result. Comes after the failed attempt's `agent.failed` and before the new
 * attempt's `agent.spawned`. In a `one-for-all` group, a member still running when a sibling was restarted is
 * cancelled and restarted too: its event names that sibling in `by`, with `cancelled` as its reason.
 */
export const AgentRestarted = z.object({
  type: z.literal('agent.restarted'),
  ...base,
  name: z.string(),
  /** The attempt that starts now: 2 for the first restart. */
  attempt: z.number().int().positive(),
  /** Why the attempt before ended. */
  reason: FailureReason,
  /** How the attempt before failed, as in its `agent.failed`. */
  error: ErrorInfo,
  /** In a `one-for-all` group: the id of the member whose failure restarted this one. */
  by: z.string().optional(),
});

/**
 * A failed agent that would have been restarted is not, and its failure goes to its caller as it is: `max` restarts
 * within `withinMs` were used up (its own, or its `one-for-all` group's), or a run limit (`maxAgents`, a spent
 * budget) refused the new attempt (`refused` says which). Comes after its last `agent.failed`.
 */
export const AgentEscalated = z.object({
  type: z.literal('agent.escalated'),
  ...base,
  name: z.string(),
  /** Restarts within the window when it failed. */
  restarts: z.number().int().nonnegative(),
  /** The restarts allowed within the window. */
  max: z.number().int().nonnegative(),
  /** The window, in ms on the runtime's clock. */
  withinMs: z.number().positive(),
  /** Why the last attempt failed. */
  reason: FailureReason,
  /** How the last attempt failed. */
  error: ErrorInfo,
  /** Set when a run limit refused the restart (the intensity had room): what it said. */
  refused: z.string().optional(),
});

/** A model turn began. */
export const ModelRequested = z.object({
  type: z.literal('model.request'),
  ...base,
  turn: z.number().int().positive(),
  model: z.string(),
  messages: z.number().int().nonnegative(),
  tools: z.number().int().nonnegative(),
});

/** A model turn ended with a reply. */
export const ModelResponded = z.object({
  type: z.literal('model.response'),
  ...base,
  turn: z.number().int().positive(),
  model: z.string(),
  usage: Usage,
  costUsd: z.number().nonnegative(),
  durationMs: z.number().nonnegative(),
  toolCalls: z.number().int().nonnegative(),
  /** The reply's text, when it has any (a reply may hold only tool calls): what the conversation shows. */
  content: z.string().optional(),
});

/**
 * A model call failed in a way another try may mend (a `ModelError` with `retryable`: no answer, a time-out, HTTP 408,
 * 409, 429, 5xx), and is tried again after `delayMs` on the runtime's clock. `attempt` is the try that failed (1 for
 * the first); the next is `attempt + 1`. The turn's `model.request` came before it, its `model.response` (or the
 * agent's `agent.failed`, when the tries run out) comes after.
 */
export const ModelRetried = z.object({
  type: z.literal('model.retry'),
  ...base,
  attempt: z.number().int().positive(),
  /** The wait before the next try, in ms: the backoff drawn, or the server's `retry-after` (both at most `maxMs`). */
  delayMs: z.number().nonnegative(),
  /** Why the try failed, as in `agent.failed`: the code, message and side of the cause, its `status` and `retryable`. */
  error: ErrorInfo,
});

/** A tool call began (or was refused at once, in which case a `tool.result` with an error follows). */
export const ToolCalled = z.object({
  type: z.literal('tool.call'),
  ...base,
  callId: z.string(),
  tool: z.string(),
  arguments: z.string(),
});

/** A tool call ended. */
export const ToolResulted = z.object({
  type: z.literal('tool.result'),
  ...base,
  callId: z.string(),
  tool: z.string(),
  status: z.enum(['ok', 'error']),
  durationMs: z.number().nonnegative(),
  error: z.string().optional(),
  /** What the model is given back for an ok call (the tool message's text); a failed call's is `error`. */
  content: z.string().optional(),
  /**
   * True for a call that waits for messages (`wait_for_messages`, `send_message` with `expect_reply`): it ended its
   * part of the batch by starting the wait, and what it gives the model comes with its `tool.wait_ended` (since
   * recording version 7).
   */
  waiting: z.literal(true).optional(),
});

/**
 * How a tool call's wait for messages ended: `message` (a message it waited for came), `reply` (the reply came),
 * `collected` (a collecting wait's time passed, with however many messages came), `timeout` (nothing came in time),
 * `ended` (no reply can come: the agent that was to reply, or every subscriber of a topic that got the message, ended
 * without replying or dropped the message unread from its full inbox to make room).
 */
export const WaitOutcome = z.enum(['message', 'reply', 'collected', 'timeout', 'ended']);
/** How a tool call's wait for messages ended. */
export type WaitOutcome = z.infer<typeof WaitOutcome>;

/**
 * A tool call's wait for messages ended and the agent read its answer, at the start of its next turn (since recording
 * version 7): the outcome the model is told, as ok or error (a wait that timed out, or whose replier ended, is an
 * error the model sees, and counts as a tool error in the metrics). A wait cut short by its agent's end has none.
 */
export const ToolWaitEnded = z.object({
  type: z.literal('tool.wait_ended'),
  ...base,
  callId: z.string(),
  tool: z.string(),
  outcome: WaitOutcome,
  status: z.enum(['ok', 'error']),
  /** The messages it took (none for `timeout` and `ended`). */
  messages: z.number().int().nonnegative(),
  /** From the start of the wait to its end, on the runtime's clock (the answer may be read later). */
  durationMs: z.number().nonnegative(),
  /** What the model is told of a wait that ended in error. */
  error: z.string().optional(),
});

/** A tool call was refused before it ran: the tool is not on the agent's list, or delegation is out of reach. */
export const ToolDenied = z.object({
  type: z.literal('tool.denied'),
  ...base,
  callId: z.string(),
  tool: z.string(),
  /**
   * `not_allowed`: not on the agent's list; `unknown`: no such tool; `depth_limit`: delegation is too deep; `denied`:
   * the tool policy refused it, or a person did (since recording version 6).
   */
  reason: z.enum(['not_allowed', 'unknown', 'depth_limit', 'denied']),
  error: z.string(),
});

/**
 * Why a call of a planned turn does not start at once: `conflict` (it touches what an earlier call touches, and one
 * of them writes), `sequential` (the agent runs its calls one at a time, `enableParallelExecution: false`), or
 * `concurrency_cap` (more calls are ready than `maxToolConcurrency` lets run).
 */
export const ToolWaitCause = z.enum(['conflict', 'sequential', 'concurrency_cap']);
/** Why a call of a planned turn does not start at once. */
export type ToolWaitCause = z.infer<typeof ToolWaitCause>;

/** One call of a planned turn that waits, what it waits for and why. */
export const ToolWait = z.object({
  callId: z.string(),
  /** The calls it waits for: those it conflicts with, the one before it, or those that take the free slots first. */
  after: z.array(z.string()),
  cause: ToolWaitCause,
  /** The reason in words, such as `writes src/a.ts that call_1 reads`. */
  reason: z.string(),
});
/** One call of a planned turn that waits, what it waits for and why. */
export type ToolWait = z.infer<typeof ToolWait>;

/**
 * A turn's tool calls were planned, before any of them runs (only for a turn of more than one call that may run):
 * the stages (the calls that can run side by side, stage by stage) and each call that waits, with its reason. What
 * is known before the calls run: a call whose dependencies end may still wait for a free slot under a cap.
 */
export const ToolPlanned = z.object({
  type: z.literal('tool.plan'),
  ...base,
  /** Call ids by stage: a call's stage is one past the latest stage of the calls it waits for. */
  stages: z.array(z.array(z.string())),
  waits: z.array(ToolWait),
  /** The agent's `maxToolConcurrency` for the turn (1 when it runs its calls one at a time); absent without a cap. */
  maxConcurrency: z.number().int().positive().optional(),
});

/** How risky a delegation is, as the delegation policy judged it. */
export const Risk = z.enum(['low', 'medium', 'high']);
/** How risky a delegation is, as the delegation policy judged it. */
export type Risk = z.infer<typeof Risk>;

/**
 * Something waits for a person until `runtime.approve(requestId)` or `runtime.deny(requestId, reason)`: a delegation
 * (the sub-agent, this event's `agentId`, stays pending), or a tool call (`tool` is set; the calling agent, this
 * event's `agentId`, waits in `running.acting.waitingForPerson`).
 */
export const ApprovalRequested = z.object({
  type: z.literal('approval.requested'),
  ...base,
  requestId: z.string(),
  /** The name of the agent that would run (a delegation), or of the agent that called the tool. */
  name: z.string(),
  /** The task it would get, or the tool call (its name and arguments). */
  task: z.string(),
  risk: Risk,
  /** Why the policy asks, if it said. */
  reason: z.string().optional(),
  /** A tool call's: the tool, its category and the call's id. */
  tool: z.string().optional(),
  category: z.enum(['tool', 'sub_agent', 'mcp', 'file_op', 'db_op']).optional(),
  callId: z.string().optional(),
});

/** A person approved a delegation; the sub-agent joins the queue. */
export const ApprovalGranted = z.object({ type: z.literal('approval.granted'), ...base, requestId: z.string() });

/** A delegation was denied, by a person or by the policy; the sub-agent fails with `denied`. */
export const ApprovalDenied = z.object({
  type: z.literal('approval.denied'),
  ...base,
  /** The request a person denied, or null when the policy denied at once. */
  requestId: z.string().nullable(),
  reason: z.string(),
});

/**
 * A running agent waits for messages without holding a slot: a resident agent that answered and waits for its next
 * message (`idle`), or tool calls that wait for messages or a reply (`tool_call`).
 */
export const AgentWaiting = z.object({
  type: z.literal('agent.waiting'),
  ...base,
  reason: z.enum(['idle', 'tool_call']),
});

/** A message was sent (once, however many receivers it has). `agentId` is the sender (`runtime` for code). */
export const MessageSent = z.object({ type: z.literal('message.sent'), ...base, message: Message });

/** A copy of a message reached one receiver's inbox (or a call of its waiting for it). `agentId` is the receiver. */
export const MessageDelivered = z.object({
  type: z.literal('message.delivered'),
  ...base,
  messageId: z.string(),
  from: z.string(),
  topic: z.string().optional(),
});

/**
 * A message was lost at a receiver (`agentId`): refused by a full inbox (`inbox_full`), dropped as the oldest to make
 * room (`overflow`), or left unread when the receiver ended (`unread`).
 */
export const MessageDropped = z.object({
  type: z.literal('message.dropped'),
  ...base,
  messageId: z.string(),
  from: z.string(),
  reason: z.enum(['inbox_full', 'overflow', 'unread']),
});

/** A message reached nobody: an unknown or ended agent, a name with no (or several) live agents, a topic nobody reads. */
export const MessageDeadLetter = z.object({
  type: z.literal('message.dead_letter'),
  ...base,
  message: Message,
  reason: z.enum(['unknown_agent', 'ended', 'no_live_agent', 'ambiguous', 'no_subscribers']),
});

/** A key of the run's blackboard was written or deleted; `agentId` is the writer (`runtime` for code). */
export const BlackboardChanged = z.object({
  type: z.literal('blackboard.changed'),
  ...base,
  key: z.string(),
  /** The new value; absent when the key was deleted. */
  value: z.json().optional(),
  deleted: z.boolean().optional(),
});

/** One item of an agent's todo list: `pending`, `in_progress` (what it works on now) or `done`. */
export const TodoItem = z.object({
  /** Unique in its list, so a later write can refer to the same item. */
  id: z.string().trim().min(1).max(64),
  /** What is to be done. */
  content: z.string().trim().min(1).max(500),
  status: z.enum(['pending', 'in_progress', 'done']),
});
/** One item of an agent's todo list. */
export type TodoItem = z.infer<typeof TodoItem>;

/** The agent wrote its todo list (`todo_write`): `items` is the whole new list, in its order. */
export const TodoUpdated = z.object({
  type: z.literal('todo.updated'),
  ...base,
  /** The `todo_write` call that wrote it. */
  callId: z.string(),
  items: z.array(TodoItem),
});

/** Every event troupe emits, told apart by `type`. */
export const TroupeEvent = z.discriminatedUnion('type', [
  AgentSpawned,
  AgentStarted,
  AgentCompleted,
  AgentFailed,
  AgentRestarted,
  AgentEscalated,
  ModelRequested,
  ModelResponded,
  ModelRetried,
  ToolCalled,
  ToolResulted,
  ToolWaitEnded,
  ToolDenied,
  ToolPlanned,
  ApprovalRequested,
  ApprovalGranted,
  ApprovalDenied,
  AgentWaiting,
  MessageSent,
  MessageDelivered,
  MessageDropped,
  MessageDeadLetter,
  BlackboardChanged,
  TodoUpdated,
]);
/** Every event troupe emits, told apart by `type`. */
export type TroupeEvent = z.infer<typeof TroupeEvent>;

/** The `type` of every event. */
export type TroupeEventType = TroupeEvent['type'];

/** The event of one `type`. */
export type TroupeEventOf<T extends TroupeEventType> = Extract<TroupeEvent, { type: T }>;

/** The fields shared by all events of one agent; the agent machine fills them in. */
export type EventBase = Pick<TroupeEvent, 'runId' | 'agentId' | 'parentId' | 'toolCallId'>;
