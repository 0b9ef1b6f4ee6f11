import { Subject, type Observable } from 'rxjs';
import type { Caller } from '../actors/agentEnvironment.js';
import { clockNow, type Clock } from '../clock.js';
import {
  ConfigurationError,
  InboxFullError,
  ReplyTimeoutError,
  RuntimeClosedError,
  UndeliverableError,
} from '../errors.js';
import type { Announcement } from '../machines/agentTypes.js';
import type { AgentRecord } from '../machines/agentTable.js';
import type { SupervisorEvent } from '../machines/supervisorMachine.js';
import { Message, RUNTIME_ADDRESS, TOPIC_PREFIX, TopicName } from '../messaging/Message.js';
import type { MessagePolicy, MessageReceipt, Messaging } from '../messaging/Messaging.js';
import type { PostOffice, RouteReport } from '../messaging/PostOffice.js';
import { CallerMessaging } from './CallerMessaging.js';

/** What the messenger needs from the runtime. */
export interface MessengerHost {
  readonly clock: Clock;
  readonly postOffice: PostOffice;
  readonly policy: MessagePolicy | undefined;
  /** Sends an event to the supervisor. */
  send(event: SupervisorEvent): void;
  /** The supervisor's record of an agent. */
  record(id: string): AgentRecord | undefined;
  /** The `canMessage` list of an agent's definition (undefined: it may message anyone). */
  contactsOf(agentName: string): readonly string[] | undefined;
  /** Puts an event about an agent (or `runtime`) into `events$`, with the header of its record. */
  announce(agentId: string, body: Announcement): void;
  /** True once the runtime has been shut down. */
  closed(): boolean;
  /** True when an inspector watches: messages of agents then leave through their actors (see `Caller.relay`). */
  readonly inspected: boolean;
}

/** What a send may add: the message it answers, and the way out through the sending agent's actor. */
interface Extra {
  replyTo?: string;
  relay?: (message: Message) => boolean;
}

interface PendingRequest {
  resolve: (reply: Message) => void;
  reject: (error: Error) => void;
  timer?: unknown;
  /**
   * The agents the request reached that may still reply (one, or the subscribers of a topic that got it): once none is
   * left (each ended without replying, or dropped it unread), the request fails.
   */
  receivers?: string[];
  /** How many it reached. */
  reached?: number;
}

/**
 * The runtime's side of messaging: makes and checks messages (zod at the edge, `canMessage` lists, the message
 * policy), hands them to the supervisor to route, turns what routing did into events and receipts, answers
 * `runtime.request` with replies to code, and gives each tool call its {@link Messaging} service.
 */
export class Messenger {
  private readonly all = new Subject<Message>();
  private readonly receipts = new Map<string, (report: RouteReport) => void>();
  private readonly requests = new Map<string, PendingRequest>();
  private counter = 0;

  /** Every message sent, once each, as it was sent. */
  readonly messages$: Observable<Message> = this.all.asObservable();

  constructor(private readonly host: MessengerHost) {}

  /**
   * Sends a message and resolves with what routing did (see {@link Messaging.send} for the addresses); what is wrong
   * with it is a rejection. Promise chains rather than async functions down this path: a trader's publish went through
   * four, about two promises each.
   */
  send(from: string, to: string, content: string, extra: Extra = {}): Promise<RouteReport> {
    try {
      if (this.host.closed()) throw new RuntimeClosedError();
      return this.post(this.make(from, to, content, extra.replyTo), extra.relay);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** Sends and throws what the sender must hear: a dead letter, or a full inbox (for a message to one agent). */
  deliver(from: string, to: string, content: string, extra: Extra = {}): Promise<MessageReceipt> {
    // `to` is read once the message has been made: an address that is not text is refused there, as invalid.
    return this.send(from, to, content, extra).then((report) => receiptOf(report, !to.startsWith(TOPIC_PREFIX)));
  }

  /** Sends from code and waits for the reply addressed to code (`runtime`). */
  async request(to: string, content: string, timeoutMs?: number): Promise<Message> {
    // Closed, the supervisor routes nothing: the reply would be waited for for ever.
    if (this.host.closed()) throw new RuntimeClosedError();
    if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
      throw new ConfigurationError('timeoutMs must be a positive, finite number (leave it out to wait for ever).');
    }
    const message = this.make(RUNTIME_ADDRESS, to, content);
    const reply = new Promise<Message>((resolve, reject) => {
      const pending: PendingRequest = { resolve, reject };
      if (timeoutMs !== undefined) {
        pending.timer = this.host.clock.setTimeout(() => {
          this.requests.delete(message.id);
          reject(new ReplyTimeoutError(message.id, timeoutMs));
        }, timeoutMs);
      }
      this.requests.set(message.id, pending);
    });
    try {
      const { deliveredTo } = replyReceipt(await this.post(message));
      const pending = this.requests.get(message.id);
      // The receivers may reply: one, or any subscriber of a topic that got it (code, `runtime`, never ends). One may
      // have ended already, between routing and this line (code that stops it right after the request): `ended` did
      // not know it as a receiver then, and it cannot reply now.
      if (pending && deliveredTo[0] !== RUNTIME_ADDRESS) {
        pending.reached = deliveredTo.length;
        pending.receivers = deliveredTo.filter((receiver) => this.host.postOffice.isOpen(receiver));
        if (pending.receivers.length === 0) this.noReceiverLeft(message.id, pending, deliveredTo[deliveredTo.length - 1]!);
      }
    } catch (error) {
      this.dropRequest(message.id);
      throw error;
    }
    return reply;
  }

  /** What the supervisor's router did with a message: events, the sender's receipt, replies to code. */
  routed(report: RouteReport): void {
    const { message } = report;
    for (const delivery of report.deliveries) {
      if (delivery.to === RUNTIME_ADDRESS) {
        this.answer(delivery.message);
        continue;
      }
      if (delivery.outcome === 'inbox_full') {
        this.emit(delivery.to, { type: 'message.dropped', messageId: message.id, from: message.from, reason: 'inbox_full' });
        continue;
      }
      if (delivery.dropped) {
        const old = delivery.dropped;
        this.emit(delivery.to, { type: 'message.dropped', messageId: old.id, from: old.from, reason: 'overflow' });
        // A request from code dropped unread by the last receiver that could reply gets no reply: it fails now,
        // rather than wait for ever.
        const pending = this.requests.get(old.id);
        if (pending && leaves(pending, delivery.to)) {
          this.dropRequest(old.id);
          pending.reject(new InboxFullError(delivery.to, old.id));
        }
      }
      const { topic } = delivery.message;
      this.emit(
        delivery.to,
        topic === undefined
          ? { type: 'message.delivered', messageId: message.id, from: message.from }
          : { type: 'message.delivered', messageId: message.id, from: message.from, topic },
      );
    }
    if (report.deadLetter) this.emit(message.from, { type: 'message.dead_letter', message, reason: report.deadLetter });
    const receipt = this.receipts.get(message.id);
    this.receipts.delete(message.id);
    receipt?.(report);
  }

  /** An agent ended: requests from code that it never answered, and no other receiver can, fail (no reply can come now). */
  ended(id: string): void {
    for (const [messageId, pending] of this.requests) {
      if (leaves(pending, id)) this.noReceiverLeft(messageId, pending, id);
    }
  }

  /** Fails a request none of whose receivers can reply any more; `last` is the one that ended last. */
  private noReceiverLeft(messageId: string, pending: PendingRequest, last: string): void {
    this.dropRequest(messageId);
    const text =
      (pending.reached ?? 1) > 1
        ? `Every agent that got ${messageId} (${pending.reached}) ended without replying; no reply can come.`
        : `Agent ${last} ended without replying to ${messageId}.`;
    pending.reject(new UndeliverableError(last, 'ended', text));
  }

  /** The messages an ended agent never read: each is reported as dropped. */
  unread(id: string, messages: readonly Message[]): void {
    for (const message of messages) this.emit(id, { type: 'message.dropped', messageId: message.id, from: message.from, reason: 'unread' });
  }

  /** Ends every request still waiting (at shutdown) and completes `messages$`. */
  close(): void {
    for (const [id, pending] of this.requests) {
      this.dropRequest(id);
      pending.reject(new RuntimeClosedError());
    }
    this.all.complete();
  }

  /** The messaging service a tool gets, bound to the agent that called it. */
  forCaller(caller: Caller): Messaging {
    return new CallerMessaging(this, this.host, caller);
  }

  /** Makes a message (zod-checked at the edge); for `CallerMessaging`. */
  make(from: string, to: string, content: string, replyTo?: string): Message {
    const parsed = Message.safeParse({
      id: `msg:${(this.counter += 1)}`,
      from,
      to,
      content,
      ...(replyTo === undefined ? {} : { replyTo }),
      sentAt: clockNow(this.host.clock),
    });
    if (!parsed.success) throw new ConfigurationError(`The message is not valid: ${parsed.error.issues[0]?.path.join('.')} ${parsed.error.issues[0]?.message}`);
    if (to.startsWith(TOPIC_PREFIX)) readTopic(to.slice(TOPIC_PREFIX.length));
    return parsed.data;
  }

  /** Hands a message to the supervisor to route; resolves with what routing did. For `CallerMessaging`. */
  post(message: Message, relay?: (message: Message) => boolean): Promise<RouteReport> {
    const routed = new Promise<RouteReport>((resolve) => this.receipts.set(message.id, resolve));
    this.emit(message.from, { type: 'message.sent', message });
    // Under an inspector a tool's message leaves through its agent's actor (the sender shows); else straight in.
    if (!(relay && this.host.inspected && relay(message))) this.host.send({ type: 'MESSAGE.SEND', message });
    // messages$ hears of it once it has gone: code that answers there (a reply to an agent's question to `runtime`)
    // sends after the question, not before it in the events and in a recording.
    if (this.all.observed) this.all.next(message); // a Subject nobody watches still walks its (empty) list
    return routed;
  }

  private answer(message: Message): void {
    const pending = message.replyTo === undefined ? undefined : this.requests.get(message.replyTo);
    this.emit(RUNTIME_ADDRESS, { type: 'message.delivered', messageId: message.id, from: message.from });
    if (!pending) return;
    this.dropRequest(message.replyTo!);
    pending.resolve(message);
  }

  private dropRequest(id: string): void {
    const pending = this.requests.get(id);
    if (!pending) return;
    this.requests.delete(id);
    if (pending.timer !== undefined) this.host.clock.clearTimeout(pending.timer);
  }

  private emit(agentId: string, body: Announcement): void {
    this.host.announce(agentId, body);
  }
}

/** Takes `receiver` off the receivers of a request that may still reply; true when it was the last of them. */
function leaves(pending: PendingRequest, receiver: string): boolean {
  const at = pending.receivers?.indexOf(receiver) ?? -1;
  if (at < 0) return false;
  pending.receivers!.splice(at, 1);
  return pending.receivers!.length === 0;
}

/** A receipt; for a message to one receiver, a dead letter or a full inbox throws. */
export function receiptOf(report: RouteReport, single: boolean): MessageReceipt {
  const { message } = report;
  if (report.deadLetter && (single || report.deadLetter !== 'no_subscribers')) {
    throw new UndeliverableError(message.to, report.deadLetter, deadLetterText(report));
  }
  const deliveredTo: string[] = [];
  const refusedBy: string[] = [];
  const dropped: MessageReceipt['dropped'] = [];
  for (const delivery of report.deliveries) {
    (delivery.outcome === 'delivered' ? deliveredTo : refusedBy).push(delivery.to);
    if (delivery.dropped) dropped.push({ messageId: delivery.dropped.id, at: delivery.to });
  }
  if (single && refusedBy.length > 0) throw new InboxFullError(refusedBy[0]!, message.id);
  return { id: message.id, deliveredTo, refusedBy, dropped };
}

/**
 * The receipt of a message whose reply is awaited: it must reach someone who can answer. To one agent, a dead letter or
 * a full inbox throws; to a topic, only when no subscriber got it (a full inbox at one subscriber does not stop the
 * others from answering).
 */
export function replyReceipt(report: RouteReport): MessageReceipt {
  const receipt = receiptOf(report, !report.message.to.startsWith(TOPIC_PREFIX) || report.deadLetter !== undefined);
  if (receipt.deliveredTo.length === 0) throw new InboxFullError(receipt.refusedBy[0] ?? report.message.to, report.message.id);
  return receipt;
}

function deadLetterText(report: RouteReport): string {
  const { to } = report.message;
  switch (report.deadLetter) {
    case 'ended':
      return `Agent ${to} has ended; it reads no more messages.`;
    case 'unknown_agent':
      return `No agent has the id ${to}.`;
    case 'no_live_agent':
      // A group's id is not an agent's: no agent is named so, and a group reads no messages.
      if (to.startsWith('group:')) return `${to} is a group, which reads no messages: send to its members.`;
      return `No live agent is named "${to}".`;
    case 'ambiguous':
      return `${report.candidates?.length ?? 'Several'} live agents are named "${to}" (${report.candidates?.join(', ')}); send to one of their ids.`;
    default:
      return `Nobody subscribes to ${to}.`;
  }
}

/**
 * A topic name, checked; anything else is a `ConfigurationError`. A topic's address (`topic:news`) is refused, as a
 * spawn's `subscribe` refuses it, rather than taken for a topic of that name that no one else uses.
 */
export function readTopic(topic: string): string {
  if (typeof topic === 'string' && topic.startsWith(TOPIC_PREFIX)) {
    throw new ConfigurationError(`"${topic}" is not a topic name (give the name, without "${TOPIC_PREFIX}").`);
  }
  const parsed = TopicName.safeParse(topic);
  if (!parsed.success) throw new ConfigurationError(`Topic "${topic}" ${parsed.error.issues[0]?.message ?? 'is not valid'}.`);
  return parsed.data;
}

/** A wait's time limit, checked: a positive number of ms, or none (undefined). */
export function checkedTimeout(timeoutMs: number | undefined): number | undefined {
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) throw new ConfigurationError('timeout_ms must be a positive number.');
  return timeoutMs;
}
