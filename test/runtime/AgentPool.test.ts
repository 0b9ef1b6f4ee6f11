import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, defineAgent } from 'troupe';
import { ScriptedModel, advanceUntilSettled } from 'troupe/testing';
import { collect, ofType, scripted, simulatedClock } from '../stubs.js';
import { agentFile, eachTestTempDir } from '../support/tempDir.js';

const specialist = defineAgent({ name: 'specialist', description: 'Answers questions.', systemPrompt: 'You answer.', persist: true });
const answerWithCount = () => new ScriptedModel((request) => `Answer after ${request.messages.length} messages.`);

describe('the pool of persist agents', () => {
  it('reuses the idle agent for the next task: same id, conversation kept, completed → running again', async () => {
    const model = answerWithCount();
    const runtime = createRuntime({ model, agents: [specialist], projectAgentDir: false });
    const events = collect(runtime.events$);

    const results = [];
    for (let task = 1; task <= 5; task++) results.push(await runtime.run('specialist', `Question ${task}.`));

    expect(new Set(results.map((result) => result.id)).size).toBe(1);
    expect(results.map((result) => result.output)).toEqual([2, 4, 6, 8, 10].map((count) => `Answer after ${count} messages.`));
    expect(model.calls[1]!.messages.map((message) => message.content)).toEqual([
      'You answer.',
      'Question 1.',
      'Answer after 2 messages.',
      'Question 2.',
    ]);
    expect(runtime.poolStats()).toEqual({ hits: 4, misses: 1, evictions: 0, idle: 1 });
    const states = ofType(events, 'agent.spawned').map((event) => event.resumed ?? false);
    expect(states).toEqual([false, true, true, true, true]);
    expect(runtime.metrics().total).toMatchObject({ agentsSpawned: 1, agentsCompleted: 1 });
    await runtime.shutdown();
  });

  it("gives a caller that brings its own history a fresh agent, and never one pooled under another conversation key", async () => {
    const model = answerWithCount();
    const runtime = createRuntime({ model, agents: [specialist], projectAgentDir: false });
    const alice = await runtime.run('specialist', 'My password hint is tulip.', { conversationKey: 'alice' });
    const bob = await runtime.run('specialist', 'Hello.', { conversationKey: 'bob' });
    const aliceAgain = await runtime.run('specialist', 'What was my hint?', { conversationKey: 'alice' });
    const history = [{ role: 'user' as const, content: 'Carol asked about tides.' }, { role: 'assistant' as const, content: 'Tides noted.' }];
    const carol = await runtime.run('specialist', 'Go on.', { history });

    expect(bob.id).not.toBe(alice.id);
    expect(aliceAgain.id).toBe(alice.id); // the same key reuses its own agent
    expect(model.calls[1]!.messages.map((message) => message.content)).toEqual(['You answer.', 'Hello.']);
    expect(carol.id).not.toBe(alice.id);
    expect(carol.id).not.toBe(bob.id);
    expect(model.calls[3]!.messages.map((message) => message.content)).toEqual(['You answer.', 'Carol asked about tides.', 'Tides noted.', 'Go on.']);
    await runtime.shutdown();
  });

  it('pools on request from spawn options, and never pools a failed agent', async () => {
    const model = scripted(['first', '   ', 'third', 'fourth']);
    const plain = defineAgent({ name: 'plain', description: 'P.', systemPrompt: 'P.' });
    const runtime = createRuntime({ model, agents: [plain], projectAgentDir: false });
    const first = await runtime.run('plain', 'a', { persist: true });
    const failed = await runtime.run('plain', 'b', { persist: true });
    const third = await runtime.run('plain', 'c', { persist: true });
    expect(failed).toMatchObject({ id: first.id, status: 'failed' });
    expect(third.id).not.toBe(first.id);
    expect((await runtime.run('plain', 'd')).id).not.toBe(third.id); // no persist: a new agent, pool untouched
    expect(runtime.poolStats()).toMatchObject({ hits: 1, misses: 2, idle: 1 });
    await runtime.shutdown();
  });

  it('keeps at most maxIdlePerKey idle agents per key', async () => {
    const runtime = createRuntime({ model: answerWithCount(), agents: [specialist], pool: { maxIdlePerKey: 1 }, projectAgentDir: false });
    const [a, b] = await Promise.all([runtime.run('specialist', 'One.'), runtime.run('specialist', 'Two.')]);
    expect(a.id).not.toBe(b.id);
    expect(runtime.poolStats()).toMatchObject({ misses: 2, evictions: 1, idle: 1 });
    expect((await runtime.run('specialist', 'Three.')).id).toBe(b.id);
    await runtime.shutdown();
  });

  it('lets an idle agent go after idleTimeoutMs, in simulated time', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: answerWithCount(), agents: [specialist], clock, pool: { idleTimeoutMs: 1_000 }, projectAgentDir: false });
    const first = await advanceUntilSettled(clock, runtime.run('specialist', 'One.'));
    clock.increment(999);
    expect(runtime.poolStats()).toMatchObject({ idle: 1, evictions: 0 });
    clock.increment(1);
    expect(runtime.poolStats()).toMatchObject({ idle: 0, evictions: 1 });
    const second = await advanceUntilSettled(clock, runtime.run('specialist', 'Two.'));
    expect(second.id).not.toBe(first.id);
    await runtime.shutdown();
  });

  it('never hands one agent to two tasks: a resumed pooled agent leaves the pool, and is pooled once', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel((request) => `ok ${request.messages.length}`, { latencyMs: 100 });
    const runtime = createRuntime({ model, agents: [specialist], clock, projectAgentDir: false });
    const first = await advanceUntilSettled(clock, runtime.run('specialist', 'One.'));

    const resumed = await runtime.resume(first.id, 'Again, by hand.');
    const meanwhile = runtime.spawn('specialist', 'Someone else.');
    expect(meanwhile.id).not.toBe(first.id);
    await advanceUntilSettled(clock, Promise.all([resumed.result, meanwhile.result]));

    const [a, b] = await advanceUntilSettled(clock, Promise.all([runtime.run('specialist', 'A.'), runtime.run('specialist', 'B.')]));
    expect(a.id).not.toBe(b.id);
    expect([a.id, b.id].sort()).toEqual([first.id, meanwhile.id].sort());
    expect(runtime.poolStats().idle).toBe(2);
    await runtime.shutdown();
  });

  it('refuses pool options that are not an object, or name a field it does not read, with a ConfigurationError', () => {
    const make = (pool: unknown) => () => createRuntime({ model: answerWithCount(), agents: [specialist], pool: pool as never, projectAgentDir: false });
    expect(make(null)).toThrow(new ConfigurationError('pool must be an object with maxIdlePerKey or idleTimeoutMs.'));
    expect(make(4)).toThrow(ConfigurationError);
    // Ignored, a misspelled field would keep its default (4 idle agents, 10 minutes) without a word.
    expect(make({ maxIdle: 2 })).toThrow(
      new ConfigurationError('pool: unknown field "maxIdle"; its fields are maxIdlePerKey and idleTimeoutMs.'),
    );
    expect(make({ idleTimeoutMS: 1_000 })).toThrow(/unknown field "idleTimeoutMS" \(did you mean "idleTimeoutMs"\?\)/);
  });

  it('refuses a bad spawn before touching the pool or the sessions', async () => {
    const runtime = createRuntime({ model: answerWithCount(), agents: [specialist], projectAgentDir: false });
    await runtime.run('specialist', 'One.');
    expect(() => runtime.spawn('specialist', 'Two.', { maxTurns: -1 })).toThrow(/maxTurns must be a positive number/);
    await runtime.flush();
    expect(runtime.poolStats()).toMatchObject({ hits: 0, idle: 1 });
    expect(await runtime.sessions.running()).toEqual([]);
    await runtime.shutdown();
  });

  const dir = eachTestTempDir();

  it('gives a changed agent file a new key: the stale pooled agent is not reused', async () => {
    const agents = join(dir.path, 'agents');
    mkdirSync(agents);
    writeFileSync(join(agents, 'helper.md'), agentFile('helper', ['persist: true'], 'You help, version one.'));
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false });

    const first = await runtime.run('helper', 'One.');
    const again = await runtime.run('helper', 'Two.');
    writeFileSync(join(agents, 'helper.md'), agentFile('helper', ['persist: true'], 'You help, version two.'));
    const changed = await runtime.run('helper', 'Three.');

    expect(again.id).toBe(first.id);
    expect(changed.id).not.toBe(first.id);
    expect(changed.output).toBe('You help, version two.');
    expect(runtime.poolStats()).toEqual({ hits: 1, misses: 2, evictions: 1, idle: 1 });
    await runtime.shutdown();
  });
});
