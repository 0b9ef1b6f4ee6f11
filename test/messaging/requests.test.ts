// Request and reply (from code and from agents), and wait_for_messages: waking, timing out, filtering, collecting.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, ReplyTimeoutError, RuntimeClosedError, UndeliverableError, UnknownAgentError, type Message, type ModelReply, type ModelRequest } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { collect, lastMessage, ofType, readMessages, resident, scripted, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

/**
 * An echo agent's script: it answers every message it reads with the `reply` tool (`echo: <content>`), then says
 * `replied`; its first turn says `ready`.
 */
function echoing(request: ModelRequest): ModelReply | string {
  const last = lastMessage(request);
  const [read] = last.role === 'user' ? readMessages(last.content) : [];
  if (read) return callTools(toolCall('reply', { content: `echo: ${read.content}` }, `r_${read.id}`));
  return last.role === 'tool' ? 'replied' : 'ready';
}

/** The requests agent `id` made. */
const callsOf = (model: ScriptedModel, id: string) => model.calls.filter((request) => request.agentId === id);

describe('request and reply', () => {
  it('runtime.request resolves with the reply of a resident agent that uses the reply tool (even with canMessage empty)', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(echoing, { latencyMs: 50 });
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply'], { canMessage: [] })], clock, projectAgentDir: false });
    const messages: Message[] = [];
    runtime.messages$.subscribe((message) => messages.push(message));
    const echo = runtime.spawn('echo', 'Echo what you read.');

    const reply = runtime.request('echo', 'ping', { timeoutMs: 10_000 });
    const report = await runtime.runUntilIdle();

    const request = messages.find((message) => message.from === 'runtime')!;
    expect(await reply).toMatchObject({ from: echo.id, to: 'runtime', replyTo: request.id, content: 'echo: ping' });
    expect(request).toMatchObject({ to: 'echo', content: 'ping' });
    expect(report.waiting).toEqual([echo.id]); // back to waiting, and the request's timer is gone
    expect(runtime.now()).toBeLessThan(10_000);
    runtime.stop(echo.id);
    expect(await echo.result).toMatchObject({ status: 'completed', output: 'replied' });
    await runtime.shutdown();
  });

  it('runtime.request rejects with ReplyTimeoutError when no reply comes within timeoutMs of simulated time', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'I read it, and say nothing.', { latencyMs: 50 });
    const runtime = createRuntime({ model, agents: [resident('mute')], clock, projectAgentDir: false });
    const mute = runtime.spawn('mute', 'Stay silent.');

    const failure = runtime.request(mute.id, 'anyone there?', { timeoutMs: 5_000 }).catch((error: unknown) => error);
    await runtime.runUntilIdle();

    const error = await failure;
    expect(error).toBeInstanceOf(ReplyTimeoutError);
    expect(error).toMatchObject({ code: 'reply_timeout', timeoutMs: 5_000, messageId: expect.stringMatching(/^msg:/) });
    expect(runtime.now()).toBe(5_000); // the limit passed on the simulated clock
    expect(callsOf(model, mute.id)).toHaveLength(2); // the message did arrive; it just got no reply
    runtime.stop(mute.id);
    await runtime.shutdown();
  });

  it('runtime.request to nobody rejects at once with UndeliverableError and leaves no timer behind', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: scripted([]), agents: [worker()], clock, projectAgentDir: false });

    await expect(runtime.request('worker', 'hello?', { timeoutMs: 5_000 })).rejects.toMatchObject({ reason: 'no_live_agent' });
    await expect(runtime.request('worker', 'hello?', { timeoutMs: 5_000 })).rejects.toBeInstanceOf(UndeliverableError);
    expect(await runtime.runUntilIdle()).toEqual({ at: 0, waiting: [] });
    await runtime.shutdown();
  });

  it('runtime.request refuses a timeoutMs that is not a positive finite number, and rejects once the runtime is shut down', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'noted');
    const runtime = createRuntime({ model, agents: [resident('sink')], clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Wait.');
    await runtime.runUntilIdle();

    for (const timeoutMs of [0, -5, Number.NaN, Number.POSITIVE_INFINITY]) {
      await expect(runtime.request(sink.id, 'x', { timeoutMs }), String(timeoutMs)).rejects.toBeInstanceOf(ConfigurationError);
    }
    expect(runtime.metrics().total.messagesOut).toBe(0);
    await runtime.shutdown();
    // A request after shutdown would otherwise wait for ever: nothing routes it any more.
    await expect(runtime.request(sink.id, 'anyone?')).rejects.toBeInstanceOf(RuntimeClosedError);
    await expect(runtime.send(sink.id, 'anyone?')).rejects.toBeInstanceOf(RuntimeClosedError);
  });

  it('send_message with expect_reply makes the reply the tool’s result', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'echo') return echoing(request);
        return lastMessage(request).role === 'user' ? callTools(toolCall('send_message', { to: 'echo', content: 'ping', expect_reply: true, timeout_ms: 5_000 }, 'ask')) : 'got it';
      },
      { latencyMs: 100 },
    );
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply']), worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const echo = runtime.spawn('echo', 'Echo.');

    const asker = runtime.spawn('asker', 'Ping the echo.');
    await runtime.runUntilIdle();

    expect(await asker.result).toMatchObject({ status: 'completed', output: 'got it' });
    const sent = ofType(events, 'message.sent').find((event) => event.agentId === asker.id)!.message;
    const result = toolMessageFor(callsOf(model, asker.id)[1]!, 'ask')!;
    expect(result.isError).toBeUndefined();
    expect(readMessages(result.content)).toEqual([{ id: expect.any(String), from: echo.id, replyTo: sent.id, content: 'echo: ping' }]);
    // It waited without a slot while the echo thought, then thought again once the reply was in.
    expect(ofType(events, 'agent.waiting').filter((event) => event.agentId === asker.id)).toEqual([
      expect.objectContaining({ reason: 'tool_call' }),
    ]);
    runtime.stop(echo.id);
    await runtime.shutdown();
  });

  /**
   * An asker whose first turn calls send_message with `args` to a resident that never replies (its latency 100 ms), and
   * whose next turn answers `then`; runs until idle.
   */
  async function askTheMute(args: Record<string, unknown>, then: string) {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'mute') return 'noted';
        return lastMessage(request).role === 'user' ? callTools(toolCall('send_message', { to: 'mute', content: 'ping', ...args }, 'ask')) : then;
      },
      { latencyMs: 100 },
    );
    const runtime = createRuntime({ model, agents: [resident('mute'), worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const mute = runtime.spawn('mute', 'Stay silent.');
    const asker = runtime.spawn('asker', 'Ping.');
    await runtime.runUntilIdle();
    const result = await asker.result;
    const toolMessage = toolMessageFor(callsOf(model, asker.id)[1]!, 'ask');
    runtime.stop(mute.id);
    await runtime.shutdown();
    return { asker, result, toolMessage, events };
  }

  it('send_message with expect_reply gets an error result once timeout_ms passes without a reply', async () => {
    const { asker, result, toolMessage, events } = await askTheMute({ expect_reply: true, timeout_ms: 500 }, 'gave up');

    expect(result).toMatchObject({ status: 'completed', output: 'gave up' });
    const sent = ofType(events, 'message.sent').find((event) => event.agentId === asker.id)!.message;
    expect(toolMessage).toMatchObject({ isError: true, content: `Error: no reply to ${sent.id} came within 500 ms.` });
    // Sent at 100 ms (after its first turn), given up at 600 ms on the simulated clock.
    expect(ofType(events, 'model.request').filter((event) => event.agentId === asker.id).map((event) => event.at)).toEqual([0, 600]);
  });

  it('send_message with timeout_ms but no expect_reply is refused with an error result, and nothing is sent', async () => {
    const { result, toolMessage, events } = await askTheMute({ timeout_ms: 500 }, 'told');

    expect(result).toMatchObject({ status: 'completed', output: 'told' });
    expect(toolMessage).toMatchObject({
      isError: true,
      content: expect.stringMatching(/timeout_ms is how long to wait for the reply: send with expect_reply: true .*The message was not sent\./),
    });
    expect(ofType(events, 'message.sent')).toEqual([]);
  });

  it('code answers an agent’s send_message to runtime with runtime.send and replyTo: the reply is the tool’s result', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) =>
        lastMessage(request).role === 'user'
          ? callTools(toolCall('send_message', { to: 'runtime', content: 'May I deploy?', expect_reply: true, timeout_ms: 10_000 }, 'ask'))
          : `told: ${lastMessage(request).content}`,
      { latencyMs: 100 },
    );
    const runtime = createRuntime({ model, agents: [worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const answered: Promise<unknown>[] = [];
    runtime.messages$.subscribe((message) => {
      if (message.to === 'runtime' && message.replyTo === undefined) answered.push(runtime.send(message.from, 'Yes, deploy.', { replyTo: message.id }));
    });

    const asker = runtime.spawn('asker', 'Ask before you deploy.');
    await runtime.runUntilIdle();

    const result = await asker.result;
    expect(result).toMatchObject({ status: 'completed' });
    expect(result.output).toMatch(/^told: \[message msg:\d+ from runtime in reply to msg:\d+\] Yes, deploy\.$/);
    expect(await Promise.all(answered)).toEqual([expect.objectContaining({ deliveredTo: [asker.id] })]);
    expect(runtime.now()).toBe(200); // answered at once, not after the 10 s timeout
    await runtime.shutdown();
  });

  it('code that answers in messages$ answers after the question went: the events and messages$ keep the question first', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) =>
        lastMessage(request).role === 'user' ? callTools(toolCall('send_message', { to: 'runtime', content: 'May I?', expect_reply: true }, 'ask')) : 'told',
      { latencyMs: 10 },
    );
    const runtime = createRuntime({ model, agents: [worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const seen: string[] = [];
    runtime.messages$.subscribe((message) => {
      seen.push(message.content);
      if (message.to === 'runtime' && message.replyTo === undefined) void runtime.send(message.from, 'Yes.', { replyTo: message.id });
    });

    const [result] = await Promise.all([runtime.run('asker', 'Ask.'), runtime.runUntilIdle()]);
    expect(result).toMatchObject({ status: 'completed', output: 'told' });

    const flow = events.flatMap((event) => {
      if (event.type === 'message.sent') return [`sent ${event.message.content}`];
      if (event.type === 'message.delivered') return [`delivered ${event.messageId} to ${event.agentId === 'runtime' ? 'runtime' : 'asker'}`];
      return [];
    });
    // Not the answer sent and delivered before the question it answers was sent.
    expect(flow).toEqual(['sent May I?', 'delivered msg:1 to runtime', 'sent Yes.', 'delivered msg:2 to asker']);
    expect(seen).toEqual(['May I?', 'Yes.']);
    await runtime.shutdown();
  });

  it('runtime.send refuses a from that is neither runtime nor an agent id, and an empty replyTo', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [resident('echo')], projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Wait.');
    await expect(runtime.send(echo.id, 'hi', { from: 'not an address' })).rejects.toThrow(ConfigurationError);
    await expect(runtime.publish('news', 'hi', { from: 'alice' })).rejects.toThrow(/from must be "runtime" or an agent id/);
    await expect(runtime.send(echo.id, 'hi', { replyTo: '' })).rejects.toThrow(/replyTo must be the id/);
    await expect(runtime.send(echo.id, 'hi', { from: echo.id })).resolves.toMatchObject({ deliveredTo: [echo.id] });
    runtime.stop(echo.id);
    await runtime.shutdown();
  });
});

describe('code sending in the name of an agent', () => {
  it('refuses a from that is no live agent with UnknownAgentError, sending nothing', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: new ScriptedModel(() => 'noted'), agents: [resident('echo'), resident('gone')], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const echo = runtime.spawn('echo', 'Wait.');
    const gone = runtime.spawn('gone', 'Wait.');
    runtime.subscribe(echo.id, 'news');
    await runtime.runUntilIdle();
    runtime.stop(gone.id);
    await gone.result;

    for (const from of ['agent:ghost:x1', gone.id]) {
      await expect(runtime.send(echo.id, 'hi', { from }), from).rejects.toBeInstanceOf(UnknownAgentError);
      await expect(runtime.publish('news', 'hi', { from }), from).rejects.toBeInstanceOf(UnknownAgentError);
    }
    expect(ofType(events, 'message.sent')).toEqual([]);
    expect(runtime.metrics().total.messagesOut).toBe(0);
    runtime.stop(echo.id);
    await runtime.shutdown();
  });
});

describe('wait_for_messages', () => {
  /** A listener whose first turn calls wait_for_messages with `args`, and whose second answers. */
  const listenerScript = (args: object) => [callTools(toolCall('wait_for_messages', args, 'wait')), 'heard'];

  it('wakes the agent when a message comes, with the message as the tool’s result', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      { listener: listenerScript({}), sender: [callTools(toolCall('send_message', { to: 'listener', content: 'hello' }, 's')), 'sent'] },
      { latencyMs: (request) => (request.agentName === 'sender' ? 1_000 : 0) },
    );
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages']), worker('sender', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const listener = runtime.spawn('listener', 'Listen.');
    const sender = runtime.spawn('sender', 'Say hello.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed', output: 'heard' });
    const result = toolMessageFor(callsOf(model, listener.id)[1]!, 'wait')!;
    expect(result.isError).toBeUndefined();
    expect(readMessages(result.content)).toEqual([{ id: expect.any(String), from: sender.id, content: 'hello' }]);
    expect(ofType(events, 'model.request').filter((event) => event.agentId === listener.id).map((event) => event.at)).toEqual([0, 1_000]);
    await runtime.shutdown();
  });

  it('times out in simulated time with an error result when nothing comes', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ listener: listenerScript({ timeout_ms: 500 }) });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });

    const listener = runtime.spawn('listener', 'Listen.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed', output: 'heard' });
    expect(toolMessageFor(model.calls[1]!, 'wait')).toMatchObject({ isError: true, content: 'Error: no message arrived within 500 ms.' });
    expect(runtime.now()).toBe(500);
    await runtime.shutdown();
  });

  it('with from, wakes only for that sender; the others’ messages come as mail at the next turn', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        listener: listenerScript({ from: 'bob' }),
        alice: [callTools(toolCall('send_message', { to: 'listener', content: 'from alice' }, 's')), 'sent'],
        bob: [callTools(toolCall('send_message', { to: 'listener', content: 'from bob' }, 's')), 'sent'],
      },
      { latencyMs: (request) => ({ alice: 10, bob: 20 })[request.agentName] ?? 0 },
    );
    const agents = [worker('listener', ['wait_for_messages']), worker('alice', ['send_message']), worker('bob', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const listener = runtime.spawn('listener', 'Listen to bob.');
    const alice = runtime.spawn('alice', 'Talk.');
    const bob = runtime.spawn('bob', 'Talk.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed' });
    const request = callsOf(model, listener.id)[1]!;
    const tail = request.messages.slice(-2);
    expect(tail[0]).toMatchObject({ role: 'tool', toolCallId: 'wait' });
    expect(readMessages(tail[0]!.content).map((m) => [m.from, m.content])).toEqual([[bob.id, 'from bob']]);
    expect(tail[1]!.role).toBe('user');
    expect(readMessages(tail[1]!.content).map((m) => [m.from, m.content])).toEqual([[alice.id, 'from alice']]);
    // Alice's message at 10 ms did not wake it; bob's at 20 ms did.
    expect(ofType(events, 'model.request').filter((event) => event.agentId === listener.id).map((event) => event.at)).toEqual([0, 20]);
    await runtime.shutdown();
  });

  it('with collect, gathers every message that comes until timeout_ms, in order', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        listener: listenerScript({ collect: true, timeout_ms: 1_000 }),
        pinger: [
          callTools(toolCall('send_message', { to: 'listener', content: 'ping 1' }, 's1')),
          callTools(toolCall('send_message', { to: 'listener', content: 'ping 2' }, 's2')),
          callTools(toolCall('send_message', { to: 'listener', content: 'ping 3' }, 's3')),
          'done',
        ],
      },
      { latencyMs: (request) => (request.agentName === 'pinger' ? 100 : 0) },
    );
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages']), worker('pinger', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const listener = runtime.spawn('listener', 'Collect.');
    runtime.spawn('pinger', 'Ping three times.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed' });
    const result = toolMessageFor(callsOf(model, listener.id)[1]!, 'wait')!;
    expect(result.isError).toBeUndefined();
    expect(readMessages(result.content).map((m) => m.content)).toEqual(['ping 1', 'ping 2', 'ping 3']);
    // The first message (at 100 ms) did not end the wait: it ran its whole second.
    expect(ofType(events, 'model.request').filter((event) => event.agentId === listener.id).map((event) => event.at)).toEqual([0, 1_000]);
    await runtime.shutdown();
  });

  it('with collect and no timeout_ms, gives an error result instead of waiting for ever', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ listener: listenerScript({ collect: true }) });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });

    const listener = runtime.spawn('listener', 'Collect.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed' });
    expect(toolMessageFor(model.calls[1]!, 'wait')).toMatchObject({ isError: true, content: expect.stringContaining('needs a timeout_ms') });
    await runtime.shutdown();
  });

  it('with from set to a topic, gives an error result instead of waiting for a sender that never is', async () => {
    // A topic's messages come from their publishers: `from: 'topic:news'` matched nothing, and the agent waited for ever.
    const clock = simulatedClock();
    const model = scriptedPerAgent({ listener: listenerScript({ from: 'topic:news', timeout_ms: 60_000 }) });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });

    const listener = runtime.spawn('listener', 'Listen to the news.');
    await runtime.runUntilIdle();

    expect(await listener.result).toMatchObject({ status: 'completed' });
    expect(toolMessageFor(model.calls[1]!, 'wait')).toMatchObject({ isError: true, content: expect.stringContaining('not a topic') });
    expect(runtime.now()).toBe(0); // it did not wait out its timeout
    await runtime.shutdown();
  });
});
