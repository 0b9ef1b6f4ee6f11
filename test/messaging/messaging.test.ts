// Messages between agents and from code: order, full inboxes, dead letters, who may message whom, and the counts.
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import {
  ConfigurationError,
  createRuntime,
  defineAgent,
  defineTool,
  InboxFullError,
  ReplyTimeoutError,
  UndeliverableError,
  type MessagePolicy,
  type MessageRequest,
  type RuntimeOptions,
  type SpawnOptions,
  toolReply,
} from 'troupe';
import { z } from 'zod';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { collect, mailIn, ofType, resident, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

/** The contents of the mail in the last request agent `name` made. */
function lastMail(model: ScriptedModel, name: string) {
  const request = model.calls.filter((r) => r.agentName === name).at(-1);
  return request ? mailIn(request) : [];
}

/** The last request agent `name` made. */
function lastCall(model: ScriptedModel, name: string) {
  return model.calls.filter((r) => r.agentName === name).at(-1)!;
}

/** How many answers an agent has given so far in this conversation. */
const turnOf = (request: { messages: readonly { role: string }[] }) => request.messages.filter((m) => m.role === 'assistant').length;

describe('ordering', () => {
  it('delivers 30 messages from one agent to another in the order they were sent, across the receiver’s turns', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'sink') return 'noted';
        const turn = turnOf(request);
        if (turn === 3) return 'sent';
        return callTools(...Array.from({ length: 10 }, (_, i) => toolCall('send_message', { to: 'sink', content: `m${turn * 10 + i}` }, `s${turn}_${i}`)));
      },
      { latencyMs: (request) => (request.agentName === 'sink' ? 25 : 10) },
    );
    const runtime = createRuntime({ model, agents: [resident('sink'), worker('talker', ['send_message'])], clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Take notes.');
    const talker = runtime.run('talker', 'Talk.');

    await runtime.runUntilIdle();

    expect(await talker).toMatchObject({ status: 'completed', output: 'sent' });
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(Array.from({ length: 30 }, (_, i) => `m${i}`));
    // The messages came in while the sink thought, over several of its turns, not all in one.
    expect(model.calls.filter((r) => r.agentName === 'sink').length).toBeGreaterThan(2);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('keeps each sender’s order when two agents send to one receiver at the same time', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'sink') return 'noted';
        const turn = turnOf(request);
        if (turn === 4) return 'sent';
        const who = request.agentName;
        return callTools(...Array.from({ length: 5 }, (_, i) => toolCall('send_message', { to: 'sink', content: `${who} ${turn * 5 + i}` }, `s${turn}_${i}`)));
      },
      { latencyMs: (request) => ({ sink: 7, alice: 10, bob: 15 })[request.agentName] ?? 0 },
    );
    const agents = [resident('sink'), worker('alice', ['send_message']), worker('bob', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Take notes.');
    const results = [runtime.run('alice', 'Talk.'), runtime.run('bob', 'Talk.')];

    await runtime.runUntilIdle();

    expect((await Promise.all(results)).map((result) => result.status)).toEqual(['completed', 'completed']);
    const contents = lastMail(model, 'sink').map((m) => m.content);
    expect(contents).toHaveLength(40);
    for (const who of ['alice', 'bob']) {
      expect(contents.filter((c) => c.startsWith(who))).toEqual(Array.from({ length: 20 }, (_, i) => `${who} ${i}`));
    }
    // They did interleave: bob's first message came before alice's last.
    expect(contents.indexOf('bob 0')).toBeLessThan(contents.indexOf('alice 19'));
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('delivers 100 messages sent from code without waiting in between in the order they were sent', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted', { latencyMs: 10 });
    const runtime = createRuntime({ model, agents: [resident('sink')], clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Take notes.');

    const receipts = await Promise.all(Array.from({ length: 100 }, (_, i) => runtime.send(sink.id, `c${i}`)));
    await runtime.runUntilIdle();

    expect(receipts.every((receipt) => receipt.deliveredTo.length === 1 && receipt.deliveredTo[0] === sink.id)).toBe(true);
    const mail = lastMail(model, 'sink');
    expect(mail.map((m) => m.content)).toEqual(Array.from({ length: 100 }, (_, i) => `c${i}`));
    expect(mail.map((m) => m.id)).toEqual(receipts.map((receipt) => receipt.id));
    runtime.stop(sink.id);
    await runtime.shutdown();
  });
});

describe('a full inbox', () => {
  it('set to reject (the default), refuses: runtime.send rejects with InboxFullError and a message.dropped event says inbox_full', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted', { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [resident('sink')], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const sink = runtime.spawn('sink', 'Take notes.', { inbox: { capacity: 2 } });

    await runtime.send(sink.id, 'one');
    await runtime.send(sink.id, 'two');
    const refused = await runtime.send(sink.id, 'three').catch((error: unknown) => error);
    await runtime.runUntilIdle();

    expect(refused).toBeInstanceOf(InboxFullError);
    expect(refused).toMatchObject({ code: 'inbox_full', receiver: sink.id });
    const { messageId } = refused as InboxFullError;
    expect(ofType(events, 'message.dropped')).toEqual([
      expect.objectContaining({ agentId: sink.id, messageId, from: 'runtime', reason: 'inbox_full' }),
    ]);
    expect(ofType(events, 'message.delivered').filter((e) => e.messageId === messageId)).toEqual([]);
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(['one', 'two']);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('set to reject, gives an agent’s send_message an error result', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'sink') return 'noted';
        return turnOf(request) === 0 ? callTools(toolCall('send_message', { to: 'sink', content: 'one more' }, 'push')) : 'tried';
      },
      { latencyMs: (request) => (request.agentName === 'sink' ? 1_000 : 10) },
    );
    const runtime = createRuntime({ model, agents: [resident('sink', [], { inbox: { capacity: 1 } }), worker('pusher', ['send_message'])], clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Take notes.');
    await runtime.send(sink.id, 'filler');
    const pusher = runtime.run('pusher', 'Push.');

    await runtime.runUntilIdle();

    expect(await pusher).toMatchObject({ status: 'completed', metrics: { own: { toolErrors: 1 } } });
    const result = toolMessageFor(lastCall(model, 'pusher'), 'push')!;
    expect(result.isError).toBe(true);
    expect(result.content).toMatch(new RegExp(`^Error: The inbox of ${sink.id} is full`));
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(['filler']);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  const dropOldest = { capacity: 2, overflow: 'drop-oldest' } as const;
  const setups: [string, { runtime?: Partial<RuntimeOptions>; definition?: object; spawn?: SpawnOptions }][] = [
    ['a spawn option', { spawn: { inbox: dropOldest } }],
    ['the agent definition', { definition: { inbox: dropOldest } }],
    ['the runtime’s inbox option', { runtime: { inbox: dropOldest } }],
  ];
  it.each(setups)('set to drop-oldest by %s, drops the oldest message (reason overflow) and keeps the newest', async (_, setup) => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted', { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [resident('sink', [], setup.definition)], clock, projectAgentDir: false, ...setup.runtime });
    const events = collect(runtime.events$);
    const sink = runtime.spawn('sink', 'Take notes.', setup.spawn);

    const first = await runtime.send(sink.id, 'one');
    const second = await runtime.send(sink.id, 'two');
    const third = await runtime.send(sink.id, 'three');
    await runtime.runUntilIdle();

    expect(second.dropped).toEqual([]);
    expect(third).toMatchObject({ deliveredTo: [sink.id], refusedBy: [], dropped: [{ messageId: first.id, at: sink.id }] });
    expect(ofType(events, 'message.dropped')).toEqual([
      expect.objectContaining({ agentId: sink.id, messageId: first.id, reason: 'overflow' }),
    ]);
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(['two', 'three']);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });
});

describe('inbox settings', () => {
  it('a publish reaches the subscribers with room and names the one whose full inbox refused it, without failing', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted', { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [resident('reader', [], { subscribe: ['news'] })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const roomy = runtime.spawn('reader', 'Read.');
    const cramped = runtime.spawn('reader', 'Read.', { inbox: { capacity: 1 } });
    await runtime.send(cramped.id, 'filler');

    const receipt = await runtime.publish('news', 'extra!');
    await runtime.runUntilIdle();

    expect(receipt).toMatchObject({ deliveredTo: [roomy.id], refusedBy: [cramped.id], dropped: [] });
    expect(ofType(events, 'message.dropped')).toEqual([expect.objectContaining({ agentId: cramped.id, messageId: receipt.id, reason: 'inbox_full' })]);
    const mailOf = (id: string) => mailIn(model.calls.filter((r) => r.agentId === id).at(-1)!).map((m) => m.content);
    expect(mailOf(roomy.id)).toEqual(['extra!']);
    expect(mailOf(cramped.id)).toEqual(['filler']);
    runtime.stop(roomy.id);
    runtime.stop(cramped.id);
    await runtime.shutdown();
  });

  it('refuses a spawn whose inbox capacity is not a whole number, and the runtime goes on', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted');
    const runtime = createRuntime({ model, agents: [resident('sink')], clock, projectAgentDir: false });

    expect(() => runtime.spawn('sink', 'Take notes.', { inbox: { capacity: 2.5 } })).toThrow(ConfigurationError);
    const sink = runtime.spawn('sink', 'Take notes.');
    const receipt = await runtime.send('sink', 'still working?');
    await runtime.runUntilIdle();

    expect(receipt.deliveredTo).toEqual([sink.id]);
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(['still working?']);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('a spawn refused for its inbox capacity leaves no session behind', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'noted'), agents: [resident('sink')], clock: simulatedClock(), projectAgentDir: false });
    try {
      expect(() => runtime.spawn('sink', 'Take notes.', { inbox: { capacity: 2.5 } })).toThrow(ConfigurationError);
      await runtime.flush();
      expect(await runtime.sessions.list()).toEqual([]);
    } finally {
      await runtime.shutdown();
    }
  });

  it('reports the messages an agent never read as dropped (unread) when it ends', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'done', { latencyMs: 100 });
    const runtime = createRuntime({ model, agents: [worker()], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const handle = runtime.spawn('worker', 'Work.');

    const receipt = await runtime.send(handle.id, 'too late to matter'); // comes while it thinks its final answer
    await runtime.runUntilIdle();

    expect((await handle.result).output).toBe('done');
    expect(ofType(events, 'message.dropped')).toEqual([
      expect.objectContaining({ agentId: handle.id, messageId: receipt.id, from: 'runtime', reason: 'unread' }),
    ]);
    await runtime.shutdown();
  });
});

describe('dead letters', () => {
  it('names why a message reached nobody: unknown id, ended agent, no live agent, two live agents', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'done');
    const runtime = createRuntime({ model, agents: [worker(), resident('twin')], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const ended = await runtime.run('worker', 'Work.');
    const twins = [runtime.spawn('twin', 'Wait.'), runtime.spawn('twin', 'Wait.')];
    await runtime.runUntilIdle();

    const failures = await Promise.all(
      ['agent:ghost:nobody', ended.id, 'worker', 'twin'].map((to) => runtime.send(to, 'hello?').catch((error: unknown) => error)),
    );

    expect(failures.map((error) => error instanceof UndeliverableError && error.reason)).toEqual([
      'unknown_agent',
      'ended',
      'no_live_agent',
      'ambiguous',
    ]);
    expect(failures.map((error) => (error as UndeliverableError).address)).toEqual(['agent:ghost:nobody', ended.id, 'worker', 'twin']);
    expect((failures[3] as Error).message).toContain(`${twins[0]!.id}, ${twins[1]!.id}`);
    const dead = ofType(events, 'message.dead_letter');
    expect(dead.map((event) => [event.message.to, event.reason])).toEqual([
      ['agent:ghost:nobody', 'unknown_agent'],
      [ended.id, 'ended'],
      ['worker', 'no_live_agent'],
      ['twin', 'ambiguous'],
    ]);
    expect(dead.every((event) => event.agentId === 'runtime')).toBe(true);
    expect(ofType(events, 'message.delivered')).toEqual([]);
    for (const twin of twins) runtime.stop(twin.id);
    await runtime.shutdown();
  });

  it('gives an agent that sends to nobody an error result, and reports the dead letter under its id', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ lonely: [callTools(toolCall('send_message', { to: 'nobody', content: 'hi' }, 'c1')), 'alone'] });
    const runtime = createRuntime({ model, agents: [worker('lonely', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = runtime.run('lonely', 'Say hi.');
    await runtime.runUntilIdle();

    const { id } = await result;
    expect(toolMessageFor(model.calls[1]!, 'c1')).toMatchObject({ isError: true, content: 'Error: No live agent is named "nobody".' });
    expect(ofType(events, 'message.dead_letter')).toEqual([expect.objectContaining({ agentId: id, reason: 'no_live_agent' })]);
    await runtime.shutdown();
  });
  it('a reply with no message read to answer is refused as no_message, not as a message to an unknown agent', async () => {
    // A tool of the agent's own reads the error as code would: its reason and address.
    const seen: { reason: string; address: string }[] = [];
    const answerBack = defineTool({
      name: 'answer_back',
      description: 'Replies to the message being handled.',
      parameters: z.object({ id: z.string().optional() }),
      kind: 'other',
      execute: async ({ id }, context) => {
        try {
          await context.messaging!.reply('thanks', id);
          return 'replied';
        } catch (error) {
          if (!(error instanceof UndeliverableError)) throw error;
          seen.push({ reason: error.reason, address: error.address });
          return toolReply({ content: error.message, isError: true });
        }
      },
    });
    const model = scriptedPerAgent({ eager: [callTools(toolCall('answer_back', {}, 'a'), toolCall('answer_back', { id: 'msg:missing' }, 'b')), 'done'] });
    const runtime = createRuntime({ model, agents: [worker('eager', ['answer_back'])], tools: [answerBack], projectAgentDir: false });
    await runtime.run('eager', 'Reply.');
    expect(seen).toEqual([
      { reason: 'no_message', address: '(none)' },
      { reason: 'no_message', address: 'msg:missing' },
    ]);
    expect(toolMessageFor(model.calls[1]!, 'a')).toMatchObject({ isError: true, content: 'There is no message to reply to yet.' });
    await runtime.shutdown();
  });

  it('a send_message with expect_reply that reaches nobody leaves no wait behind: the resident still wakes for mail', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel((request) => {
      const last = request.messages.at(-1)!;
      if (turnOf(request) === 0) return callTools(toolCall('send_message', { to: 'nobody', content: 'hi', expect_reply: true, timeout_ms: 60_000 }, 'ask'));
      return last.role === 'tool' ? 'nobody answered' : `read: ${mailIn(request).at(-1)?.content}`;
    });
    const runtime = createRuntime({ model, agents: [resident('hopeful', ['send_message'])], clock, projectAgentDir: false });
    const hopeful = runtime.spawn('hopeful', 'Say hi.');
    const first = await runtime.runUntilIdle();

    await runtime.send(hopeful.id, 'here I am');
    const second = await runtime.runUntilIdle();

    expect(toolMessageFor(model.calls[1]!, 'ask')).toMatchObject({ isError: true, content: 'Error: No live agent is named "nobody".' });
    expect(first).toEqual({ at: 0, waiting: [hopeful.id] }); // no 60 s timer was left running
    expect(second.waiting).toEqual([hopeful.id]);
    expect(model.calls.at(-1)!.messages.at(-1)).toMatchObject({ role: 'user', content: expect.stringMatching(/\] here I am$/) });
    runtime.stop(hopeful.id);
    expect((await hopeful.result).output).toBe('read: here I am');
    await runtime.shutdown();
  });
});

describe('who may message whom', () => {
  it('refuses a message outside the sender’s canMessage list with an error result, and delivers nothing', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      gossip: [
        callTools(
          toolCall('send_message', { to: 'stranger', content: 'psst' }, 'toStranger'),
          toolCall('send_message', { to: 'friend', content: 'hello friend' }, 'toFriend'),
          toolCall('publish', { topic: 'news', content: 'extra!' }, 'toNews'),
          toolCall('publish', { topic: 'sports', content: 'goal' }, 'toSports'),
        ),
        'done',
      ],
      stranger: ['waiting', 'read'],
      friend: ['waiting', 'read'],
    });
    const gossip = defineAgent({
      name: 'gossip',
      description: 'Talks.',
      systemPrompt: 'Talk.',
      tools: ['send_message', 'publish'],
      canMessage: ['friend', 'topic:sports'],
    });
    const agents = [gossip, resident('stranger', [], { subscribe: ['news', 'sports'] }), resident('friend')];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const stranger = runtime.spawn('stranger', 'Wait.');
    const friend = runtime.spawn('friend', 'Wait.');

    const result = runtime.run('gossip', 'Gossip.');
    await runtime.runUntilIdle();

    expect(await result).toMatchObject({ status: 'completed', metrics: { own: { messagesOut: 2 } } });
    const request = model.calls.filter((r) => r.agentName === 'gossip')[1]!;
    expect(toolMessageFor(request, 'toStranger')).toMatchObject({
      isError: true,
      content: 'Error: Agent "gossip" may not message stranger. It may message: friend, topic:sports.',
    });
    expect(toolMessageFor(request, 'toNews')).toMatchObject({ isError: true, content: expect.stringContaining('may not message topic:news') });
    expect(toolMessageFor(request, 'toFriend')?.isError).toBeUndefined();
    expect(toolMessageFor(request, 'toSports')?.content).toMatch(/delivered to agent:stranger:/);
    expect(ofType(events, 'message.sent').map((event) => event.message.content)).toEqual(['hello friend', 'goal']);
    expect(ofType(events, 'message.delivered').map((event) => [event.agentId, event.messageId])).toEqual([
      [friend.id, expect.any(String)],
      [stranger.id, expect.any(String)],
    ]);
    expect(runtime.metrics().agents[stranger.id]!.own.messagesIn).toBe(1); // the sports message only
    runtime.stop(stranger.id);
    runtime.stop(friend.id);
    await runtime.shutdown();
  });

  it('asks the runtime’s messagePolicy about every message an agent sends, and refuses what it denies', async () => {
    const clock = simulatedClock();
    const policy = vi.fn<MessagePolicy>((request) =>
      request.content.includes('secret') ? { decision: 'deny', reason: 'no secrets on this channel' } : 'allow',
    );
    const model = scriptedPerAgent({
      talker: [
        callTools(toolCall('send_message', { to: 'sink', content: 'the secret plan' }, 'secret'), toolCall('send_message', { to: 'sink', content: 'hello' }, 'hello')),
        'done',
      ],
      sink: ['waiting', 'read', 'read'],
    });
    const runtime = createRuntime({ model, agents: [worker('talker', ['send_message']), resident('sink')], clock, messagePolicy: policy, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Wait.');

    const talker = runtime.spawn('talker', 'Talk.');
    await runtime.runUntilIdle();
    await runtime.send(sink.id, 'a secret from code'); // code is not asked
    await runtime.runUntilIdle();

    expect((await talker.result).status).toBe('completed');
    const talkerId = talker.id;
    expect(policy.mock.calls.map(([request]) => request)).toEqual([
      { from: { id: talkerId, name: 'talker' }, to: 'sink', content: 'the secret plan' },
      { from: { id: talkerId, name: 'talker' }, to: 'sink', content: 'hello' },
    ]);
    const request = lastCall(model, 'talker');
    expect(toolMessageFor(request, 'secret')).toMatchObject({
      isError: true,
      content: 'Error: The message to sink was refused: no secrets on this channel',
    });
    expect(lastMail(model, 'sink').map((m) => m.content)).toEqual(['hello', 'a secret from code']);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('refuses a message when the policy answers with a promise, and leaves no unhandled rejection behind', async () => {
    const clock = simulatedClock();
    // Written as an async function, which the type does not allow: its answer would come after the message went.
    const policy = (async (request: MessageRequest) => {
      if (request.content === 'boom') throw new Error('policy crashed');
      return 'allow';
    }) as unknown as MessagePolicy;
    const unhandled: unknown[] = [];
    const hear = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', hear);
    onTestFinished(() => void process.off('unhandledRejection', hear));
    const model = scriptedPerAgent({
      talker: [callTools(toolCall('send_message', { to: 'sink', content: 'boom' }, 'boom'), toolCall('send_message', { to: 'sink', content: 'fine' }, 'fine')), 'done'],
      sink: ['waiting'],
    });
    const runtime = createRuntime({ model, agents: [worker('talker', ['send_message']), resident('sink')], clock, messagePolicy: policy, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Wait.');

    const result = runtime.run('talker', 'Talk.');
    await runtime.runUntilIdle();
    await new Promise<void>((resolve) => setImmediate(resolve)); // Node reports unhandled rejections between turns

    expect(await result).toMatchObject({ status: 'completed', metrics: { own: { toolErrors: 2, messagesOut: 0 } } });
    const refused = "Error: The message to sink was refused: the policy answered with a promise; a message policy decides at once ('allow', or { decision: 'deny', reason }).";
    expect(toolMessageFor(lastCall(model, 'talker'), 'boom')?.content).toBe(refused);
    expect(toolMessageFor(lastCall(model, 'talker'), 'fine')?.content).toBe(refused);
    expect(unhandled).toEqual([]);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it('asks the policy about replies too (which skip canMessage): a denied reply is an error result and reaches nobody', async () => {
    const clock = simulatedClock();
    const policy = vi.fn<MessagePolicy>((request) => (request.content.includes('secret') ? { decision: 'deny', reason: 'no secrets' } : 'allow'));
    const model = scriptedPerAgent({ clerk: ['ready', callTools(toolCall('reply', { content: 'the secret is 42' }, 'r')), 'refused'] });
    const runtime = createRuntime({ model, agents: [resident('clerk', ['reply'], { canMessage: [] })], clock, messagePolicy: policy, projectAgentDir: false });
    const clerk = runtime.spawn('clerk', 'Answer questions.');

    const answer = runtime.request(clerk.id, 'What is the password?', { timeoutMs: 1_000 }).catch((error: unknown) => error);
    await runtime.runUntilIdle();

    expect(await answer).toBeInstanceOf(ReplyTimeoutError);
    expect(policy.mock.calls.map(([request]) => request)).toEqual([{ from: { id: clerk.id, name: 'clerk' }, to: 'runtime', content: 'the secret is 42' }]);
    expect(toolMessageFor(lastCall(model, 'clerk'), 'r')).toMatchObject({ isError: true, content: 'Error: The message to runtime was refused: no secrets' });
    runtime.stop(clerk.id);
    await runtime.shutdown();
  });

  it('refuses a message when the policy throws or gives an answer it may not give', async () => {
    const clock = simulatedClock();
    const policy: MessagePolicy = (request) => {
      if (request.content === 'boom') throw new Error('policy crashed');
      return 'maybe' as never;
    };
    const model = scriptedPerAgent({
      talker: [callTools(toolCall('send_message', { to: 'sink', content: 'boom' }, 'boom'), toolCall('send_message', { to: 'sink', content: 'odd' }, 'odd')), 'done'],
      sink: ['waiting'],
    });
    const runtime = createRuntime({ model, agents: [worker('talker', ['send_message']), resident('sink')], clock, messagePolicy: policy, projectAgentDir: false });
    const events = collect(runtime.events$);
    const sink = runtime.spawn('sink', 'Wait.');

    const result = runtime.run('talker', 'Talk.');
    await runtime.runUntilIdle();

    expect(await result).toMatchObject({ status: 'completed', metrics: { own: { toolErrors: 2, messagesOut: 0 } } });
    const request = lastCall(model, 'talker');
    expect(toolMessageFor(request, 'boom')?.content).toBe('Error: The message policy failed, so the message is refused: policy crashed');
    expect(toolMessageFor(request, 'odd')?.content).toMatch(/^Error: The message to sink was refused: the policy gave an answer it may not give/);
    expect(ofType(events, 'message.sent')).toEqual([]);
    runtime.stop(sink.id);
    await runtime.shutdown();
  });
});

describe('message metrics', () => {
  it('counts messages out per sender and in per receiver, a publish once out and once per subscriber in', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      alice: [
        callTools(
          toolCall('send_message', { to: 'bob', content: 'one' }, 'a1'),
          toolCall('send_message', { to: 'bob', content: 'two' }, 'a2'),
          toolCall('publish', { topic: 'news', content: 'extra!' }, 'a3'),
        ),
        'done',
      ],
      bob: ['waiting', 'read', 'read', 'read'],
      reader: ['waiting', 'read'],
    });
    const agents = [worker('alice', ['send_message', 'publish']), resident('bob'), resident('reader', [], { subscribe: ['news'] })];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const bob = runtime.spawn('bob', 'Wait.');
    const readers = [runtime.spawn('reader', 'Read.'), runtime.spawn('reader', 'Read.')];
    await runtime.send('bob', 'from code');

    const alice = await runtime.run('alice', 'Talk.');
    await runtime.runUntilIdle();
    runtime.stop(bob.id);
    for (const reader of readers) runtime.stop(reader.id);
    const [bobResult, ...readerResults] = await Promise.all([bob.result, ...readers.map((reader) => reader.result)]);

    const { agents: figures, total } = runtime.metrics();
    expect(figures[alice.id]!.own).toMatchObject({ messagesOut: 3, messagesIn: 0 });
    expect(alice.metrics.own).toMatchObject({ messagesOut: 3, messagesIn: 0 });
    expect(figures[bob.id]!.own).toMatchObject({ messagesOut: 0, messagesIn: 3 });
    expect(bobResult.metrics.own).toMatchObject({ messagesOut: 0, messagesIn: 3 });
    for (const [index, reader] of readers.entries()) {
      expect(figures[reader.id]!.own).toMatchObject({ messagesOut: 0, messagesIn: 1 });
      expect(readerResults[index]!.metrics.own.messagesIn).toBe(1);
    }
    // Code's message counts in the total only: 4 sent (3 by alice, 1 by code), 5 delivered (3 to bob, 2 to readers).
    expect(total).toMatchObject({ messagesOut: 4, messagesIn: 5 });
    await runtime.shutdown();
  });
});
