// FaultyModel on its own: seeded faults in place of the inner model's replies, shaped like OpenAIModel's failures.
import { describe, expect, it } from 'vitest';
import { AbortedError, ConfigurationError, ModelError, type ModelReply } from 'troupe';
import { FaultyModel, ScriptedModel, TestClock, type FaultKind } from 'troupe/testing';
import { modelRequest, searchTool } from '../support/modelRequest.js';

/** What one call gave: the kind of fault, or `ok` with the inner reply's text. */
async function outcome(model: FaultyModel, agentId = 'agent:worker:1'): Promise<string> {
  try {
    const reply = await model.complete(modelRequest({ agentId, tools: [searchTool] }));
    if (reply.toolCalls?.length) return `tool:${reply.toolCalls[0]!.arguments}`;
    return reply.content === '' ? 'empty' : `ok:${reply.content}`;
  } catch (error) {
    return error instanceof ModelError ? `error:${error.status ?? 'none'}` : 'other';
  }
}

const rates = { rateLimit: 0.1, serverError: 0.1, timeout: 0.05, disconnect: 0.05, malformedToolCall: 0.05, empty: 0.05 };

describe('FaultyModel', () => {
  it('gives the same faults for the same seed and calls, other faults for another seed', async () => {
    const run = async (seed: number) => {
      const model = new FaultyModel(new ScriptedModel(() => 'fine'), { seed, rates });
      const seen: string[] = [];
      for (let i = 0; i < 60; i += 1) seen.push(await outcome(model, `agent:worker:${i % 3}`));
      return seen;
    };
    const first = await run(5);
    expect(await run(5)).toEqual(first);
    expect(await run(6)).not.toEqual(first);
    expect(first).toContain('ok:fine');
    expect(first.some((seen) => seen !== 'ok:fine')).toBe(true);
  });

  it('draws each agent’s faults from a stream of its own: another agent’s calls in between change nothing', async () => {
    const alone = new FaultyModel(new ScriptedModel(() => 'fine'), { seed: 9, rates });
    const mixed = new FaultyModel(new ScriptedModel(() => 'fine'), { seed: 9, rates });
    const a: string[] = [];
    const b: string[] = [];
    for (let i = 0; i < 30; i += 1) {
      a.push(await outcome(alone, 'agent:a:1'));
      await outcome(mixed, 'agent:b:1');
      b.push(await outcome(mixed, 'agent:a:1'));
    }
    expect(b).toEqual(a);
  });

  it('injects each fault at about its rate, and counts them', async () => {
    const inner = new ScriptedModel(() => 'fine', { record: false });
    const model = new FaultyModel(inner, { seed: 1, rates });
    const counts: Record<string, number> = {};
    for (let i = 0; i < 10_000; i += 1) {
      const seen = (await outcome(model, `agent:worker:${i % 100}`)).replace(/^tool:.*/, 'tool');
      counts[seen] = (counts[seen] ?? 0) + 1;
    }
    expect(model.calls).toBe(10_000);
    const expected: Record<FaultKind, number> = { rateLimit: 1_000, serverError: 1_000, timeout: 500, disconnect: 500, malformedToolCall: 500, empty: 500 };
    for (const [kind, count] of Object.entries(expected)) {
      expect(Math.abs(model.injected[kind as FaultKind] - count)).toBeLessThan(count * 0.2);
    }
    expect(counts['error:429']).toBe(model.injected.rateLimit);
    expect(counts['error:500']).toBe(model.injected.serverError);
    expect(counts['error:none']).toBe(model.injected.timeout + model.injected.disconnect);
    expect(counts.tool).toBe(model.injected.malformedToolCall);
    expect(counts.empty).toBe(model.injected.empty);
    expect(counts['ok:fine']).toBe(10_000 - Object.values(model.injected).reduce((sum, count) => sum + count, 0));
  });

  it('throws errors shaped like OpenAIModel’s, and does not ask the inner model in their place', async () => {
    const shapes: Record<string, unknown> = {};
    for (const kind of ['rateLimit', 'serverError', 'timeout', 'disconnect'] as const) {
      const inner = new ScriptedModel(['kept']);
      const model = new FaultyModel(inner, { seed: 1, rates: { [kind]: 1 }, retryAfterMs: 2_500 });
      const error = await model.complete(modelRequest({ model: 'gpt-4o' })).catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ModelError);
      const { status, retryable, retryAfterMs, message } = error as ModelError;
      shapes[kind] = { status, retryable, retryAfterMs };
      expect(message).toContain('"gpt-4o"');
      expect(inner.calls).toHaveLength(0); // the script's step is kept for the next call
    }
    expect(shapes).toEqual({
      rateLimit: { status: 429, retryable: true, retryAfterMs: 2_500 },
      serverError: { status: 500, retryable: true, retryAfterMs: undefined },
      timeout: { status: undefined, retryable: true, retryAfterMs: undefined },
      disconnect: { status: undefined, retryable: true, retryAfterMs: undefined },
    });
  });

  it('answers with a tool call whose arguments are not JSON, or with nothing at all', async () => {
    const malformed = new FaultyModel(new ScriptedModel([]), { seed: 1, rates: { malformedToolCall: 1 } });
    const reply: ModelReply = await malformed.complete(modelRequest({ tools: [searchTool] }));
    expect(reply.content).toBe('');
    expect(reply.toolCalls).toHaveLength(1);
    expect(reply.toolCalls![0]!.name).toBe('search');
    expect(() => JSON.parse(reply.toolCalls![0]!.arguments)).toThrow();

    const empty = new FaultyModel(new ScriptedModel([]), { seed: 1, rates: { empty: 1 } });
    expect(await empty.complete(modelRequest())).toMatchObject({ content: '' });
    expect((await empty.complete(modelRequest())).toolCalls).toBeUndefined();
  });

  it('passes a call without a fault to the inner model as it is', async () => {
    const inner = new ScriptedModel(['one', 'two']);
    const model = new FaultyModel(inner, { seed: 1, rates: {} });
    const request = modelRequest();
    expect(await model.complete(request)).toMatchObject({ content: 'one' });
    expect(await model.complete(request)).toMatchObject({ content: 'two' });
    expect(inner.calls).toEqual([request, request]);
    expect(model.name).toBe('faulty(scripted)');
  });

  it('waits timeoutMs on the request’s clock before a time-out, and stops waiting when aborted', async () => {
    const clock = new TestClock();
    const model = new FaultyModel(new ScriptedModel([]), { seed: 1, rates: { timeout: 1 }, timeoutMs: 5_000 });
    const timedOut = model.complete(modelRequest({ clock })).catch((thrown: unknown) => thrown);
    clock.increment(4_999);
    await new Promise((resolve) => setImmediate(resolve));
    clock.increment(1);
    expect(await timedOut).toMatchObject({ retryable: true, message: expect.stringContaining('timed out') });

    const controller = new AbortController();
    const aborted = model.complete(modelRequest({ clock, signal: controller.signal })).catch((thrown: unknown) => thrown);
    controller.abort();
    expect(await aborted).toBeInstanceOf(AbortedError);
    expect(clock.nextDue()).toBeUndefined();
  });

  it('refuses rates it cannot use: unknown faults, rates outside [0, 1], rates over 1 together, no seed', () => {
    const inner = new ScriptedModel([]);
    expect(() => new FaultyModel(inner, { seed: 1, rates: { flood: 0.1 } as never })).toThrow(ConfigurationError);
    expect(() => new FaultyModel(inner, { seed: 1, rates: { rateLimit: -0.1 } })).toThrow(/rates.rateLimit/);
    expect(() => new FaultyModel(inner, { seed: 1, rates: { rateLimit: 0.6, serverError: 0.6 } })).toThrow(/at most 1/);
    expect(() => new FaultyModel(inner, { seed: 1.5, rates: {} })).toThrow(/seed/);
    expect(() => new FaultyModel(inner, { seed: 1, rates: {}, retryAfterMs: -1 })).toThrow(/retryAfterMs/);
  });
});

describe('the test models refuse an option they do not read', () => {
  it('names it with the one most likely meant, for ScriptedModel and FaultyModel', () => {
    expect(() => new ScriptedModel(['x'], { latency: 5 } as never)).toThrow(ConfigurationError);
    expect(() => new ScriptedModel(['x'], { latency: 5 } as never)).toThrow('ScriptedModel: unknown option "latency"');
    expect(() => new ScriptedModel(['x'], { latencyMS: 5 } as never)).toThrow('ScriptedModel: unknown option "latencyMS" (did you mean "latencyMs"?).');
    expect(() => new FaultyModel(new ScriptedModel(['x']), { seed: 1, rates: {}, retryAfter: 5 } as never)).toThrow(
      'FaultyModel: unknown option "retryAfter" (did you mean "retryAfterMs"?).',
    );
  });
});
