import { ConfigurationError } from '../errors.js';
import type { Message } from './Message.js';

/**
 * What a full inbox does with one more message: `reject` refuses it (the sender gets an `InboxFullError`);
 * `drop-oldest` makes room by dropping the oldest message waiting.
 */
export type Overflow = 'reject' | 'drop-oldest';

/** The outcome of putting a message into an inbox. */
export type InboxPush =
  | { accepted: true; dropped?: Message }
  | { accepted: false };

/**
 * One agent's bounded FIFO of messages waiting to be read. A ring buffer: pushing and taking are O(1), and it
 * never holds more than `capacity` messages.
 */
export class Inbox {
  private slots: (Message | undefined)[] = [];
  private head = 0;
  private count = 0;

  constructor(
    /** The most messages it holds: a whole number, at least 1. */
    readonly capacity: number,
    /** What a push into a full inbox does. */
    readonly overflow: Overflow,
  ) {
    // A fractional capacity would never equal the count (an unbounded inbox) and is no array length.
    if (!(Number.isInteger(capacity) && capacity >= 1)) {
      throw new ConfigurationError('inbox.capacity must be a whole number, at least 1.');
    }
    if (overflow !== 'reject' && overflow !== 'drop-oldest') {
      throw new ConfigurationError('inbox.overflow must be "reject" or "drop-oldest".');
    }
  }

  /** Messages waiting. */
  get size(): number {
    return this.count;
  }

  /** Adds a message at the end; a full inbox refuses it, or drops its oldest message for it. */
  push(message: Message): InboxPush {
    if (this.count === this.capacity) {
      if (this.overflow === 'reject') return { accepted: false };
      const dropped = this.shift()!;
      this.append(message);
      return { accepted: true, dropped };
    }
    this.append(message);
    return { accepted: true };
  }

  /** Takes every waiting message, oldest first. */
  takeAll(): Message[] {
    const taken: Message[] = [];
    while (this.count > 0) taken.push(this.shift()!);
    return taken;
  }

  /** Takes the waiting messages that match, oldest first, and keeps the others in order. */
  takeWhere(matches: (message: Message) => boolean): Message[] {
    if (this.count === 0) return [];
    const taken: Message[] = [];
    const kept: Message[] = [];
    for (const message of this.takeAll()) (matches(message) ? taken : kept).push(message);
    for (const message of kept) this.append(message);
    return taken;
  }

  private append(message: Message): void {
    // The buffer grows up to the capacity as messages arrive, so an inbox that stays empty costs nothing.
    if (this.count === this.slots.length) {
      const grown = new Array<Message | undefined>(Math.min(this.capacity, Math.max(4, this.slots.length * 2)));
      for (let i = 0; i < this.count; i += 1) grown[i] = this.slots[(this.head + i) % this.slots.length];
      this.slots = grown;
      this.head = 0;
    }
    this.slots[(this.head + this.count) % this.slots.length] = message;
    this.count += 1;
  }

  private shift(): Message | undefined {
    if (this.count === 0) return undefined;
    const message = this.slots[this.head];
    this.slots[this.head] = undefined;
    this.head = (this.head + 1) % this.slots.length;
    this.count -= 1;
    return message;
  }
}
