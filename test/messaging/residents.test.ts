// Resident agents: they answer message after message, read mail that came while they thought at their next turn,
// and end when stopped, when they call finish, or when their turns run out.
import { describe, expect, it } from 'vitest';
import { filter, firstValueFrom } from 'rxjs';
import { z } from 'zod';
import { createRuntime, defineTool, UndeliverableError, type Message, type MessageReceipt, type ModelReply, type ModelRequest } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { collect, lastMessage, ofType, readMessages, resident, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

/** The messages an agent read since its last answer (the mail of this turn). */
function freshMail(request: ModelRequest) {
  const since = request.messages.findLastIndex((message) => message.role === 'assistant');
  return request.messages.slice(since + 1).flatMap((message) => (message.role === 'user' ? readMessages(message.content) : []));
}

/** Answers each message of this turn with a reply by id (`echo: <content>`), then says `replied`; at first, `ready`. */
function echoing(request: ModelRequest): ModelReply | string {
  const mail = freshMail(request);
  if (mail.length > 0) return callTools(...mail.map((m) => toolCall('reply', { content: `echo: ${m.content}`, message_id: m.id }, `r_${m.id}`)));
  return lastMessage(request).role === 'tool' ? 'replied' : 'ready';
}

const callsOf = (model: ScriptedModel, id: string) => model.calls.filter((request) => request.agentId === id);
const turnOf = (request: ModelRequest) => request.messages.filter((m) => m.role === 'assistant').length;

describe('resident agents', () => {
  it('end with their last answer when the runtime shuts down, as when stopped; one that never answered fails as cancelled', async () => {
    const model = new ScriptedModel((request) => (request.agentName === 'echo' ? 'Ready.' : new Promise<never>(() => {})));
    const runtime = createRuntime({ model, agents: [resident('echo'), resident('mute'), worker('plain')], projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Wait for messages.');
    const waiting = firstValueFrom(echo.events$.pipe(filter((event) => event.type === 'agent.waiting')));
    const plain = runtime.spawn('plain', 'Think for ever.');
    const mute = runtime.spawn('mute', 'Think for ever.');
    await waiting; // the other two think for ever

    await runtime.shutdown();

    expect(await echo.result).toMatchObject({ status: 'completed', output: 'Ready.' });
    expect(await mute.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(await plain.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
  });

  it('answer 20 messages one after another, wait between them, and end with their last answer when stopped', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'echo') return echoing(request);
        const turn = turnOf(request);
        if (turn === 20) return 'all answered';
        return callTools(toolCall('send_message', { to: 'echo', content: `q${turn}`, expect_reply: true, timeout_ms: 60_000 }, `ask${turn}`));
      },
      { latencyMs: 10 },
    );
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply']), worker('client', ['send_message'])], clock, maxTurns: 25, projectAgentDir: false });
    const events = collect(runtime.events$);
    const echo = runtime.spawn('echo', 'Echo every message.');

    const client = runtime.spawn('client', 'Ask twenty questions.');
    const report = await runtime.runUntilIdle();

    expect(await client.result).toMatchObject({ status: 'completed', output: 'all answered' });
    const last = callsOf(model, client.id).at(-1)!;
    for (let i = 0; i < 20; i++) {
      const answer = toolMessageFor(last, `ask${i}`)!;
      expect(readMessages(answer.content).map((m) => [m.from, m.content])).toEqual([[echo.id, `echo: q${i}`]]);
    }
    expect(report.waiting).toEqual([echo.id]);
    expect(runtime.record(echo.id)?.state).toBe('running');
    expect(ofType(events, 'agent.waiting').filter((event) => event.agentId === echo.id && event.reason === 'idle')).toHaveLength(21);
    expect(runtime.metrics().agents[echo.id]!.own).toMatchObject({ messagesIn: 20, messagesOut: 20 });

    runtime.stop(echo.id);
    expect(await echo.result).toMatchObject({ status: 'completed', output: 'replied', turns: 41 });
    await runtime.shutdown();
  });

  it('read the messages that came while they thought at their next turn, in order, as user messages naming the sender', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        sink: ['first answer', 'second answer'],
        alice: [callTools(toolCall('send_message', { to: 'sink', content: 'a1' }, 's1')), callTools(toolCall('send_message', { to: 'sink', content: 'a2' }, 's2')), 'sent'],
      },
      { latencyMs: (request) => (request.agentName === 'sink' ? 100 : 10) },
    );
    const runtime = createRuntime({ model, agents: [resident('sink'), worker('alice', ['send_message'])], clock, projectAgentDir: false });
    const messages: Message[] = [];
    runtime.messages$.subscribe((message) => messages.push(message));
    const sink = runtime.spawn('sink', 'Take notes.');
    const alice = runtime.spawn('alice', 'Talk.');
    await runtime.send(sink.id, 'from code');

    await runtime.runUntilIdle();

    const [first, second] = callsOf(model, sink.id);
    expect(first!.messages.map((m) => m.role)).toEqual(['system', 'user']); // nothing was given to it mid-turn
    expect(second!.messages.slice(-4)).toEqual([
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: `[message ${messages[0]!.id} from runtime] from code` },
      { role: 'user', content: `[message ${messages[1]!.id} from ${alice.id}] a1` },
      { role: 'user', content: `[message ${messages[2]!.id} from ${alice.id}] a2` },
    ]);
    expect(callsOf(model, sink.id)).toHaveLength(2); // all three in one turn
    runtime.stop(sink.id);
    expect(await sink.result).toMatchObject({ status: 'completed', output: 'second answer' });
    await runtime.shutdown();
  });

  it('read mail that came while their tools ran after the tool messages, at the turn the batch ends in', async () => {
    const clock = simulatedClock();
    const sent: MessageReceipt[] = [];
    // A tool during whose run a message comes to the agent that called it.
    const busy = defineTool({
      name: 'busy',
      description: 'Works while mail comes.',
      parameters: z.object({}),
      kind: 'read',
      execute: async (_args, context) => {
        sent.push(await runtime.send(context.agentId, 'news'));
        return 'busy done';
      },
    });
    const model = scriptedPerAgent({ worker: [callTools(toolCall('busy', {}, 'c1')), 'answered'] });
    const runtime = createRuntime({ model, agents: [worker('worker', ['busy'])], tools: [busy], clock, projectAgentDir: false });
    const handle = runtime.spawn('worker', 'Work.');

    await runtime.runUntilIdle();

    const [, second] = callsOf(model, handle.id);
    expect(second!.messages.slice(-3)).toEqual([
      { role: 'assistant', content: '', toolCalls: [{ id: 'c1', name: 'busy', arguments: '{}' }] },
      { role: 'tool', toolCallId: 'c1', content: 'busy done' },
      { role: 'user', content: `[message ${sent[0]!.id} from runtime] news` },
    ]);
    expect(await handle.result).toMatchObject({ status: 'completed', output: 'answered', turns: 2 });
    await runtime.shutdown();
  });

  it('answer 20 requests that came at once in one turn, each by its id', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(echoing, { latencyMs: 10 });
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply'])], clock, projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Echo every message.');

    const replies = Array.from({ length: 20 }, (_, i) => runtime.request(echo.id, `q${i}`, { timeoutMs: 1_000 }));
    await runtime.runUntilIdle();

    expect((await Promise.all(replies)).map((reply) => reply.content)).toEqual(Array.from({ length: 20 }, (_, i) => `echo: q${i}`));
    expect(freshMail(callsOf(model, echo.id)[1]!).map((m) => m.content)).toEqual(Array.from({ length: 20 }, (_, i) => `q${i}`));
    runtime.stop(echo.id);
    await runtime.shutdown();
  });

  it('answer 100 requests that came at once in one turn, each by its id (more than it keeps of earlier turns)', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(echoing, { latencyMs: 10 });
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply'])], clock, projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Echo every message.');

    const replies = Array.from({ length: 100 }, (_, i) => runtime.request(echo.id, `q${i}`, { timeoutMs: 1_000 }).catch((error: Error) => error.message));
    await runtime.runUntilIdle();

    expect(await Promise.all(replies)).toEqual(Array.from({ length: 100 }, (_, i) => expect.objectContaining({ content: `echo: q${i}` })));
    const replied = callsOf(model, echo.id)[2]!.messages.filter((message) => message.role === 'tool');
    expect(replied.filter((message) => message.isError === true)).toEqual([]);
    runtime.stop(echo.id);
    await runtime.shutdown();
  });

  it('hold no slot while they wait: under maxParallel 1 other agents run', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ sink: ['waiting'], worker: ['done'] });
    const runtime = createRuntime({ model, agents: [resident('sink'), worker()], clock, maxParallel: 1, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Wait.');

    const results = [runtime.run('worker', 'one'), runtime.run('worker', 'two')];
    await runtime.runUntilIdle();

    expect((await Promise.all(results)).map((result) => result.status)).toEqual(['completed', 'completed']);
    expect(runtime.record(sink.id)).toMatchObject({ state: 'running', holdsSlot: false });
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  describe('ending', () => {
    it('a resident stopped before it gave any answer fails with cancelled', async () => {
      const clock = simulatedClock();
      const model = scriptedPerAgent({ sink: [callTools(toolCall('wait_for_messages', { timeout_ms: 60_000 }, 'w'))] });
      const runtime = createRuntime({ model, agents: [resident('sink', ['wait_for_messages'])], clock, projectAgentDir: false });
      const waiting = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'agent.waiting')));
      const sink = runtime.spawn('sink', 'Wait.');
      await waiting;

      runtime.stop(sink.id);

      expect(await sink.result).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled', message: 'Stopped before it gave an answer.' } });
      expect(await runtime.runUntilIdle()).toMatchObject({ waiting: [] }); // its wait's timer went with it
      expect(runtime.now()).toBe(0);
      await runtime.shutdown();
    });

    it('the finish tool ends a resident with the answer it gives; later messages are dead letters', async () => {
      const clock = simulatedClock();
      const model = scriptedPerAgent({
        closer: ['ready', (request) => callTools(toolCall('finish', { answer: `closing after ${freshMail(request)[0]!.content}` }, 'f'))],
      });
      const runtime = createRuntime({ model, agents: [resident('closer', ['finish'])], clock, projectAgentDir: false });
      const closer = runtime.spawn('closer', 'Close when told.');
      await runtime.runUntilIdle();

      await runtime.send(closer.id, 'the last call');
      const report = await runtime.runUntilIdle();

      expect(await closer.result).toMatchObject({ status: 'completed', output: 'closing after the last call', turns: 2 });
      expect(report.waiting).toEqual([]);
      await expect(runtime.send(closer.id, 'too late')).rejects.toMatchObject({ reason: 'ended' });
      await expect(runtime.send(closer.id, 'too late')).rejects.toBeInstanceOf(UndeliverableError);
      await runtime.shutdown();
    });

    it('the finish tool without an answer ends a resident with its last answer', async () => {
      const clock = simulatedClock();
      const model = scriptedPerAgent({ closer: ['ready', callTools(toolCall('finish', {}, 'f'))] });
      const runtime = createRuntime({ model, agents: [resident('closer', ['finish'])], clock, projectAgentDir: false });
      const closer = runtime.spawn('closer', 'Close when told.');
      await runtime.runUntilIdle();

      await runtime.send(closer.id, 'stop now');
      await runtime.runUntilIdle();

      expect(await closer.result).toMatchObject({ status: 'completed', output: 'ready' });
      await runtime.shutdown();
    });

    it('a resident whose turns run out completes with its last answer, after the tools of its last turn', async () => {
      const clock = simulatedClock();
      const model = new ScriptedModel((request) => (turnOf(request) === 0 ? 'ready' : callTools(toolCall('reply', { content: 'pong' }, 'r'))));
      const runtime = createRuntime({ model, agents: [resident('echo', ['reply'], { maxTurns: 2 })], clock, projectAgentDir: false });
      const echo = runtime.spawn('echo', 'Echo.');

      const reply = runtime.request(echo.id, 'ping');
      const report = await runtime.runUntilIdle();

      expect(await reply).toMatchObject({ from: echo.id, content: 'pong' });
      expect(await echo.result).toMatchObject({ status: 'completed', output: 'ready', turns: 2 });
      expect(report.waiting).toEqual([]);
      expect(model.calls).toHaveLength(2);
      await runtime.shutdown();
    });

    it('a resident never takes more turns than maxTurns, even when mail comes in while it thinks', async () => {
      const clock = simulatedClock();
      const model = new ScriptedModel((request) => `answer ${turnOf(request) + 1}`, { latencyMs: 100 });
      const runtime = createRuntime({ model, agents: [resident('sink', [], { maxTurns: 2 })], clock, projectAgentDir: false });
      const sink = runtime.spawn('sink', 'Take notes.');
      await runtime.send(sink.id, 'one'); // comes during turn 1: read at turn 2
      const whileTurnTwo = firstValueFrom(runtime.events$.pipe(filter((event) => event.type === 'model.request' && event.turn === 2)));
      const sending = whileTurnTwo.then(() => runtime.send(sink.id, 'two')); // comes during turn 2, the last one

      try {
        await runtime.runUntilIdle();
        await sending;

        expect(model.calls).toHaveLength(2);
        expect(await sink.result).toMatchObject({ status: 'completed', output: 'answer 2', turns: 2 });
      } finally {
        await runtime.shutdown();
      }
    });

    it('a resident that gives its answer on its last turn completes then, without waiting for a message it could not read', async () => {
      const clock = simulatedClock();
      const model = new ScriptedModel((request) => `answer ${turnOf(request) + 1}`);
      const runtime = createRuntime({ model, agents: [resident('sink', [], { maxTurns: 2 })], clock, projectAgentDir: false });
      const sink = runtime.spawn('sink', 'Take notes.');
      await runtime.runUntilIdle();
      await runtime.send(sink.id, 'one');

      try {
        const report = await runtime.runUntilIdle();

        expect(report.waiting).toEqual([]);
        expect(runtime.record(sink.id)?.state).toBe('completed');
        await expect(runtime.send(sink.id, 'two')).rejects.toMatchObject({ reason: 'ended' });
      } finally {
        await runtime.shutdown();
      }
    });
  });
});
