import { clockNow, type Clock } from '../clock.js';
import { Inbox, type Overflow } from './Inbox.js';
import { RUNTIME_ADDRESS, TOPIC_PREFIX, agentNameOf, renderMessage, type Message } from './Message.js';
import type { WaitOutcome } from '../events/events.js';

/** Why a message reached nobody. */
export type DeadLetterReason = 'unknown_agent' | 'ended' | 'no_live_agent' | 'ambiguous' | 'no_subscribers';

/** What happened to one copy of a message at one receiver. */
export interface Delivery {
  /** The receiver's id (or `runtime`). */
  to: string;
  /** `delivered`: in its inbox (or handed to a call waiting for it); `inbox_full`: refused. */
  outcome: 'delivered' | 'inbox_full';
  /** The copy this receiver got (its `to` is the receiver's id; a topic's copy names the topic). */
  message: Message;
  /** The oldest message, dropped to make room (an inbox set to `drop-oldest`). */
  dropped?: Message;
}

/** What routing one message did. */
export interface RouteReport {
  /** The message as sent. */
  message: Message;
  /** One entry a receiver. */
  deliveries: Delivery[];
  /** Set when the message reached nobody. */
  deadLetter?: DeadLetterReason;
  /** For `ambiguous`: the live agents the name could mean. */
  candidates?: string[];
}

/** What a tool call that waits for messages waits for. */
export interface WaitSpec {
  /** The tool call whose result the messages become. */
  callId: string;
  /** Only messages from this agent (id or name). */
  from?: string;
  /** Only the reply to this message. */
  replyTo?: string;
  /** Wait the whole `timeoutMs` and take every matching message, instead of waking on the first. */
  collect?: boolean;
  /** Give up (or, collecting, stop) after this long on the runtime's clock; none waits for ever. */
  timeoutMs?: number;
  /** The tool that made the call, for its `tool.wait_ended` (default `wait_for_messages`). */
  tool?: string;
}

interface Wait extends WaitSpec {
  /**
   * `ended`: the agent expected to reply ended without replying; `dropped`: it dropped the message unread, to make
   * room in its full inbox (`drop-oldest`). Either way no reply can come.
   */
  state: 'open' | 'met' | 'timed_out' | 'ended' | 'dropped';
  messages: Message[];
  /** When it began and when it ended (met, timed out or ended), on the runtime's clock. */
  since: number;
  endedAt?: number;
  timer?: unknown;
  /**
   * For a wait for a reply: the agents that may send it, once the message reached them (one, or the subscribers of a
   * topic that got it), and how many of them may still reply: none left ends the wait.
   */
  repliers?: readonly string[];
  left?: number;
}

/** The answer a wait gives to its tool call, when the agent wakes. */
export interface WaitAnswer {
  callId: string;
  /** What the tool message says. */
  content: string;
  isError: boolean;
  /** The tool that waited. */
  tool: string;
  /** How the wait ended. */
  outcome: WaitOutcome;
  /** The messages it took. */
  messages: number;
  /** From the wait's start to its end, on the runtime's clock. */
  durationMs: number;
}

interface Mailbox {
  readonly id: string;
  readonly name: string;
  readonly inbox: Inbox;
  waits: Wait[];
  topics?: Set<string>;
  /**
   * Messages this agent has read lately, by id, for `reply`: every message of the turn it read last, and at least the
   * last {@link RECENT} it read.
   */
  recent?: Map<string, Message>;
  /** The last message it read. */
  last?: Message;
}

/** How an agent's inbox is set up. */
export interface InboxOptions {
  capacity: number;
  overflow: Overflow;
}

const RECENT = 64;

/**
 * The message side of the supervisor: a directory of live agents (by id and by name), each agent's bounded inbox,
 * topic subscriptions, and the tool calls waiting for messages. The supervisor routes every message through
 * {@link PostOffice.route}; an agent reads its mail with {@link PostOffice.take} at the start of its next turn.
 * Everything it holds is plain data; its only effects are timers on the runtime's clock and the `wake` callback.
 */
export class PostOffice {
  private readonly boxes = new Map<string, Mailbox>();
  private readonly byName = new Map<string, Set<string>>();
  private readonly topics = new Map<string, Set<string>>();
  /**
   * Open waits for a reply, by the agent that should send it: they end when it ends without replying. A wait leaves
   * when its agent reads its answer (or it is withdrawn, or its agent ends), so a resident that answers requests for a
   * whole run does not keep every request it ever answered.
   */
  private readonly replies = new Map<string, Map<Wait, Mailbox>>();

  constructor(
    private readonly clock: Clock,
    /** Called when an agent's waits have all ended (met or timed out), so it can wake. */
    private readonly wake: (agentId: string) => void,
    /** Called for each ended wait whose answer an agent reads (see {@link PostOffice.take}), as it reads it. */
    private readonly answered?: (agentId: string, answer: WaitAnswer) => void,
  ) {}

  /** The time on the runtime's clock, which the post office's timers run on. */
  now(): number {
    return clockNow(this.clock);
  }

  /** Opens an agent's mailbox (when it is spawned), subscribed to the given topics. */
  open(id: string, name: string, options: InboxOptions, topics: readonly string[] = []): void {
    if (this.boxes.has(id)) return;
    this.boxes.set(id, { id, name, inbox: new Inbox(options.capacity, options.overflow), waits: [] });
    let named = this.byName.get(name);
    if (!named) this.byName.set(name, (named = new Set()));
    named.add(id);
    for (const topic of topics) this.subscribe(id, topic);
  }

  /** Closes an agent's mailbox (when it ends): its subscriptions and waits go; returns the messages it never read. */
  close(id: string): Message[] {
    const box = this.boxes.get(id);
    if (!box) return [];
    this.boxes.delete(id);
    const named = this.byName.get(box.name);
    named?.delete(id);
    if (named?.size === 0) this.byName.delete(box.name);
    for (const topic of box.topics ?? []) this.leaveTopic(id, topic);
    const unread = box.inbox.takeAll();
    for (const wait of box.waits) {
      this.stopTimer(wait);
      this.forgetReply(wait);
      unread.push(...wait.messages);
    }
    box.waits = [];
    this.endRepliesFrom(id);
    return unread;
  }

  /**
   * Records who may answer the reply a call waits for: the agents its message reached (one, or each subscriber of a
   * topic that got it), or `runtime` (code, which never ends, so its replies are not ended with it; it is named in a
   * deadlock's `waitsFor`). Once none of them can reply any more (each ended, or dropped the message unread), the wait
   * ends.
   */
  expectReply(id: string, callId: string, repliers: readonly string[]): void {
    const box = this.boxes.get(id);
    const wait = box?.waits.find((candidate) => candidate.callId === callId && candidate.replyTo !== undefined);
    if (!box || !wait || wait.state !== 'open') return;
    wait.repliers = repliers;
    if (repliers.length === 1 && repliers[0] === RUNTIME_ADDRESS) return;
    let left = 0;
    for (const replier of repliers) {
      // One may have ended between routing the message and this call (stopped in the same moment): it cannot reply.
      if (!this.boxes.has(replier)) continue;
      let waiting = this.replies.get(replier);
      if (!waiting) this.replies.set(replier, (waiting = new Map()));
      waiting.set(wait, box);
      left += 1;
    }
    wait.left = left;
    if (left === 0) this.endWait(box, wait, 'ended');
  }

  /** An agent ended: the calls that only it (or others ended too) could still answer end (no reply can come now). */
  private endRepliesFrom(replier: string): void {
    const waiting = this.replies.get(replier);
    if (!waiting) return;
    this.replies.delete(replier);
    for (const [wait, box] of waiting) {
      if (wait.state !== 'open' || this.boxes.get(box.id) !== box) continue;
      wait.left = (wait.left ?? 1) - 1;
      if (wait.left === 0) this.endWait(box, wait, 'ended');
    }
  }

  /** Ends an open wait for a reply that can no longer come, and wakes its agent if nothing else holds it. */
  private endWait(box: Mailbox, wait: Wait, state: 'ended' | 'dropped'): void {
    wait.state = state;
    wait.endedAt = this.now();
    this.stopTimer(wait);
    if (this.ready(box.id)) this.wake(box.id);
  }

  /** True while agent `id` has a mailbox (it is pending or running). */
  isOpen(id: string): boolean {
    return this.boxes.has(id);
  }

  /** The live agents of that name, in the order they were spawned. */
  liveNamed(name: string): string[] {
    return [...(this.byName.get(name) ?? [])];
  }

  /** Subscribes a live agent to a topic; returns false if it has no mailbox. */
  subscribe(id: string, topic: string): boolean {
    const box = this.boxes.get(id);
    if (!box) return false;
    (box.topics ??= new Set()).add(topic);
    let subscribers = this.topics.get(topic);
    if (!subscribers) this.topics.set(topic, (subscribers = new Set()));
    subscribers.add(id);
    return true;
  }

  /** Ends a subscription. */
  unsubscribe(id: string, topic: string): void {
    this.boxes.get(id)?.topics?.delete(topic);
    this.leaveTopic(id, topic);
  }

  /** Takes an agent off a topic's subscribers; a topic left with none goes (it is counted, and kept, no more). */
  private leaveTopic(id: string, topic: string): void {
    const subscribers = this.topics.get(topic);
    if (!subscribers?.delete(id)) return;
    if (subscribers.size === 0) this.topics.delete(topic);
  }

  /** The topics an agent subscribes to. */
  topicsOf(id: string): string[] {
    return [...(this.boxes.get(id)?.topics ?? [])];
  }

  /**
   * Routes a message: resolves its address (an id, a name with one live agent, a topic, or `runtime`) and puts a
   * copy into each receiver's inbox, or into a call of the receiver that waits for it. `isKnown` tells an ended agent
   * from one that never was, for the dead letter's reason.
   */
  route(message: Message, isKnown: (id: string) => boolean): RouteReport {
    const { to } = message;
    if (to === RUNTIME_ADDRESS) return { message, deliveries: [{ to, outcome: 'delivered', message }] };
    if (to.startsWith(TOPIC_PREFIX)) {
      const topic = to.slice(TOPIC_PREFIX.length);
      const deliveries: Delivery[] = [];
      for (const id of this.topics.get(topic) ?? []) {
        if (id !== message.from) deliveries.push(this.deliver(this.boxes.get(id)!, subscriberCopy(message, id, topic)));
      }
      return deliveries.length > 0 ? { message, deliveries } : { message, deliveries, deadLetter: 'no_subscribers' };
    }
    if (to.startsWith('agent:')) {
      const box = this.boxes.get(to);
      if (box) return { message, deliveries: [this.deliver(box, message)] };
      return { message, deliveries: [], deadLetter: isKnown(to) ? 'ended' : 'unknown_agent' };
    }
    const named = this.liveNamed(to);
    if (named.length === 1) return { message, deliveries: [this.deliver(this.boxes.get(named[0]!)!, { ...message, to: named[0]! })] };
    if (named.length > 1) return { message, deliveries: [], deadLetter: 'ambiguous', candidates: named };
    return { message, deliveries: [], deadLetter: 'no_live_agent' };
  }

  /**
   * Registers a tool call of agent `id` that waits for messages. Matching messages already in its inbox are taken
   * at once. Returns false if the agent has no mailbox.
   */
  await(id: string, spec: WaitSpec): boolean {
    const box = this.boxes.get(id);
    if (!box) return false;
    const since = this.now();
    // Every field set here, in one order: waits of one shape (a spread of the spec gave each kind of wait its own).
    const wait: Wait = {
      callId: spec.callId,
      from: spec.from,
      replyTo: spec.replyTo,
      collect: spec.collect,
      timeoutMs: spec.timeoutMs,
      tool: spec.tool,
      state: 'open',
      since,
      messages: box.inbox.size === 0 ? [] : box.inbox.takeWhere((message) => matches(spec, message)),
      endedAt: undefined,
      timer: undefined,
      repliers: undefined,
      left: undefined,
    };
    if (wait.messages.length > 0 && !wait.collect) {
      wait.state = 'met';
      wait.endedAt = since;
    } else if (spec.timeoutMs !== undefined) {
      wait.timer = this.clock.setTimeout(() => this.expire(box, wait), spec.timeoutMs);
    }
    box.waits.push(wait);
    return true;
  }

  /** Withdraws a wait that was registered for a call that then failed (its message could not be sent). */
  cancelWait(id: string, callId: string): void {
    const box = this.boxes.get(id);
    if (!box || box.waits.length === 0) return; // as for every call that ends without a wait
    const index = box.waits.findIndex((wait) => wait.callId === callId);
    if (index < 0) return;
    this.stopTimer(box.waits[index]!);
    this.forgetReply(box.waits[index]!);
    box.waits.splice(index, 1);
  }

  /** True when agent `id` may wake: all its waits have ended, or (waiting for none) a message waits in its inbox. */
  ready(id: string): boolean {
    const box = this.boxes.get(id);
    if (!box) return false;
    if (box.waits.length > 0) return box.waits.every((wait) => wait.state !== 'open');
    return box.inbox.size > 0;
  }

  /** True when agent `id` has mail to read or waits to answer. */
  hasMail(id: string): boolean {
    const box = this.boxes.get(id);
    return box !== undefined && (box.inbox.size > 0 || box.waits.length > 0);
  }

  /** The tool calls of agent `id` whose waits it has not read (open, or ended since it last read its mail). */
  unreadWaits(id: string): string[] {
    return this.boxes.get(id)?.waits.map((wait) => wait.callId) ?? [];
  }

  /** True when tool call `callId` of agent `id` has a wait its agent has not read (open, or ended since). */
  waitsIn(id: string, callId: string): boolean {
    const waits = this.boxes.get(id)?.waits;
    if (waits === undefined) return false;
    for (const wait of waits) if (wait.callId === callId) return true;
    return false;
  }

  /** True when agent `id` has a tool call waiting for messages. */
  isWaiting(id: string): boolean {
    return (this.boxes.get(id)?.waits.length ?? 0) > 0;
  }

  /**
   * True when agent `id` waits for something only one sender can send: a reply, or a message from a given agent (or
   * from code, `runtime`, which `runUntilIdle` reports as a deadlock all the same: code that answers may catch it and
   * answer). A wait for any message is an idle agent, like a resident waiting for its next message.
   */
  waitsForSomeone(id: string): boolean {
    const box = this.boxes.get(id);
    return box !== undefined && box.waits.some((wait) => wait.state === 'open' && (wait.replyTo !== undefined || wait.from !== undefined));
  }

  /** What agent `id`'s open waits are for, in words (`a reply to msg:3 from agent:judge:x1`), or undefined for none. */
  describeWaits(id: string): string | undefined {
    const open = this.boxes.get(id)?.waits.filter((wait) => wait.state === 'open') ?? [];
    if (open.length === 0) return undefined;
    return open
      .map((wait) => {
        if (wait.replyTo !== undefined) return `a reply to ${wait.replyTo}${wait.repliers?.length === 1 ? ` from ${wait.repliers[0]}` : ''}`;
        return wait.from === undefined ? 'a message' : `a message from ${wait.from}`;
      })
      .join(' and ');
  }

  /**
   * Takes what agent `id` reads at its next turn: the answers of its ended waits (open ones stay) and every message
   * in its inbox, oldest first.
   */
  take(id: string): { answers: WaitAnswer[]; mail: Message[] } {
    const box = this.boxes.get(id);
    if (!box) return { answers: [], mail: [] };
    const answers: WaitAnswer[] = [];
    const open: Wait[] = [];
    // Every message read now stays answerable by id, however many came at once (a hundred requests in one turn).
    let keep = box.inbox.size;
    for (const wait of box.waits) if (wait.state !== 'open') keep += wait.messages.length;
    keep = Math.max(RECENT, keep);
    for (const wait of box.waits) {
      if (wait.state === 'open') {
        open.push(wait);
        continue;
      }
      this.stopTimer(wait);
      this.forgetReply(wait);
      this.rememberAll(box, wait.messages, keep);
      const answer = answerOf(wait, this.now());
      answers.push(answer);
      this.answered?.(id, answer);
    }
    box.waits = open;
    const mail = box.inbox.size > 0 ? box.inbox.takeAll() : [];
    this.rememberAll(box, mail, keep);
    return { answers, mail };
  }

  /** A message agent `id` has read lately (the last one without an id), for `reply`. */
  received(id: string, messageId?: string): Message | undefined {
    const box = this.boxes.get(id);
    if (!box) return undefined;
    return messageId === undefined ? box.last : box.recent?.get(messageId);
  }

  /**
   * A summary for inspectors and logs, instead of every inbox: the supervisor's context holds the post office, and
   * inspectors serialise that context with every snapshot of the supervisor.
   */
  toJSON(): { mailboxes: number; topics: number } {
    return { mailboxes: this.boxes.size, topics: this.topics.size };
  }

  private deliver(box: Mailbox, message: Message): Delivery {
    const wait = waitFor(box.waits, message);
    if (wait !== undefined) {
      // A collecting wait holds what the inbox would, and no more: past its capacity, the inbox's overflow rule.
      if (wait.collect && wait.messages.length >= box.inbox.capacity) {
        if (box.inbox.overflow === 'reject') return { to: box.id, outcome: 'inbox_full', message };
        const dropped = wait.messages.shift()!;
        wait.messages.push(message);
        this.droppedUnread(box.id, dropped);
        return { to: box.id, outcome: 'delivered', message, dropped };
      }
      wait.messages.push(message);
      if (!wait.collect) {
        wait.state = 'met';
        wait.endedAt = this.now();
        this.stopTimer(wait);
      }
      return { to: box.id, outcome: 'delivered', message };
    }
    const pushed = box.inbox.push(message);
    if (!pushed.accepted) return { to: box.id, outcome: 'inbox_full', message };
    if (pushed.dropped === undefined) return { to: box.id, outcome: 'delivered', message };
    this.droppedUnread(box.id, pushed.dropped);
    return { to: box.id, outcome: 'delivered', message, dropped: pushed.dropped };
  }

  /**
   * Agent `id` dropped a message unread to make room: it cannot reply to it now, so a call waiting for the reply that
   * no other agent can send ends (as when the agent ends) and its agent wakes, rather than wait for ever.
   */
  private droppedUnread(id: string, dropped: Message): void {
    const waiting = this.replies.get(id);
    if (!waiting) return;
    for (const [wait, box] of waiting) {
      if (wait.replyTo !== dropped.id) continue;
      waiting.delete(wait);
      if (waiting.size === 0) this.replies.delete(id);
      if (wait.state !== 'open' || this.boxes.get(box.id) !== box) return;
      wait.left = (wait.left ?? 1) - 1;
      if (wait.left === 0) this.endWait(box, wait, 'dropped');
      return;
    }
  }

  private expire(box: Mailbox, wait: Wait): void {
    wait.timer = undefined;
    if (wait.state !== 'open') return;
    wait.state = wait.collect ? 'met' : 'timed_out';
    wait.endedAt = this.now();
    if (this.boxes.get(box.id) === box && this.ready(box.id)) this.wake(box.id);
  }

  /** Drops a wait from the waits for its repliers' reply (it was read, withdrawn, or its agent ended). */
  private forgetReply(wait: Wait): void {
    if (wait.repliers === undefined) return;
    for (const replier of wait.repliers) {
      const waiting = this.replies.get(replier);
      if (!waiting?.delete(wait)) continue;
      if (waiting.size === 0) this.replies.delete(replier);
    }
  }

  private stopTimer(wait: Wait): void {
    if (wait.timer === undefined) return;
    this.clock.clearTimeout(wait.timer);
    wait.timer = undefined;
  }

  /**
   * Remembers messages read, in order, keeping the last `keep` read (at least {@link RECENT}, and every message of the
   * turn being read): older ones leave as new ones come.
   */
  private rememberAll(box: Mailbox, messages: readonly Message[], keep: number): void {
    for (let index = Math.max(0, messages.length - keep); index < messages.length; index += 1) this.remember(box, messages[index]!, keep);
  }

  private remember(box: Mailbox, message: Message, keep: number): void {
    box.last = message;
    const recent = (box.recent ??= new Map());
    recent.set(message.id, message);
    // A while, not an if: after a turn that read many, the next turn's first message trims back to its own keep.
    while (recent.size > keep) recent.delete(recent.keys().next().value!);
  }
}

/**
 * The copy of a topic's message one subscriber gets: its id as `to`, the topic in `topic`. Made field by field (in the
 * schema's order) rather than spread: a topic with a thousand subscribers makes a thousand of them.
 */
function subscriberCopy(message: Message, to: string, topic: string): Message {
  const { id, from, content, replyTo, sentAt } = message;
  return replyTo === undefined ? { id, from, to, topic, content, sentAt } : { id, from, to, topic, content, replyTo, sentAt };
}

function matches(spec: WaitSpec, message: Message): boolean {
  if (spec.replyTo !== undefined) return message.replyTo === spec.replyTo;
  return spec.from === undefined || message.from === spec.from || agentNameOf(message.from) === spec.from;
}

/**
 * The open wait a message goes to: the first that matches it, but a reply goes to the call waiting for it rather than
 * to an earlier wait for any message from its sender (which would leave that call waiting for a reply already taken).
 */
function waitFor(waits: readonly Wait[], message: Message): Wait | undefined {
  let first: Wait | undefined;
  for (const wait of waits) {
    if (wait.state !== 'open' || !matches(wait, message)) continue;
    if (message.replyTo === undefined || wait.replyTo !== undefined) return wait;
    first ??= wait;
  }
  return first;
}

/** What an ended wait tells its call (read at `now`): the messages it took, or why none came. */
function answerOf(wait: Wait, now: number): WaitAnswer {
  const { callId, messages } = wait;
  const tool = wait.tool ?? 'wait_for_messages';
  const durationMs = (wait.endedAt ?? now) - wait.since;
  const count = messages.length;
  // Built whole in each case (no spread of a common part): every turn of a waiting agent reads one.
  if (count > 0) {
    const outcome = wait.collect ? 'collected' : wait.replyTo !== undefined ? 'reply' : 'message';
    return { callId, tool, messages: count, durationMs, outcome, content: renderMessages(messages), isError: false };
  }
  const within = wait.timeoutMs === undefined ? '' : ` within ${wait.timeoutMs} ms`;
  const answer = (outcome: WaitOutcome, content: string, isError: boolean): WaitAnswer => ({ callId, tool, messages: 0, durationMs, outcome, content, isError });
  const repliers = wait.repliers ?? [];
  if (repliers.length > 1 && (wait.state === 'ended' || wait.state === 'dropped')) {
    const why = `ended without replying${wait.state === 'dropped' ? ', or dropped it unread from a full inbox' : ''}`;
    return answer('ended', `Error: every agent that got ${wait.replyTo} (${repliers.length}) ${why}; no reply can come.`, true);
  }
  if (wait.state === 'ended') return answer('ended', `Error: ${repliers[0]} ended without replying to ${wait.replyTo}.`, true);
  if (wait.state === 'dropped') {
    return answer('ended', `Error: ${repliers[0]} dropped ${wait.replyTo} unread to make room in its full inbox; no reply can come.`, true);
  }
  if (wait.replyTo !== undefined) return answer('timeout', `Error: no reply to ${wait.replyTo} came${within}.`, true);
  if (wait.collect) return answer('collected', `No message arrived${within}.`, false);
  const from = wait.from === undefined ? '' : ` from ${wait.from}`;
  return answer('timeout', `Error: no message${from} arrived${within}.`, true);
}

/** The messages a wait took, as its tool result: each rendered, one per line (most waits take one). */
function renderMessages(messages: readonly Message[]): string {
  return messages.length === 1 ? renderMessage(messages[0]!) : messages.map(renderMessage).join('\n');
}
