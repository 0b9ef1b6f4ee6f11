import type { ToolSignal } from '../tools/toolSignal.js';
import type { Message } from './Message.js';

/** What a sent message did. */
export interface MessageReceipt {
  /** The message's id; a reply names it in `replyTo`. */
  id: string;
  /** The ids of the agents whose inbox (or waiting call) got it (`runtime` for a message to code). */
  deliveredTo: string[];
  /** Receivers whose full inbox refused it. */
  refusedBy: string[];
  /** Older messages dropped to make room for it (at receivers set to `drop-oldest`). */
  dropped: { messageId: string; at: string }[];
}

/** Options of {@link Messaging.send}. */
export interface SendOptions {
  /** Wait for the reply: the calling tool's result becomes the reply (or a timeout error). */
  expectReply?: boolean;
  /**
   * How long to wait for the reply, on the runtime's clock (default: for ever). Only with `expectReply`: without it the
   * send is refused (a `ConfigurationError`, the message not sent) rather than the limit dropped.
   */
  timeoutMs?: number;
}

/** Options of {@link Messaging.waitForMessages}. */
export interface WaitOptions {
  /** Only messages from this agent (an id or a name; a topic, `topic:<name>`, is refused: its messages come from their publishers). */
  from?: string;
  /** Give up after this long on the runtime's clock (default: wait for ever). */
  timeoutMs?: number;
  /** Wait the whole `timeoutMs` and take every message that came, instead of waking on the first. */
  collect?: boolean;
}

/**
 * What a running tool may do with messages, on behalf of the agent that called it (`context.messaging`). The
 * built-in messaging tools use it; a tool of your own may too. Refusals throw typed errors (`InboxFullError`,
 * `UndeliverableError`, `MessageRefusedError`), which become error results the model sees.
 */
export interface Messaging {
  /**
   * Sends a message to an agent (id or name), a topic (`topic:<name>`) or `runtime`. With `expectReply` it returns
   * a signal that makes the calling tool's result the reply, once it comes (not the reply itself: return the signal).
   * A call waits for one thing: a second `expectReply` or `waitForMessages` in the same call is a `ConfigurationError`.
   */
  send(to: string, content: string, options?: SendOptions): Promise<MessageReceipt | ToolSignal>;
  /** Answers the message the agent read last (or the one named), to its sender. */
  reply(content: string, messageId?: string): Promise<MessageReceipt>;
  /** Sends a message to every subscriber of a topic but the caller. */
  publish(topic: string, content: string): Promise<MessageReceipt>;
  /** Subscribes the calling agent to a topic. */
  subscribe(topic: string): void;
  /** Ends the calling agent's subscription to a topic. */
  unsubscribe(topic: string): void;
  /** Makes the calling tool's result the messages that come next (the agent waits in `running.waiting`). */
  waitForMessages(options?: WaitOptions): ToolSignal;
  /** Ends the calling agent after this batch of tool calls, with `answer` (or its last answer) as its result. */
  finish(answer?: string): ToolSignal;
  /** Stops one of the caller's own sub-agents: it completes with its last answer (or fails with `cancelled`). */
  stop(agentId: string): void;
}

/** What a message policy is asked about one message an agent wants to send. */
export interface MessageRequest {
  /** The sender's id and name. */
  from: { id: string; name: string };
  /** The address it goes to. */
  to: string;
  /** The topic, for a message to a topic. */
  topic?: string;
  content: string;
}

/** A message policy's answer. */
export type MessageDecision = 'allow' | { decision: 'allow' } | { decision: 'deny'; reason: string };

/**
 * Decides every message an agent sends (code's own messages are not asked about), at once: a policy that throws,
 * answers otherwise, or returns a promise (an `async` function) refuses the message.
 */
export type MessagePolicy = (request: MessageRequest) => MessageDecision;

export type { Message };
