// Price lookups: exact entries, the longest prefix before a `-`, and names that are not entries at all.
import { describe, expect, it } from 'vitest';
import { costOf, createRuntime, defaultPrices, findPrice } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { echoTool, worker } from '../stubs.js';

describe('findPrice', () => {
  it('prices a name by its own entry, or by the longest entry it begins with before a -', () => {
    expect(findPrice(defaultPrices, 'gpt-4o')).toEqual({ input: 2.5, output: 10 });
    expect(findPrice(defaultPrices, 'gpt-4o-mini-2024-07-18')).toEqual({ input: 0.15, output: 0.6 });
    expect(findPrice(defaultPrices, 'gpt-4o2')).toBeUndefined();
  });

  it("does not take what every object inherits for a price: a model named constructor or toString has none", () => {
    for (const name of ['constructor', 'toString', 'hasOwnProperty', '__proto__', 'valueOf']) {
      expect(findPrice(defaultPrices, name)).toBeUndefined();
      expect(costOf(defaultPrices, name, 1_000, 1_000)).toBe(0);
    }
    // A table may still price such a name itself.
    expect(findPrice({ ...defaultPrices, constructor: { input: 1, output: 1 } }, 'constructor')).toEqual({ input: 1, output: 1 });
  });

  it('counts a model named like an inherited property as unpriced in a run: cost 0, not NaN, and a cost budget says so', async () => {
    const { tool } = echoTool();
    // Asked for as `stand-in` (no price either), answered as `constructor`; each run: a tool call, then an answer.
    const model = new ScriptedModel(
      (request) => (request.messages.some((message) => message.role === 'tool') ? 'Done.' : callTools(toolCall('echo', { text: 'x' }))),
      { name: 'stand-in', model: 'constructor', record: false },
    );
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
    await expect(runtime.run('worker', 'Go.')).resolves.toMatchObject({ status: 'completed', output: 'Done.' });
    expect(runtime.metrics().total.costUsd).toBe(0);
    const budgeted = await runtime.run('worker', 'Go.', { budget: { maxCostUsd: 1 } });
    expect(budgeted.status).toBe('failed');
    expect(budgeted.reason).toBe('budget');
    expect(budgeted.error?.message).toMatch(/^The model "constructor" \(asked for as "stand-in"\) has no price/);
    expect(runtime.metrics().total.costUsd).toBe(0);
    await runtime.shutdown();
  });

  it('answers the same for a name looked up again, past the bound of remembered lookups', () => {
    const table = { 'local-a': { input: 1, output: 2 } };
    for (let index = 0; index < 3_000; index += 1) expect(findPrice(table, `other-${index}`)).toBeUndefined();
    expect(findPrice(table, 'local-a-7b')).toEqual({ input: 1, output: 2 });
    expect(findPrice(table, 'local-a-7b')).toEqual({ input: 1, output: 2 });
    expect(findPrice(table, 'other-5')).toBeUndefined();
  });
});
