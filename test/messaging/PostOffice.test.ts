// The post office on its own: addresses, dead letters, topics, waits and their timeouts on a simulated clock.
import { describe, expect, it } from 'vitest';
import { PostOffice, type Message } from 'troupe';
import { simulatedClock } from '../stubs.js';

let counter = 0;
/** A message as the messenger would make it. */
function msg(from: string, to: string, content: string, extra: Partial<Message> = {}): Message {
  return { id: `msg:${++counter}`, from, to, content, sentAt: 0, ...extra };
}

const INBOX = { capacity: 16, overflow: 'reject' } as const;

/** A post office on a simulated clock, with the ids it was asked to wake. */
function office() {
  const clock = simulatedClock();
  const woken: string[] = [];
  const post = new PostOffice(clock, (id) => woken.push(id));
  const known = new Set<string>();
  const open = (id: string, topics: string[] = [], inbox: { capacity: number; overflow: 'reject' | 'drop-oldest' } = INBOX) => {
    known.add(id);
    post.open(id, id.split(':')[1]!, inbox, topics);
  };
  const route = (message: Message) => post.route(message, (id) => known.has(id));
  return { clock, woken, post, open, route };
}

describe('PostOffice', () => {
  describe('addresses', () => {
    it('delivers to an id, and to a name with one live agent under that agent id', () => {
      const { post, open, route } = office();
      open('agent:judge:j1');
      const byId = route(msg('runtime', 'agent:judge:j1', 'one'));
      const byName = route(msg('runtime', 'judge', 'two'));
      expect(byId.deliveries).toMatchObject([{ to: 'agent:judge:j1', outcome: 'delivered' }]);
      expect(byName.deliveries).toMatchObject([{ to: 'agent:judge:j1', outcome: 'delivered', message: { to: 'agent:judge:j1' } }]);
      expect(post.take('agent:judge:j1').mail.map((m) => m.content)).toEqual(['one', 'two']);
    });

    it('hands a message to `runtime` straight back, without any inbox', () => {
      const { route } = office();
      const report = route(msg('agent:a:1', 'runtime', 'for code'));
      expect(report.deadLetter).toBeUndefined();
      expect(report.deliveries).toMatchObject([{ to: 'runtime', outcome: 'delivered' }]);
    });

    it('names each dead letter: unknown id, ended agent, no live agent by that name, several live agents', () => {
      const { post, open, route } = office();
      open('agent:gone:g1');
      post.close('agent:gone:g1');
      open('agent:twin:t1');
      open('agent:twin:t2');
      expect(route(msg('runtime', 'agent:ghost:x', 'hi'))).toMatchObject({ deadLetter: 'unknown_agent', deliveries: [] });
      expect(route(msg('runtime', 'agent:gone:g1', 'hi'))).toMatchObject({ deadLetter: 'ended', deliveries: [] });
      expect(route(msg('runtime', 'gone', 'hi'))).toMatchObject({ deadLetter: 'no_live_agent', deliveries: [] });
      expect(route(msg('runtime', 'twin', 'hi'))).toMatchObject({
        deadLetter: 'ambiguous',
        deliveries: [],
        candidates: ['agent:twin:t1', 'agent:twin:t2'],
      });
      expect(post.take('agent:twin:t1').mail).toEqual([]);
    });

    it('keeps each sender’s order when two senders interleave', () => {
      const { post, open, route } = office();
      open('agent:sink:s', [], { capacity: 64, overflow: 'reject' });
      const sent: Message[] = [];
      for (let i = 0; i < 20; i++) {
        const from = i % 3 === 0 ? 'agent:alice:a' : 'agent:bob:b';
        sent.push(msg(from, 'agent:sink:s', `${from} ${i}`));
        route(sent.at(-1)!);
      }
      const mail = post.take('agent:sink:s').mail;
      for (const from of ['agent:alice:a', 'agent:bob:b']) {
        expect(mail.filter((m) => m.from === from).map((m) => m.id)).toEqual(sent.filter((m) => m.from === from).map((m) => m.id));
      }
      expect(mail.map((m) => m.id)).toEqual(sent.map((m) => m.id));
    });

    it('reports a full inbox, and the oldest message dropped for a new one', () => {
      const { open, route } = office();
      open('agent:strict:s', [], { capacity: 1, overflow: 'reject' });
      open('agent:loose:l', [], { capacity: 1, overflow: 'drop-oldest' });
      route(msg('runtime', 'agent:strict:s', 'first'));
      expect(route(msg('runtime', 'agent:strict:s', 'second')).deliveries).toMatchObject([{ outcome: 'inbox_full' }]);
      const first = msg('runtime', 'agent:loose:l', 'first');
      route(first);
      expect(route(msg('runtime', 'agent:loose:l', 'second')).deliveries).toMatchObject([{ outcome: 'delivered', dropped: { id: first.id } }]);
    });
  });

  describe('topics', () => {
    it('gives every subscriber but the publisher a copy naming the topic', () => {
      const { post, open, route } = office();
      open('agent:pub:p', ['news']);
      for (let i = 0; i < 5; i++) open(`agent:reader:r${i}`, ['news']);
      open('agent:other:o', ['sports']);
      const report = route(msg('agent:pub:p', 'topic:news', 'headline'));
      expect(report.deliveries.map((d) => d.to)).toEqual(['agent:reader:r0', 'agent:reader:r1', 'agent:reader:r2', 'agent:reader:r3', 'agent:reader:r4']);
      expect(report.deliveries[0]!.message).toMatchObject({ to: 'agent:reader:r0', topic: 'news', content: 'headline' });
      expect(post.take('agent:pub:p').mail).toEqual([]);
      expect(post.take('agent:other:o').mail).toEqual([]);
    });

    it('is a dead letter when nobody but the publisher subscribes; unsubscribing and closing end a subscription', () => {
      const { post, open, route } = office();
      open('agent:pub:p', ['news']);
      open('agent:a:1', ['news']);
      open('agent:b:2', ['news']);
      post.unsubscribe('agent:a:1', 'news');
      post.close('agent:b:2');
      expect(route(msg('agent:pub:p', 'topic:news', 'hello?'))).toMatchObject({ deadLetter: 'no_subscribers', deliveries: [] });
      expect(post.topicsOf('agent:a:1')).toEqual([]);
      expect(post.subscribe('agent:b:2', 'news')).toBe(false);
    });
  });

  describe('waits', () => {
    it('a wait takes a matching message from the inbox at once, and leaves the others for the next turn', () => {
      const { post, open, route } = office();
      open('agent:me:m');
      route(msg('agent:alice:a', 'agent:me:m', 'from alice'));
      route(msg('agent:bob:b', 'agent:me:m', 'from bob'));
      post.await('agent:me:m', { callId: 'c1', from: 'bob' });
      expect(post.ready('agent:me:m')).toBe(true);
      const { answers, mail } = post.take('agent:me:m');
      expect(answers).toEqual([
        {
          callId: 'c1',
          content: expect.stringMatching(/^\[message msg:\d+ from agent:bob:b\] from bob$/),
          isError: false,
          tool: 'wait_for_messages',
          outcome: 'message',
          messages: 1,
          durationMs: 0,
        },
      ]);
      expect(mail.map((m) => m.content)).toEqual(['from alice']);
    });

    it('a wait for a reply ignores other messages, which go to the inbox', () => {
      const { clock, post, open, route } = office();
      open('agent:me:m');
      post.await('agent:me:m', { callId: 'c1', tool: 'send_message', replyTo: 'msg:question' });
      route(msg('agent:peer:p', 'agent:me:m', 'chatter'));
      expect(post.ready('agent:me:m')).toBe(false);
      clock.increment(40);
      route(msg('agent:peer:p', 'agent:me:m', 'the answer', { replyTo: 'msg:question' }));
      expect(post.ready('agent:me:m')).toBe(true);
      clock.increment(10); // read later: its duration is until the reply came
      const { answers, mail } = post.take('agent:me:m');
      expect(answers[0]!.content).toMatch(/in reply to msg:question\] the answer$/);
      expect(answers[0]).toMatchObject({ tool: 'send_message', outcome: 'reply', messages: 1, durationMs: 40, isError: false });
      expect(mail.map((m) => m.content)).toEqual(['chatter']);
    });

    it('a reply goes to the call waiting for it, not to an earlier wait for any message from its sender', () => {
      const { post, open, route } = office();
      open('agent:me:m');
      // One batch: wait for bob (registered first), and ask bob something.
      post.await('agent:me:m', { callId: 'listen', from: 'bob' });
      post.await('agent:me:m', { callId: 'ask', tool: 'send_message', replyTo: 'msg:offer' });
      route(msg('agent:bob:b', 'agent:me:m', 'accepted', { replyTo: 'msg:offer' }));
      expect(post.describeWaits('agent:me:m')).toBe('a message from bob');
      route(msg('agent:bob:b', 'agent:me:m', 'and another thing'));
      const { answers } = post.take('agent:me:m');
      expect(answers.map((answer) => [answer.callId, answer.outcome, answer.content.replace(/^\[[^\]]*\] /, '')])).toEqual([
        ['listen', 'message', 'and another thing'],
        ['ask', 'reply', 'accepted'],
      ]);
    });

    it('times out on the clock with an error answer, and wakes the agent', () => {
      const { clock, woken, post, open } = office();
      open('agent:me:m');
      post.await('agent:me:m', { callId: 'c1', from: 'bob', timeoutMs: 100 });
      clock.increment(99);
      expect(woken).toEqual([]);
      clock.increment(1);
      expect(woken).toEqual(['agent:me:m']);
      expect(post.take('agent:me:m').answers).toEqual([
        { callId: 'c1', content: 'Error: no message from bob arrived within 100 ms.', isError: true, tool: 'wait_for_messages', outcome: 'timeout', messages: 0, durationMs: 100 },
      ]);
      expect(post.isWaiting('agent:me:m')).toBe(false);
    });

    it('collecting, it gathers every message until the timeout and only then is ready', () => {
      const { clock, woken, post, open, route } = office();
      open('agent:me:m');
      post.await('agent:me:m', { callId: 'c1', collect: true, timeoutMs: 1_000 });
      route(msg('agent:a:1', 'agent:me:m', 'one'));
      route(msg('agent:b:2', 'agent:me:m', 'two'));
      route(msg('agent:a:1', 'agent:me:m', 'three'));
      expect(post.ready('agent:me:m')).toBe(false);
      clock.increment(1_000);
      expect(woken).toEqual(['agent:me:m']);
      const { answers, mail } = post.take('agent:me:m');
      expect(answers[0]).toMatchObject({ isError: false, outcome: 'collected', messages: 3, durationMs: 1_000 });
      expect(answers[0]!.content.split('\n').map((line) => line.replace(/^\[[^\]]*\] /, ''))).toEqual(['one', 'two', 'three']);
      expect(mail).toEqual([]);
    });

    it('collecting, it holds no more than the inbox would: past its capacity, the inbox refuses or drops the oldest', () => {
      const { clock, post, open, route } = office();
      open('agent:strict:s', [], { capacity: 2, overflow: 'reject' });
      open('agent:loose:l', [], { capacity: 2, overflow: 'drop-oldest' });
      for (const id of ['agent:strict:s', 'agent:loose:l']) post.await(id, { callId: 'c1', collect: true, timeoutMs: 100 });
      const outcomes = (to: string) => ['one', 'two', 'three'].map((content) => route(msg('agent:a:1', to, content)).deliveries[0]);

      expect(outcomes('agent:strict:s').map((delivery) => delivery?.outcome)).toEqual(['delivered', 'delivered', 'inbox_full']);
      const loose = outcomes('agent:loose:l');
      expect(loose.map((delivery) => delivery?.outcome)).toEqual(['delivered', 'delivered', 'delivered']);
      expect(loose[2]?.dropped?.content).toBe('one');
      clock.increment(100);
      const contents = (id: string) => post.take(id).answers[0]!.content.split('\n').map((line) => line.replace(/^\[[^\]]*\] /, ''));
      expect(contents('agent:strict:s')).toEqual(['one', 'two']);
      expect(contents('agent:loose:l')).toEqual(['two', 'three']);
    });

    it('collecting with nothing coming is not an error', () => {
      const { clock, post, open } = office();
      open('agent:me:m');
      post.await('agent:me:m', { callId: 'c1', collect: true, timeoutMs: 50 });
      clock.increment(50);
      expect(post.take('agent:me:m').answers).toEqual([
        { callId: 'c1', content: 'No message arrived within 50 ms.', isError: false, tool: 'wait_for_messages', outcome: 'collected', messages: 0, durationMs: 50 },
      ]);
    });

    it('a met or withdrawn wait sets no timer off later', () => {
      const { clock, woken, post, open, route } = office();
      open('agent:me:m');
      post.await('agent:me:m', { callId: 'met', timeoutMs: 100 });
      route(msg('agent:a:1', 'agent:me:m', 'quick'));
      post.take('agent:me:m');
      post.await('agent:me:m', { callId: 'withdrawn', timeoutMs: 100 });
      post.cancelWait('agent:me:m', 'withdrawn');
      clock.increment(1_000);
      expect(woken).toEqual([]);
      expect(post.isWaiting('agent:me:m')).toBe(false);
    });

    it('closing a mailbox gives back its unread messages, those a wait had gathered included', () => {
      const { post, open, route } = office();
      open('agent:me:m');
      route(msg('agent:a:1', 'agent:me:m', 'in the inbox'));
      post.await('agent:me:m', { callId: 'c1', collect: true, timeoutMs: 100 });
      route(msg('agent:a:1', 'agent:me:m', 'gathered'));
      expect(post.close('agent:me:m').map((m) => m.content).sort()).toEqual(['gathered', 'in the inbox']);
      expect(post.isOpen('agent:me:m')).toBe(false);
      expect(post.liveNamed('me')).toEqual([]);
    });
  });

  it('remembers what an agent read, for a reply to the last message or to one by id', () => {
    const { post, open, route } = office();
    open('agent:me:m');
    const first = msg('agent:a:1', 'agent:me:m', 'first');
    const second = msg('agent:b:2', 'agent:me:m', 'second');
    expect(post.received('agent:me:m')).toBeUndefined();
    route(first);
    route(second);
    expect(post.received('agent:me:m')).toBeUndefined(); // not read yet
    post.take('agent:me:m');
    expect(post.received('agent:me:m')?.id).toBe(second.id);
    expect(post.received('agent:me:m', first.id)?.content).toBe('first');
    expect(post.received('agent:me:m', 'msg:never')).toBeUndefined();
  });

  it('forgets a wait for a reply once it is read, withdrawn or its agent ends, so a long-lived replier holds none', () => {
    const { post, open, route } = office();
    open('agent:server:s');
    open('agent:client:c');
    open('agent:leaver:l');
    // The waits the post office keeps for the server's replies (private: nothing else shows what it holds on to).
    const heldFor = (replier: string) => (post as unknown as { replies: Map<string, Map<unknown, unknown>> }).replies.get(replier)?.size ?? 0;

    for (let round = 0; round < 100; round += 1) {
      const question = msg('agent:client:c', 'agent:server:s', `q${round}`);
      post.await('agent:client:c', { callId: `call${round}`, replyTo: question.id });
      route(question);
      post.expectReply('agent:client:c', `call${round}`, ['agent:server:s']);
      route(msg('agent:server:s', 'agent:client:c', `a${round}`, { replyTo: question.id }));
      expect(post.take('agent:client:c').answers).toHaveLength(1);
    }
    expect(heldFor('agent:server:s')).toBe(0);

    // Withdrawn, and cut short by the end of the agent that waits.
    const withdrawn = msg('agent:client:c', 'agent:server:s', 'w');
    post.await('agent:client:c', { callId: 'withdrawn', replyTo: withdrawn.id });
    post.expectReply('agent:client:c', 'withdrawn', ['agent:server:s']);
    post.cancelWait('agent:client:c', 'withdrawn');
    const left = msg('agent:leaver:l', 'agent:server:s', 'l');
    post.await('agent:leaver:l', { callId: 'left', replyTo: left.id });
    post.expectReply('agent:leaver:l', 'left', ['agent:server:s']);
    expect(heldFor('agent:server:s')).toBe(1);
    post.close('agent:leaver:l');
    expect(heldFor('agent:server:s')).toBe(0);
  });

  it('counts only topics that have subscribers: one left by every subscriber (unsubscribed or ended) goes', () => {
    const { post, open } = office();
    open('agent:a:1', ['news', 'prices']);
    open('agent:b:2', ['news']);
    expect(post.toJSON()).toEqual({ mailboxes: 2, topics: 2 });
    post.unsubscribe('agent:a:1', 'prices');
    expect(post.toJSON()).toEqual({ mailboxes: 2, topics: 1 });
    post.close('agent:a:1');
    post.close('agent:b:2');
    expect(post.toJSON()).toEqual({ mailboxes: 0, topics: 0 });
    post.unsubscribe('agent:b:2', 'news'); // nothing left to leave: no error
  });
});

