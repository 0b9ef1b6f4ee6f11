// Waking many receivers of one message: a wave at once (WOKEN_TOGETHER), the rest one at a time (a microtask apart),
// so only about a wave of their turns is under way at once, with slots decided as each wakes.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, type TroupeEvent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { WOKEN_TOGETHER } from '../../src/machines/routing.js';
import { collect, mailIn, ofType, resident, simulatedClock } from '../stubs.js';

/** Readers that answer every wake at once (no latency) and wait again; the model's requests are kept. */
function readersRuntime(options: { maxParallel?: number } = {}) {
  const model = new ScriptedModel(() => 'Read.');
  const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.' });
  const runtime = createRuntime({
    model,
    agents: [resident('reader', [], { subscribe: ['news'] }), worker],
    clock: simulatedClock(),
    projectAgentDir: false,
    ...options,
  });
  return { runtime, model };
}

/** The most agents that had begun a turn (`model.request`) and not yet waited again (`agent.waiting`) at any one event. */
function mostTurnsAtOnce(events: readonly TroupeEvent[]): number {
  const under = new Set<string>();
  let most = 0;
  for (const event of events) {
    if (event.type === 'model.request') most = Math.max(most, under.add(event.agentId).size);
    if (event.type === 'agent.waiting') under.delete(event.agentId);
  }
  return most;
}

/** Publishes one message to `count` waiting readers; returns the most of their turns under way at once. */
async function turnsAtOnce(count: number): Promise<number> {
  const { runtime, model } = readersRuntime({ maxParallel: 1_000 });
  const readers = Array.from({ length: count }, () => runtime.spawn('reader', 'Read the news.'));
  await runtime.runUntilIdle();
  const events = collect(runtime.events$);
  await runtime.publish('news', 'extra!');
  await runtime.runUntilIdle();
  // Every reader read the message, in a turn of its own.
  for (const reader of readers) {
    expect(model.calls.filter((request) => request.agentId === reader.id).flatMap(mailIn)).toMatchObject([{ content: 'extra!' }]);
  }
  expect(ofType(events, 'model.request')).toHaveLength(count);
  await runtime.shutdown();
  return mostTurnsAtOnce(events);
}

describe('waking the receivers of one message', () => {
  it('wakes up to a wave of receivers together, and keeps about a wave of turns under way however many there are', async () => {
    // Woken in one loop, every receiver's turn began before the first one ended: 400 turns at once for 400 readers.
    // Woken a microtask apart from the first, 5.
    const [hundred, fourHundred, thousand] = [await turnsAtOnce(100), await turnsAtOnce(400), await turnsAtOnce(1_000)];
    expect(WOKEN_TOGETHER).toBeGreaterThan(100);
    expect(hundred).toBe(100);
    expect(fourHundred).toBeGreaterThanOrEqual(WOKEN_TOGETHER);
    expect(fourHundred).toBeLessThan(WOKEN_TOGETHER * 1.5);
    expect(thousand).toBeLessThan(WOKEN_TOGETHER * 1.5);
  });

  it('gives each receiver a slot as it wakes, never more than maxParallel at once, and all of them back', async () => {
    const { runtime, model } = readersRuntime({ maxParallel: 3 });
    const readers = Array.from({ length: 10 }, () => runtime.spawn('reader', 'Read the news.'));
    await runtime.runUntilIdle();
    const events = collect(runtime.events$);
    // Two messages in a row: a receiver still in line for the first may be woken by the second's route, or read both.
    await Promise.all([runtime.publish('news', 'first'), runtime.publish('news', 'second')]);
    const report = await runtime.runUntilIdle();

    expect(mostTurnsAtOnce(events)).toBeLessThanOrEqual(3);
    expect(report.waiting.sort()).toEqual(readers.map((reader) => reader.id).sort());
    for (const reader of readers) {
      // Its last request's conversation holds all it read, in the order sent.
      const last = model.calls.filter((request) => request.agentId === reader.id).at(-1)!;
      expect(mailIn(last).map((message) => message.content)).toEqual(['first', 'second']);
    }
    // Every slot came back: three workers get one each at once, and complete (a slot kept would leave one queued,
    // which runUntilIdle reports as a deadlock).
    const workers = Array.from({ length: 3 }, () => runtime.spawn('worker', 'Work.'));
    await runtime.runUntilIdle();
    expect(await Promise.all(workers.map(async (worker) => (await worker.result).status))).toEqual(['completed', 'completed', 'completed']);
    await runtime.shutdown();
  });
});
