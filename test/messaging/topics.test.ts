// Topics: one publish, a copy for every subscriber but the publisher; the four ways to subscribe.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, defineAgent, UnknownAgentError, type Message } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { agentFile, tempDir } from '../support/tempDir.js';
import { collect, mailIn, ofType, resident, scriptedPerAgent, simulatedClock, toolMessageFor } from '../stubs.js';

/** The mail in the last request of agent `id`. */
function lastMailOf(model: ScriptedModel, id: string) {
  const request = model.calls.filter((r) => r.agentId === id).at(-1);
  return request ? mailIn(request) : [];
}

describe('topics', () => {
  it('delivers one publish to each of 50 subscribers (subscribed by their definition), and not to the publisher', async () => {
    const clock = simulatedClock();
    const herald = defineAgent({
      name: 'herald',
      description: 'Publishes.',
      systemPrompt: 'Publish.',
      tools: ['publish'],
      subscribe: ['news'], // subscribed itself: it must still not get its own message
    });
    const model = scriptedPerAgent(
      { herald: [callTools(toolCall('publish', { topic: 'news', content: 'extra!' }, 'p1')), 'published'], reader: ['waiting', 'read it'] },
      { latencyMs: 5 },
    );
    const runtime = createRuntime({ model, agents: [herald, resident('reader', [], { subscribe: ['news'] })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const messages: Message[] = [];
    runtime.messages$.subscribe((message) => messages.push(message));
    const readers = Array.from({ length: 50 }, () => runtime.spawn('reader', 'Read the news.'));

    const published = runtime.spawn('herald', 'Publish.');
    await runtime.runUntilIdle();

    expect(await published.result).toMatchObject({ status: 'completed', output: 'published' });
    expect(messages).toHaveLength(1); // one message, however many receivers
    expect(messages[0]).toMatchObject({ from: published.id, to: 'topic:news', content: 'extra!' });
    const delivered = ofType(events, 'message.delivered');
    expect(delivered.map((event) => event.agentId).sort()).toEqual(readers.map((reader) => reader.id).sort());
    expect(delivered.every((event) => event.topic === 'news' && event.messageId === messages[0]!.id)).toBe(true);
    for (const reader of readers) {
      expect(lastMailOf(model, reader.id)).toEqual([{ id: messages[0]!.id, from: published.id, topic: 'news', content: 'extra!' }]);
    }
    expect(model.calls.filter((r) => r.agentId === published.id).flatMap(mailIn)).toEqual([]);
    expect(toolMessageFor(model.calls.filter((r) => r.agentId === published.id)[1]!, 'p1')?.content).toBe(
      `Message ${messages[0]!.id} delivered to 50 agents.`,
    );
    expect(runtime.metrics().total).toMatchObject({ messagesOut: 1, messagesIn: 50 });
    for (const reader of readers) runtime.stop(reader.id);
    await runtime.shutdown();
  });

  it('subscribes by spawn option, by runtime.subscribe and by the subscribe tool; unsubscribing ends it', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      'by-option': ['waiting', 'read', 'read'],
      'by-code': ['waiting', 'read'], // unsubscribed before the second publish
      'by-tool': [callTools(toolCall('subscribe', { topic: 'prices' }, 's1')), 'subscribed', 'read', 'read'],
      bystander: ['waiting'],
    });
    const agents = [resident('by-option'), resident('by-code'), resident('by-tool', ['subscribe']), resident('bystander')];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const byOption = runtime.spawn('by-option', 'Wait.', { subscribe: ['prices'] });
    const byCode = runtime.spawn('by-code', 'Wait.');
    const byTool = runtime.spawn('by-tool', 'Subscribe to prices.');
    const bystander = runtime.spawn('bystander', 'Wait.');
    runtime.subscribe(byCode.id, 'prices');
    await runtime.runUntilIdle();

    const first = await runtime.publish('prices', '42');
    await runtime.runUntilIdle();
    runtime.unsubscribe(byCode.id, 'prices');
    const second = await runtime.publish('prices', '43');
    await runtime.runUntilIdle();

    expect(toolMessageFor(model.calls.filter((r) => r.agentId === byTool.id)[1]!, 's1')?.content).toBe('Subscribed to prices.');
    expect(first.deliveredTo.sort()).toEqual([byOption.id, byCode.id, byTool.id].sort());
    expect(second.deliveredTo.sort()).toEqual([byOption.id, byTool.id].sort());
    expect(lastMailOf(model, byOption.id).map((m) => [m.from, m.topic, m.content])).toEqual([
      ['runtime', 'prices', '42'],
      ['runtime', 'prices', '43'],
    ]);
    expect(lastMailOf(model, byCode.id).map((m) => m.content)).toEqual(['42']);
    expect(lastMailOf(model, byTool.id).map((m) => m.content)).toEqual(['42', '43']);
    expect(model.calls.filter((r) => r.agentId === bystander.id)).toHaveLength(1);
    for (const handle of [byOption, byCode, byTool, bystander]) runtime.stop(handle.id);
    await runtime.shutdown();
  });

  it('a publish nobody reads is a dead letter, not an error; bad topics and agents that are not live are refused', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ reader: ['waiting'], worker: ['done'] });
    const runtime = createRuntime({ model, agents: [resident('reader'), resident('worker', [], { resident: false })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const reader = runtime.spawn('reader', 'Wait.');
    const ended = await runtime.run('worker', 'Work.');
    await runtime.runUntilIdle();

    const receipt = await runtime.publish('silence', 'anyone?');

    expect(receipt).toMatchObject({ deliveredTo: [], refusedBy: [], dropped: [] });
    expect(ofType(events, 'message.dead_letter')).toEqual([expect.objectContaining({ agentId: 'runtime', reason: 'no_subscribers' })]);
    expect(() => runtime.subscribe(reader.id, 'has space')).toThrow(ConfigurationError);
    expect(() => runtime.subscribe(ended.id, 'news')).toThrow(UnknownAgentError);
    expect(() => runtime.subscribe('agent:ghost:x', 'news')).toThrow(UnknownAgentError);
    await expect(runtime.publish('has space', 'x')).rejects.toBeInstanceOf(ConfigurationError);
    runtime.stop(reader.id);
    await runtime.shutdown();
  });

  it('refuses a topic written as its address (topic:news) in publish and subscribe, as a spawn does, instead of making another topic', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      herald: [callTools(toolCall('publish', { topic: 'topic:news', content: 'extra!' }, 'p1')), 'told'],
      reader: ['waiting'],
    });
    const herald = defineAgent({ name: 'herald', description: 'Publishes.', systemPrompt: 'Publish.', tools: ['publish'] });
    const runtime = createRuntime({ model, agents: [herald, resident('reader', [], { subscribe: ['news'] })], clock, projectAgentDir: false });
    const reader = runtime.spawn('reader', 'Wait.');
    const published = runtime.spawn('herald', 'Publish.');
    await runtime.runUntilIdle();

    const told = toolMessageFor(model.calls.filter((r) => r.agentId === published.id)[1]!, 'p1');
    expect(told).toMatchObject({ isError: true, content: 'Error: "topic:news" is not a topic name (give the name, without "topic:").' });
    await expect(runtime.publish('topic:news', 'x')).rejects.toThrow('"topic:news" is not a topic name (give the name, without "topic:").');
    expect(() => runtime.subscribe(reader.id, 'topic:news')).toThrow(ConfigurationError);
    runtime.stop(reader.id);
    await runtime.shutdown();
  });

  it('refuses a definition or an agent file that subscribes to a topic written as its address when it is defined or loaded', () => {
    const dir = tempDir();
    try {
      writeFileSync(join(dir.path, 'reader.md'), agentFile('reader', ['subscribe: topic:news']));
      const runtime = createRuntime({ model: new ScriptedModel([]), agentDirs: [dir.path], projectAgentDir: false, agents: [resident('main')] });

      expect(() => resident('listener', [], { subscribe: ['topic:news'] })).toThrow(
        'Agent "listener": subscribe: "topic:news" is not a topic name (give the name, without "topic:")',
      );
      expect(() => resident('listener', [], { subscribe: ['has space'] })).toThrow(/"has space" is not a topic name/);
      expect(runtime.agentNames).toEqual(['main']);
      expect(runtime.agentFileErrors.map((error) => error.message)).toEqual([
        `${join(dir.path, 'reader.md')}: frontmatter: Agent "reader": subscribe: "topic:news" is not a topic name (give the name, without "topic:")`,
      ]);
      void runtime.shutdown();
    } finally {
      dir.remove();
    }
  });
});
