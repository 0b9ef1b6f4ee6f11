import type { Caller } from '../actors/agentEnvironment.js';
import { ConfigurationError, MessageRefusedError, UndeliverableError, errorMessage } from '../errors.js';
import { RUNTIME_ADDRESS, TOPIC_PREFIX, agentNameOf, type Message } from '../messaging/Message.js';
import type { MessageReceipt, Messaging, SendOptions, WaitOptions } from '../messaging/Messaging.js';
import { isPromiseLike } from '../promiseLike.js';
import { finishSignal, waitSignal, type ToolSignal } from '../tools/toolSignal.js';
import { readTopic, replyReceipt, checkedTimeout, type Messenger, type MessengerHost } from './Messenger.js';

/**
 * The {@link Messaging} service of one tool call, bound to the agent that made it: what `send_message`, `reply`,
 * `publish`, `subscribe`, `wait_for_messages`, `finish` and `stop_agent` (and tools of one's own) do with messages.
 */
export class CallerMessaging implements Messaging {
  constructor(
    private readonly messenger: Messenger,
    private readonly host: MessengerHost,
    private readonly caller: Caller,
  ) {}

  /** How this caller's messages leave: through its agent's actor, when it has one. */
  private get out(): { relay?: (message: Message) => boolean } {
    return this.caller.relay ? { relay: this.caller.relay } : {};
  }

  async send(to: string, content: string, options: SendOptions = {}): Promise<MessageReceipt | ToolSignal> {
    this.check(to, content);
    if (!options.expectReply && options.timeoutMs !== undefined) {
      throw new ConfigurationError('timeoutMs is how long to wait for the reply: give expectReply: true with it, or leave it out. The message was not sent.');
    }
    if (!options.expectReply) return this.messenger.deliver(this.caller.agentId, to, content, this.out);
    this.oneWait('send_message');
    const message = this.messenger.make(this.caller.agentId, to, content);
    // The wait is registered before the message leaves, so a quick reply cannot pass it by.
    const { agentId, toolCallId } = this.caller;
    this.host.postOffice.await(agentId, { callId: toolCallId, tool: this.toolName('send_message'), replyTo: message.id, timeoutMs: checkedTimeout(options.timeoutMs) });
    try {
      const receipt = replyReceipt(await this.messenger.post(message, this.caller.relay));
      // The receivers may reply: one, or any subscriber of a topic that got it, so the wait ends only when none of
      // them can any more (as for runtime.request).
      this.host.postOffice.expectReply(agentId, toolCallId, receipt.deliveredTo);
    } catch (error) {
      this.host.postOffice.cancelWait(agentId, toolCallId);
      throw error;
    }
    return waitSignal();
  }

  async reply(content: string, messageId?: string): Promise<MessageReceipt> {
    const original = this.host.postOffice.received(this.caller.agentId, messageId);
    if (!original) {
      throw new UndeliverableError(
        messageId ?? '(none)',
        'no_message',
        messageId === undefined ? 'There is no message to reply to yet.' : `No message ${messageId} was read by this agent lately.`,
      );
    }
    this.check(original.from, content, true);
    return this.messenger.deliver(this.caller.agentId, original.from, content, Object.assign({ replyTo: original.id }, this.out));
  }

  publish(topic: string, content: string): Promise<MessageReceipt> {
    try {
      const address = `${TOPIC_PREFIX}${readTopic(topic)}`;
      this.check(address, content);
      return this.messenger.deliver(this.caller.agentId, address, content, this.out);
    } catch (error) {
      return Promise.reject(error); // refused: a rejection, as from the other methods
    }
  }

  subscribe(topic: string): void {
    this.host.postOffice.subscribe(this.caller.agentId, readTopic(topic));
  }

  unsubscribe(topic: string): void {
    this.host.postOffice.unsubscribe(this.caller.agentId, readTopic(topic));
  }

  waitForMessages(options: WaitOptions = {}): ToolSignal {
    if (options.collect && options.timeoutMs === undefined) {
      throw new ConfigurationError('Collecting messages needs a timeout_ms: how long to collect them.');
    }
    this.oneWait('wait_for_messages');
    if (options.from?.startsWith(TOPIC_PREFIX)) {
      throw new ConfigurationError(
        `from names the agent a message comes from (its id or name), not a topic: messages on ${options.from} come from their publishers. Wait without from to take them.`,
      );
    }
    this.host.postOffice.await(this.caller.agentId, {
      callId: this.caller.toolCallId,
      tool: this.toolName('wait_for_messages'),
      from: options.from,
      collect: options.collect === true,
      timeoutMs: checkedTimeout(options.timeoutMs),
    });
    return waitSignal();
  }

  /**
   * Refuses a second wait in one tool call: a call has one result, so the answer of its first wait (a reply) would be
   * lost under the second's. A tool that asks several agents makes a call for each, or sends and then collects.
   */
  private oneWait(what: string): void {
    if (!this.host.postOffice.waitsIn(this.caller.agentId, this.caller.toolCallId)) return;
    throw new ConfigurationError(
      `This call already waits (for a reply, or for messages): a call waits for one thing, so ${what} cannot wait again in it. ` +
        'Make a call for each wait, or send without expecting a reply and collect the replies with wait_for_messages.',
    );
  }

  finish(answer?: string): ToolSignal {
    return finishSignal(answer);
  }

  stop(agentId: string): void {
    if (agentId === this.caller.agentId || !this.isBelow(agentId, this.caller.agentId)) {
      throw new MessageRefusedError(this.caller.agentId, agentId, `Agent ${agentId} is not one of the sub-agents of ${this.caller.agentId}; it may stop only its own.`);
    }
    this.host.send({ type: 'STOP', id: agentId, error: `Stopped by ${this.caller.agentId}.` });
  }

  /**
   * Checks that an agent may send to an address: its `canMessage` list, then the message policy. A reply skips the
   * list (an agent may always answer what it read) but not the policy, which decides every message an agent sends.
   */
  private check(to: string, content: string, isReply = false): void {
    const { caller } = this;
    const contacts = isReply ? undefined : this.host.contactsOf(caller.agentName);
    const target = to.startsWith(TOPIC_PREFIX) ? to : agentNameOf(to);
    if (contacts && !contacts.includes(target) && to !== RUNTIME_ADDRESS) {
      throw new MessageRefusedError(
        caller.agentId,
        to,
        `Agent "${caller.agentName}" may not message ${to}. It may message: ${contacts.join(', ') || 'nobody'}.`,
      );
    }
    const { policy } = this.host;
    if (!policy) return;
    let decision;
    try {
      decision = policy({
        from: { id: caller.agentId, name: caller.agentName },
        to,
        ...(to.startsWith(TOPIC_PREFIX) ? { topic: to.slice(TOPIC_PREFIX.length) } : {}),
        content,
      });
    } catch (error) {
      throw new MessageRefusedError(caller.agentId, to, `The message policy failed, so the message is refused: ${errorMessage(error)}`);
    }
    if (decision === 'allow' || decision?.decision === 'allow') return;
    if (isPromiseLike(decision)) {
      // An async policy (the type says it answers at once): its answer would come after the message went, and its
      // rejection would be nobody's, an unhandled rejection that ends the process. It is taken and the message refused.
      Promise.resolve(decision).catch(() => {});
      const reason = "the policy answered with a promise; a message policy decides at once ('allow', or { decision: 'deny', reason })";
      throw new MessageRefusedError(caller.agentId, to, `The message to ${to} was refused: ${reason}.`);
    }
    const reason = decision?.decision === 'deny' ? decision.reason : `the policy gave an answer it may not give (${JSON.stringify(decision)})`;
    throw new MessageRefusedError(caller.agentId, to, `The message to ${to} was refused: ${reason}`);
  }

  /** The name of the tool that makes this call (a tool of one's own may wait too), or `fallback` where it is not known. */
  private toolName(fallback: string): string {
    const last = this.caller.messages[this.caller.messages.length - 1];
    const call = last?.role === 'assistant' ? last.toolCalls?.find((candidate) => candidate.id === this.caller.toolCallId) : undefined;
    return call?.name ?? fallback;
  }

  private isBelow(id: string, ancestorId: string): boolean {
    for (let at: string | null = id; at !== null; at = this.host.record(at)?.parentId ?? null) {
      if (at === ancestorId) return true;
    }
    return false;
  }
}
