// A reply awaited from a topic: any subscriber may answer, so one subscriber that ends does not end the wait; the last one does.
import { describe, expect, it } from 'vitest';
import { createRuntime, InboxFullError, UndeliverableError, type AgentDefinition } from 'troupe';
import { callTools, toolCall, type ScriptedModelOptions, type ScriptStep } from 'troupe/testing';
import { collect, lastMessage, ofType, readMessages, resident, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

/**
 * Two residents subscribed to topic `q`, spawned and waiting: "full", whose inbox (capacity 1, reject) is filled until
 * it refuses, and "answerer", which replies "yes" to the first message it reads; plus `more` scripts and agents.
 */
async function oneSubscriberFull(more: { scripts?: Record<string, readonly ScriptStep[]>; agents?: AgentDefinition[] }, latencyMs: ScriptedModelOptions['latencyMs']) {
  const model = scriptedPerAgent(
    { full: ['waiting', 'busy', 'busy'], answerer: ['waiting', callTools(toolCall('reply', { content: 'yes' }, 'r1')), 'replied'], ...more.scripts },
    { latencyMs },
  );
  const agents = [
    resident('full', [], { subscribe: ['q'], inbox: { capacity: 1, overflow: 'reject' } }),
    resident('answerer', ['reply'], { subscribe: ['q'] }),
    ...(more.agents ?? []),
  ];
  const runtime = createRuntime({ model, agents, clock: simulatedClock(), projectAgentDir: false });
  const full = runtime.spawn('full', 'Wait.');
  const answerer = runtime.spawn('answerer', 'Wait.');
  await runtime.runUntilIdle();
  // Fill the inbox of "full" (it reads its first message as it thinks, then holds one more).
  let refused = false;
  for (let sent = 0; sent < 4 && !refused; sent += 1) refused = await runtime.send(full.id, `filler ${sent}`).then(() => false, (error: unknown) => error instanceof InboxFullError);
  expect(refused).toBe(true);
  return { model, runtime, full, answerer };
}

describe('send_message with expect_reply to a topic', () => {
  it('waits on when the first subscriber ends without replying, and takes the reply of another', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        quitter: ['waiting', callTools(toolCall('finish', { answer: 'gone' }, 'f1'))],
        answerer: ['waiting', callTools(toolCall('reply', { content: 'yes' }, 'r1')), 'replied'],
        asker: [callTools(toolCall('send_message', { to: 'topic:q', content: 'anyone?', expect_reply: true }, 's1')), 'done'],
      },
      // The quitter ends before the answerer, slower, replies.
      { latencyMs: (request) => (request.agentName === 'answerer' ? 500 : 50) },
    );
    const agents = [resident('quitter', ['finish'], { subscribe: ['q'] }), resident('answerer', ['reply'], { subscribe: ['q'] }), worker('asker', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const quitter = runtime.spawn('quitter', 'Wait.');
    const answerer = runtime.spawn('answerer', 'Wait.');
    await runtime.runUntilIdle();
    const asker = runtime.run('asker', 'Ask the topic.');
    await runtime.runUntilIdle();

    expect(await quitter.result).toMatchObject({ status: 'completed', output: 'gone' });
    expect(await asker).toMatchObject({ status: 'completed', output: 'done' });
    const last = model.calls.filter((request) => request.agentName === 'asker').at(-1)!;
    const result = toolMessageFor(last, 's1');
    expect(result?.content).not.toMatch(/^Error/);
    expect(readMessages(result!.content)).toEqual([expect.objectContaining({ from: answerer.id, content: 'yes' })]);
    expect(lastMessage(last).role).toBe('tool');
    runtime.stop(answerer.id);
    await runtime.shutdown();
  });

  it('runtime.request to a topic gets the reply of one subscriber although another one\'s full inbox refused it', async () => {
    const { runtime, full, answerer } = await oneSubscriberFull({}, 50);

    const reply = runtime.request('topic:q', 'anyone?', { timeoutMs: 10_000 }).catch((error: unknown) => error);
    await runtime.runUntilIdle();

    expect(await reply).toMatchObject({ from: answerer.id, content: 'yes' });
    runtime.stop(full.id);
    runtime.stop(answerer.id);
    await runtime.shutdown();
  });

  it('send_message with expect_reply to a topic gets the reply of one subscriber although another one\'s full inbox refused it', async () => {
    const { model, runtime, full, answerer } = await oneSubscriberFull(
      {
        scripts: { asker: [callTools(toolCall('send_message', { to: 'topic:q', content: 'anyone?', expect_reply: true }, 's1')), 'done'] },
        agents: [worker('asker', ['send_message'])],
      },
      // "full" thinks long about its first filler, so its inbox is still full when the asker sends.
      (request) => (request.agentName === 'full' ? 1_000 : 50),
    );

    const asker = runtime.run('asker', 'Ask the topic.');
    await runtime.runUntilIdle();

    expect(await asker).toMatchObject({ status: 'completed', output: 'done' });
    const last = model.calls.filter((request) => request.agentName === 'asker').at(-1)!;
    expect(readMessages(toolMessageFor(last, 's1')!.content)).toEqual([expect.objectContaining({ from: answerer.id, content: 'yes' })]);
    runtime.stop(full.id);
    runtime.stop(answerer.id);
    await runtime.shutdown();
  });

  it('ends with an error result once every subscriber that got the message has ended without replying', async () => {
    const clock = simulatedClock();
    const quits = ['waiting', callTools(toolCall('finish', { answer: 'gone' }, 'f1'))];
    const model = scriptedPerAgent(
      {
        early: quits,
        late: quits,
        asker: [callTools(toolCall('send_message', { to: 'topic:q', content: 'anyone?', expect_reply: true }, 's1')), 'nobody answered'],
      },
      { latencyMs: (request) => (request.agentName === 'late' ? 500 : 50) },
    );
    const agents = [resident('early', ['finish'], { subscribe: ['q'] }), resident('late', ['finish'], { subscribe: ['q'] }), worker('asker', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    runtime.spawn('early', 'Wait.');
    runtime.spawn('late', 'Wait.');
    await runtime.runUntilIdle();
    const asker = runtime.run('asker', 'Ask the topic.');
    await runtime.runUntilIdle(); // not a deadlock: the wait ends when the last subscriber does

    expect(await asker).toMatchObject({ status: 'completed', output: 'nobody answered' });
    const last = model.calls.filter((request) => request.agentName === 'asker').at(-1)!;
    expect(toolMessageFor(last, 's1')).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: every agent that got msg:\d+ \(2\) ended without replying/) });
    expect(ofType(events, 'tool.wait_ended')).toEqual([expect.objectContaining({ outcome: 'ended', status: 'error' })]);
    await runtime.shutdown();
  });

  it('runtime.request to a topic rejects with UndeliverableError once every subscriber that got it has ended without replying', async () => {
    const clock = simulatedClock();
    const quits = ['waiting', callTools(toolCall('finish', { answer: 'gone' }, 'f1'))];
    const model = scriptedPerAgent({ early: quits, late: quits }, { latencyMs: (request) => (request.agentName === 'late' ? 500 : 50) });
    const agents = [resident('early', ['finish'], { subscribe: ['q'] }), resident('late', ['finish'], { subscribe: ['q'] })];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const early = runtime.spawn('early', 'Wait.');
    const late = runtime.spawn('late', 'Wait.');
    await runtime.runUntilIdle();

    let outcome: unknown = 'still waiting';
    void runtime.request('topic:q', 'anyone?').then((reply) => (outcome = reply), (error: unknown) => (outcome = error));
    await runtime.runUntilIdle();

    await Promise.all([early.result, late.result]);
    expect(outcome).toBeInstanceOf(UndeliverableError);
    expect(outcome).toMatchObject({ reason: 'ended', message: expect.stringMatching(/^Every agent that got msg:\d+ \(2\) ended without replying/) });
    await runtime.shutdown();
  });
});
