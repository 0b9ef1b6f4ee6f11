// runtime.publish and runtime.unsubscribe check their topic as runtime.subscribe does; subscribe and unsubscribe check their id as runtime.stop does.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, type Message } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { resident, simulatedClock } from '../stubs.js';

describe('topic arguments from code', () => {
  it('runtime.publish refuses a topic that is not a string, instead of publishing to its text', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [resident('reader')], clock: simulatedClock(), projectAgentDir: false });
    const sent: Message[] = [];
    runtime.messages$.subscribe((message) => sent.push(message));

    await expect(runtime.publish(123 as unknown as string, 'x')).rejects.toBeInstanceOf(ConfigurationError);
    await expect(runtime.publish('topic:news', 'x')).rejects.toBeInstanceOf(ConfigurationError);
    expect(sent).toEqual([]);
    await runtime.shutdown();
  });

  it('runtime.send refuses an address that is not a string as an invalid message, not with a TypeError', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [resident('reader')], clock: simulatedClock(), projectAgentDir: false });
    const sent: Message[] = [];
    runtime.messages$.subscribe((message) => sent.push(message));

    await expect(runtime.send(123 as unknown as string, 'x')).rejects.toBeInstanceOf(ConfigurationError);
    expect(sent).toEqual([]);
    await runtime.shutdown();
  });

  it('runtime.unsubscribe refuses a topic runtime.subscribe refuses, instead of doing nothing', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [resident('reader')], clock: simulatedClock(), projectAgentDir: false });
    const reader = runtime.spawn('reader', 'Wait.', { subscribe: ['news'] });
    await runtime.runUntilIdle();

    for (const topic of ['topic:news', 'has space', 5 as unknown as string]) {
      expect(() => runtime.subscribe(reader.id, topic), String(topic)).toThrow(ConfigurationError);
      expect(() => runtime.unsubscribe(reader.id, topic), String(topic)).toThrow(ConfigurationError);
    }
    runtime.unsubscribe(reader.id, 'news');
    expect((await runtime.publish('news', 'x')).deliveredTo).toEqual([]);
    runtime.stop(reader.id);
    await runtime.shutdown();
  });

  it('runtime.subscribe and unsubscribe given a handle (not its id) say so, as runtime.stop does, not "Unknown agent [object Object]"', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [resident('reader')], clock: simulatedClock(), projectAgentDir: false });
    const reader = runtime.spawn('reader', 'Read.');
    expect(() => runtime.subscribe(reader as never, 'news')).toThrow("runtime.subscribe: agentId must be a non-empty string, not an object (pass the handle's id).");
    expect(() => runtime.unsubscribe(undefined as never, 'news')).toThrow(ConfigurationError);
    runtime.subscribe(reader.id, 'news');
    runtime.stop(reader.id);
    await runtime.shutdown();
  });
});
