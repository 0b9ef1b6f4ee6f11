// The inbox: a bounded FIFO with a named overflow outcome, checked against a plain array as its model.
import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { ConfigurationError, Inbox, type Message, type Overflow } from 'troupe';

/** A message with a readable id; `from` alternates so a filter has something to select. */
function message(n: number, from = n % 2 === 0 ? 'agent:alice:a' : 'agent:bob:b'): Message {
  return { id: `m${n}`, from, to: 'agent:sink:s', content: `content ${n}`, sentAt: n };
}

const ids = (messages: readonly Message[]) => messages.map((m) => m.id);

/** One step of a property run: push a new message, take all, or take those from one sender. */
type Op = { op: 'push' } | { op: 'takeAll' } | { op: 'takeFrom'; from: string };

const opArbitrary: fc.Arbitrary<Op> = fc.oneof(
  { weight: 6, arbitrary: fc.constant<Op>({ op: 'push' }) },
  { weight: 1, arbitrary: fc.constant<Op>({ op: 'takeAll' }) },
  { weight: 1, arbitrary: fc.constantFrom<Op>({ op: 'takeFrom', from: 'agent:alice:a' }, { op: 'takeFrom', from: 'agent:bob:b' }) },
);

describe('Inbox', () => {
  it('gives messages back oldest first', () => {
    const inbox = new Inbox(8, 'reject');
    for (let n = 0; n < 5; n++) inbox.push(message(n));
    expect(inbox.size).toBe(5);
    expect(ids(inbox.takeAll())).toEqual(['m0', 'm1', 'm2', 'm3', 'm4']);
    expect(inbox.size).toBe(0);
    expect(inbox.takeAll()).toEqual([]);
  });

  it('refuses a message when full and set to reject, keeping what it holds', () => {
    const inbox = new Inbox(2, 'reject');
    expect(inbox.push(message(0))).toEqual({ accepted: true });
    expect(inbox.push(message(1))).toEqual({ accepted: true });
    expect(inbox.push(message(2))).toEqual({ accepted: false });
    expect(ids(inbox.takeAll())).toEqual(['m0', 'm1']);
  });

  it('drops its oldest message for a new one when full and set to drop-oldest, and says which', () => {
    const inbox = new Inbox(2, 'drop-oldest');
    inbox.push(message(0));
    inbox.push(message(1));
    const pushed = inbox.push(message(2));
    expect(pushed.accepted).toBe(true);
    expect(pushed.accepted && pushed.dropped?.id).toBe('m0');
    expect(ids(inbox.takeAll())).toEqual(['m1', 'm2']);
  });

  it('takes the matching messages in order and keeps the others in order', () => {
    const inbox = new Inbox(10, 'reject');
    for (let n = 0; n < 7; n++) inbox.push(message(n));
    expect(ids(inbox.takeWhere((m) => m.from === 'agent:bob:b'))).toEqual(['m1', 'm3', 'm5']);
    inbox.push(message(7));
    expect(ids(inbox.takeAll())).toEqual(['m0', 'm2', 'm4', 'm6', 'm7']);
  });

  it('stays in order when its ring buffer wraps around and grows', () => {
    const inbox = new Inbox(100, 'reject');
    const model: string[] = [];
    let n = 0;
    // Take a few from the front (by taking all and pushing the rest back) so the head moves before the buffer grows.
    for (let round = 0; round < 10; round++) {
      for (let i = 0; i < 7; i++) {
        inbox.push(message(n));
        model.push(`m${n++}`);
      }
      const taken = inbox.takeWhere((m) => Number(m.id.slice(1)) % 3 === 0);
      expect(ids(taken)).toEqual(model.filter((id) => Number(id.slice(1)) % 3 === 0));
      model.splice(0, model.length, ...model.filter((id) => Number(id.slice(1)) % 3 !== 0));
    }
    expect(ids(inbox.takeAll())).toEqual(model);
  });

  it('refuses a capacity that is not a whole number of at least 1, and an unknown overflow', () => {
    for (const capacity of [0, -1, 2.5, Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => new Inbox(capacity, 'reject'), String(capacity)).toThrow(ConfigurationError);
    }
    expect(() => new Inbox(4, 'drop-newest' as Overflow)).toThrow(ConfigurationError);
  });

  describe('properties', () => {
    const runAgainstModel = (capacity: number, overflow: Overflow, ops: Op[]) => {
      const inbox = new Inbox(capacity, overflow);
      const model: Message[] = [];
      let n = 0;
      for (const step of ops) {
        if (step.op === 'push') {
          const next = message(n++);
          const pushed = inbox.push(next);
          if (model.length < capacity) {
            expect(pushed).toEqual({ accepted: true });
            model.push(next);
          } else if (overflow === 'reject') {
            expect(pushed).toEqual({ accepted: false });
          } else {
            const oldest = model.shift()!;
            model.push(next);
            expect(pushed).toEqual({ accepted: true, dropped: oldest });
          }
        } else if (step.op === 'takeAll') {
          expect(ids(inbox.takeAll())).toEqual(ids(model.splice(0)));
        } else {
          const taken = model.filter((m) => m.from === step.from);
          const kept = model.filter((m) => m.from !== step.from);
          expect(ids(inbox.takeWhere((m) => m.from === step.from))).toEqual(ids(taken));
          model.splice(0, model.length, ...kept);
        }
        expect(inbox.size).toBe(model.length);
        expect(inbox.size).toBeLessThanOrEqual(capacity);
      }
      expect(ids(inbox.takeAll())).toEqual(ids(model));
    };

    it('is a FIFO that never holds more than its capacity (reject)', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 12 }), fc.array(opArbitrary, { maxLength: 80 }), (capacity, ops) =>
          runAgainstModel(capacity, 'reject', ops),
        ),
      );
    });

    it('is a FIFO that never holds more than its capacity (drop-oldest)', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 12 }), fc.array(opArbitrary, { maxLength: 80 }), (capacity, ops) =>
          runAgainstModel(capacity, 'drop-oldest', ops),
        ),
      );
    });

    it('with drop-oldest keeps exactly the newest `capacity` messages, and drops the others oldest first', () => {
      fc.assert(
        fc.property(fc.integer({ min: 1, max: 20 }), fc.integer({ min: 0, max: 60 }), (capacity, count) => {
          const inbox = new Inbox(capacity, 'drop-oldest');
          const dropped: string[] = [];
          for (let n = 0; n < count; n++) {
            const pushed = inbox.push(message(n));
            expect(pushed.accepted).toBe(true);
            if (pushed.accepted && pushed.dropped) dropped.push(pushed.dropped.id);
          }
          const all = Array.from({ length: count }, (_, n) => `m${n}`);
          const keep = Math.min(capacity, count);
          expect(ids(inbox.takeAll())).toEqual(all.slice(count - keep));
          expect(dropped).toEqual(all.slice(0, count - keep));
        }),
      );
    });
  });
});
