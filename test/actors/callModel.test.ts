// callModel on its own: the actor logic from createCallModel(environment), run with createActor over a real test
// environment on simulated time.
import { describe, expect, it } from 'vitest';
import { createActor, toPromise } from 'xstate';
import { z } from 'zod';
import { defineTool, ModelCallError, ModelError, retryDelay } from 'troupe';
import { advanceUntilSettled, ScriptedModel } from 'troupe/testing';
import { createCallModel, type CallModelInput } from '../../src/actors/callModel.js';
import type { Model, ModelReply, ModelRequest } from '../../src/models/Model.js';
import { settle, testEnvironment, type TestEnvironment } from '../support/environment.js';

const messages: CallModelInput['messages'] = [
  { role: 'system', content: 'You work.' },
  { role: 'user', content: 'Find it.' },
];

/** The header of the worker's events. */
const header: CallModelInput['header'] = { runId: 'run-1', id: 'agent:worker:1', parentId: null, toolCallId: null };

/** Runs one model turn as an actor; `result` settles with its output or error. */
function startTurn(environment: TestEnvironment, input: Partial<CallModelInput> = {}) {
  const actor = createActor(createCallModel(environment), {
    input: { agentId: 'agent:worker:1', agentName: 'worker', depth: 0, messages, header, ...input },
    clock: environment.clock,
  });
  const result = toPromise(actor);
  result.catch(() => {}); // a test that expects a rejection awaits it itself
  actor.start();
  return { actor, result };
}

/** A model that answers every turn with the reply given, however malformed. */
function rawModel(reply: unknown, name = 'raw'): Model {
  return { name, complete: async () => reply as ModelReply };
}

function worker(model: Model) {
  return [{ name: 'worker', description: 'Works.', systemPrompt: 'You work.', model }];
}

describe('callModel', () => {
  it('returns the turn with tool calls normalised, usage counted, the price from the table and the time on the clock', async () => {
    const model = new ScriptedModel(
      [
        {
          content: 'Looking.',
          toolCalls: [
            { id: '', name: 'search', arguments: '{"q":"a"}' },
            { id: 'dup', name: 'search', arguments: { q: 'b' } as unknown as string },
            { id: 'dup', name: 'read', arguments: '{}' },
            { name: 'read', arguments: '' } as unknown as { id: string; name: string; arguments: string },
          ],
          usage: { inputTokens: 1000, outputTokens: 500 },
          model: 'gpt-4o-2024-08-06',
        },
      ],
      { latencyMs: 250 },
    );
    const environment = testEnvironment({ agents: worker(model) });
    const { actor, result } = startTurn(environment);

    await settle();
    environment.advance(249);
    await settle();
    expect(actor.getSnapshot().status).toBe('active');
    environment.advance(1);

    const turn = await result;
    expect(turn).toEqual({
      content: 'Looking.',
      toolCalls: [
        { id: 'call_1', name: 'search', arguments: '{"q":"a"}' },
        { id: 'dup', name: 'search', arguments: '{"q":"b"}' },
        { id: 'dup_3', name: 'read', arguments: '{}' },
        { id: 'call_4', name: 'read', arguments: '' },
      ],
      inputTokens: 1000,
      outputTokens: 500,
      model: 'gpt-4o-2024-08-06',
      // gpt-4o's list price (the longest name the reply's model begins with): 2.5 and 10 USD per million tokens.
      costUsd: expect.closeTo((1000 * 2.5 + 500 * 10) / 1_000_000, 12),
      durationMs: 250,
    });
    model.assertDone();
  });

  it('makes every tool call id unique, even one that looks like a made one', async () => {
    const reply = {
      content: '',
      toolCalls: [
        { id: '', name: 'a', arguments: '{}' },
        { id: 'call_1', name: 'b', arguments: '{}' },
        { id: 'call_1', name: 'c', arguments: '{}' },
        { id: 7, name: 'd', arguments: '{}' },
      ],
    };
    const turn = await startTurn(testEnvironment({ agents: worker(rawModel(reply)) })).result;
    expect(turn.toolCalls.map((call) => call.id)).toEqual(['call_1', 'call_1_2', 'call_1_3', 'call_4']);
    expect(turn.toolCalls.map((call) => call.name)).toEqual(['a', 'b', 'c', 'd']);

    // A made id can meet a given one again: it is changed until it is free.
    const clash = {
      content: '',
      toolCalls: ['dup_3', 'dup', 'dup'].map((id) => ({ id, name: 'a', arguments: '{}' })),
    };
    const again = await startTurn(testEnvironment({ agents: worker(rawModel(clash)) })).result;
    expect(again.toolCalls.map((call) => call.id)).toEqual(['dup_3', 'dup', 'dup_3_3']);
  });

  it('counts negative, NaN, infinite and missing usage as no tokens, and prices by the model’s own name from the environment’s table', async () => {
    const prices = { house: { input: 1, output: 2 } };
    const cases: [ModelReply['usage'] | Record<string, unknown> | undefined, number, number][] = [
      [{ inputTokens: -5, outputTokens: Number.NaN }, 0, 0],
      [{ inputTokens: Number.POSITIVE_INFINITY, outputTokens: 12.4 }, 0, 12],
      [undefined, 0, 0],
      [{ inputTokens: 3_000_000, outputTokens: 1_000_000 }, 3_000_000, 1_000_000],
    ];
    for (const [usage, inputTokens, outputTokens] of cases) {
      const reply = { content: 'ok', ...(usage === undefined ? {} : { usage }) };
      const environment = testEnvironment({ agents: worker(rawModel(reply, 'house')), prices });
      const turn = await startTurn(environment).result;
      expect(turn).toMatchObject({ inputTokens, outputTokens, model: 'house', toolCalls: [], durationMs: 0 });
      expect(turn.costUsd).toBeCloseTo((inputTokens * 1 + outputTokens * 2) / 1_000_000, 12);
    }
  });

  it('names and prices a reply that names its model with an empty text as the model asked for', async () => {
    const prices = { house: { input: 1, output: 2 } };
    const environment = testEnvironment({ agents: worker(rawModel({ content: 'ok', model: '', usage: { inputTokens: 1_000, outputTokens: 1_000 } }, 'house')), prices });
    const turn = await startTurn(environment).result;
    expect(turn).toMatchObject({ model: 'house', unpricedModel: undefined });
    expect(turn.costUsd).toBeCloseTo(0.003, 12);
  });

  it('takes missing or null content beside tool calls as no text, and keeps the calls', async () => {
    const calls = [{ id: 'c1', name: 'search', arguments: '{"q":"a"}' }];
    for (const reply of [{ toolCalls: calls }, { content: null, toolCalls: calls }]) {
      const turn = await startTurn(testEnvironment({ agents: worker(rawModel(reply)) })).result;
      expect(turn).toMatchObject({ content: '', toolCalls: calls });
    }
    // Without tool calls it is an empty answer (the agent machine fails it with empty_answer), not a malformed reply.
    const empty = await startTurn(testEnvironment({ agents: worker(rawModel({ content: null, toolCalls: [] })) })).result;
    expect(empty).toMatchObject({ content: '', toolCalls: [] });
  });

  it('fails with a ModelError naming the model for a reply without text content', async () => {
    for (const reply of [null, 'plain text', { content: 42 }, { content: {}, toolCalls: [] }]) {
      const environment = testEnvironment({ agents: worker(rawModel(reply, 'sloppy')) });
      const error = await startTurn(environment).result.then(
        () => undefined,
        (thrown: unknown) => thrown,
      );
      expect(error).toBeInstanceOf(ModelError);
      expect(error).toMatchObject({ code: 'model_error', message: 'Model "sloppy" returned a reply without text content.' });
    }
  });

  it('fails with a ModelError when the tool calls are not a list', async () => {
    const environment = testEnvironment({
      agents: worker(rawModel({ content: '', toolCalls: { id: 'c1', name: 'search', arguments: '{}' } }, 'sloppy')),
    });
    const { actor, result } = startTurn(environment);
    await expect(result).rejects.toBeInstanceOf(ModelError);
    await expect(result).rejects.toThrow('Model "sloppy" returned tool calls that are not a list.');
    expect(actor.getSnapshot().status).toBe('error');
  });

  it('fails with a ModelCallError that wraps what the model threw, naming the model, the agent and the try, keeping status and retryable', async () => {
    const thrown = new ModelError('rate limited', { status: 429 });
    const environment = testEnvironment({ agents: worker(new ScriptedModel([thrown])) });
    const { actor, result } = startTurn(environment, { retry: { attempts: 1, baseMs: 500, maxMs: 30_000 } }); // no retries

    await expect(result).rejects.toBeInstanceOf(ModelCallError);
    const snapshot = actor.getSnapshot();
    expect(snapshot.status).toBe('error');
    expect(snapshot.error).toMatchObject({
      code: 'model_call_failed',
      model: 'scripted',
      agentName: 'worker',
      agentId: 'agent:worker:1',
      attempt: 1,
      status: 429,
      retryable: true,
      message: 'The model call of agent "worker" to model "scripted" failed: rate limited',
    });
    expect((snapshot.error as ModelCallError).cause).toBe(thrown);
  });

  it('wraps a thrown value that is no Error too, with a readable message, and names the model the definition asks for', async () => {
    for (const [thrown, cause] of [
      [undefined, 'the model threw undefined'],
      ['text', 'text'],
      [new Error('boom'), 'boom'],
    ] as const) {
      const failing: Model = {
        name: 'shaky',
        complete: async () => {
          throw thrown;
        },
      };
      const environment = testEnvironment({
        agents: [{ name: 'worker', description: 'Works.', systemPrompt: 'You work.', model: 'gpt-4o' }],
        model: failing,
      });
      const error = await startTurn(environment).result.then(
        () => undefined,
        (rejected: unknown) => rejected,
      );
      expect(error).toBeInstanceOf(ModelCallError);
      expect(error).toMatchObject({
        model: 'gpt-4o',
        status: undefined,
        retryable: undefined,
        message: `The model call of agent "worker" to model "gpt-4o" failed: ${cause}`,
      });
      expect((error as ModelCallError).cause).toBe(thrown);
    }
  });

  it('aborts the model’s signal when stopped, clearing its wait on the clock, and reports no turn', async () => {
    const model = new ScriptedModel(['too late'], { latencyMs: 1000 });
    const environment = testEnvironment({ agents: worker(model) });
    const { actor } = startTurn(environment);
    const seen: string[] = [];
    actor.subscribe({ next: () => seen.push('next'), error: () => seen.push('error'), complete: () => seen.push('complete') });

    await settle();
    const request = model.calls[0];
    expect(request?.signal.aborted).toBe(false);
    expect(environment.clock.pending).toBe(1);

    actor.stop();
    await settle();

    // XState drops what a stopped promise actor's promise settles with, so the AbortedError callModel turns the
    // model's rejection into is not seen here: what is seen is the abort reaching the model and no turn reported.

    expect(request?.signal.aborted).toBe(true);
    expect(environment.clock.pending).toBe(0);
    expect(actor.getSnapshot()).toMatchObject({ status: 'stopped', output: undefined, error: undefined });
    environment.advance(5000);
    await settle();
    expect(seen).not.toContain('error');
    expect(actor.getSnapshot().output).toBeUndefined();
  });

  it('gives the model random numbers from the agent’s seeded stream in the environment', async () => {
    const draw = async (seed: number) => {
      const model = new ScriptedModel((request: ModelRequest) => JSON.stringify([request.random?.(), request.random?.()]));
      const environment = testEnvironment({ agents: worker(model), seed });
      const turn = await startTurn(environment).result;
      return JSON.parse(turn.content) as number[];
    };
    const first = await draw(7);
    const again = await draw(7);
    const other = await draw(8);

    expect(first).toHaveLength(2);
    expect(first[0]).not.toBe(first[1]);
    expect(again).toEqual(first);
    expect(other).not.toEqual(first);
    // They are the agent's own stream, as environment.random(agentId) gives it.
    const stream = testEnvironment({ seed: 7 }).random('agent:worker:1');
    expect([stream.next(), stream.next()]).toEqual(first);
  });

  it('offers the model the tools of environment.toolSchemas at the agent’s depth, with the definition’s model name and temperature', async () => {
    const echo = defineTool({
      name: 'echo',
      description: 'Echoes.',
      parameters: z.object({ text: z.string() }),
      kind: 'read',
      execute: ({ text }) => text,
    });
    const model = new ScriptedModel(['one', 'two']);
    const environment = testEnvironment({
      model,
      tools: [echo],
      maxDepth: 2,
      agents: [
        { name: 'worker', description: 'Works.', systemPrompt: 'You work.', tools: ['echo', 'assign_task'], model: 'gpt-4o', temperature: 0.2 },
        { name: 'helper', description: 'Helps with lookups.', systemPrompt: 'You help.' },
      ],
    });
    const agent = environment.agent('worker');

    await startTurn(environment, { depth: 0 }).result;
    await startTurn(environment, { depth: 2 }).result;

    const [shallow, deep] = model.calls;
    expect(shallow?.tools.map((tool) => tool.name)).toEqual(['echo', 'assign_task']);
    expect(shallow?.tools).toEqual(environment.toolSchemas(agent, 0, 'agent:worker:1'));
    expect(shallow?.tools[1]?.description).toContain('helper');
    expect(deep?.tools.map((tool) => tool.name)).toEqual(['echo']);
    expect(shallow).toMatchObject({
      agentId: 'agent:worker:1',
      agentName: 'worker',
      model: 'gpt-4o',
      temperature: 0.2,
      messages,
    });
    expect(shallow?.clock).toBe(environment.clock);
  });
});

/** A model that throws each error given, in turn, then answers `Done.` (counting its calls). */
function failingThen(...errors: Error[]): ScriptedModel {
  return new ScriptedModel([...errors, 'Done.']);
}

/** The `model.retry` events the environment was given. */
function retries(environment: TestEnvironment) {
  return environment.events.flatMap((event) => (event.type === 'model.retry' ? [event] : []));
}

describe('callModel retries', () => {
  const policy = { attempts: 5, baseMs: 1_000, maxMs: 60_000 };

  it('tries a retryable failure again after a jittered wait on the clock, announcing each retry, until the model answers', async () => {
    const model = failingThen(
      new ModelError('Service unavailable.', { status: 503 }),
      new ModelError('Rate limited.', { status: 429 }),
      new ModelError('Lost the connection.', { retryable: true }),
    );
    const environment = testEnvironment({ agents: worker(model) });
    const { result } = startTurn(environment, { retry: policy });

    const turn = await advanceUntilSettled(environment.simulated, result);

    expect(turn.content).toBe('Done.');
    expect(model.calls).toHaveLength(4);
    const events = retries(environment);
    expect(events.map((event) => [event.attempt, event.error.code, event.error.status, event.error.retryable])).toEqual([
      [1, 'model_error', 503, true],
      [2, 'model_error', 429, true],
      [3, 'model_error', undefined, true],
    ]);
    // Full jitter under a ceiling that doubles each retry: [0, 1000), [0, 2000), [0, 4000).
    events.forEach((event, index) => {
      expect(event.delayMs).toBeGreaterThanOrEqual(0);
      expect(event.delayMs).toBeLessThan(policy.baseMs * 2 ** index);
      expect(Number.isInteger(event.delayMs)).toBe(true);
    });
    // The waits were on the simulated clock (it started at 1000), and the turn's duration holds them.
    const waited = events.reduce((sum, event) => sum + event.delayMs, 0);
    expect(environment.clock.now()).toBe(1_000 + waited);
    expect(turn.durationMs).toBe(waited);
    // Each event is stamped with the agent's header and the time the wait began.
    expect(events[0]).toMatchObject({ runId: 'run-1', agentId: 'agent:worker:1', parentId: null, toolCallId: null, at: 1_000 });
    expect(events[1]?.at).toBe(1_000 + events[0]!.delayMs);
    expect(events[0]?.error.message).toBe('The model call of agent "worker" to model "scripted" failed: Service unavailable.');
    expect(events[1]?.error.message).toBe('The model call of agent "worker" to model "scripted" failed after 2 tries: Rate limited.');
  });

  it('draws its waits from the agent’s seeded stream: the same seed waits the same, another seed not', async () => {
    const delays = async (seed: number) => {
      const model = failingThen(...Array.from({ length: 4 }, () => new ModelError('Busy.', { status: 503 })));
      const environment = testEnvironment({ agents: worker(model), seed });
      await advanceUntilSettled(environment.simulated, startTurn(environment, { retry: policy }).result);
      return retries(environment).map((event) => event.delayMs);
    };
    const first = await delays(3);
    expect(first).toHaveLength(4);
    expect(await delays(3)).toEqual(first);
    expect(await delays(4)).not.toEqual(first);
  });

  it('waits what the server’s retry-after asks instead of its own backoff, at most maxMs', async () => {
    const model = failingThen(
      new ModelError('Rate limited.', { status: 429, retryAfterMs: 7_000 }),
      new ModelError('Rate limited.', { status: 429, retryAfterMs: 120_000 }),
    );
    const environment = testEnvironment({ agents: worker(model) });
    const { result } = startTurn(environment, { retry: { attempts: 3, baseMs: 100, maxMs: 30_000 } });

    await advanceUntilSettled(environment.simulated, result);

    expect(retries(environment).map((event) => event.delayMs)).toEqual([7_000, 30_000]);
    expect(environment.clock.now()).toBe(1_000 + 37_000);
    expect(model.calls).toHaveLength(3);
  });

  it('does not try again what another try would not mend: a 401, a plain Error, a reply it cannot read', async () => {
    for (const failing of [
      new ScriptedModel([new ModelError('Incorrect API key.', { status: 401 }), 'never']),
      new ScriptedModel([new Error('boom'), 'never']),
    ]) {
      const environment = testEnvironment({ agents: worker(failing) });
      const error = await startTurn(environment, { retry: policy }).result.catch((thrown: unknown) => thrown);
      expect(error).toBeInstanceOf(ModelCallError);
      expect(error).toMatchObject({ attempt: 1 });
      expect(failing.calls).toHaveLength(1);
      expect(failing.remaining).toBe(1);
      expect(retries(environment)).toEqual([]);
    }
    let calls = 0;
    const sloppy: Model = { name: 'sloppy', complete: async () => (calls++, null as unknown as ModelReply) };
    const environment = testEnvironment({ agents: worker(sloppy) });
    await expect(startTurn(environment, { retry: policy }).result).rejects.toThrow('returned a reply without text content');
    expect(calls).toBe(1);
    expect(retries(environment)).toEqual([]);
  });

  it('fails with a ModelCallError of the last try when the tries run out: its number, its cause, its status', async () => {
    const last = new ModelError('Rate limited.', { status: 429 });
    const model = new ScriptedModel([new ModelError('Busy.', { status: 503 }), new ModelError('Busy.', { status: 502 }), last, 'never']);
    const environment = testEnvironment({ agents: worker(model) });
    const { result } = startTurn(environment, { retry: { attempts: 3, baseMs: 10, maxMs: 100 } });

    const error = await advanceUntilSettled(environment.simulated, result).catch((thrown: unknown) => thrown);

    expect(error).toBeInstanceOf(ModelCallError);
    expect(error).toMatchObject({
      attempt: 3,
      status: 429,
      retryable: true,
      message: 'The model call of agent "worker" to model "scripted" failed after 3 tries: Rate limited.',
    });
    expect((error as ModelCallError).cause).toBe(last);
    expect(retries(environment).map((event) => event.attempt)).toEqual([1, 2]);
    expect(model.remaining).toBe(1);
  });

  it('makes one try by default when attempts is 1, and three when no policy is given', async () => {
    const once = new ScriptedModel([new ModelError('Busy.', { status: 503 }), 'never']);
    const single = testEnvironment({ agents: worker(once) });
    await expect(startTurn(single, { retry: { attempts: 1, baseMs: 0, maxMs: 0 } }).result).rejects.toMatchObject({ attempt: 1 });
    expect(once.calls).toHaveLength(1);

    const thrice = new ScriptedModel(Array.from({ length: 3 }, () => new ModelError('Busy.', { status: 503 })));
    const environment = testEnvironment({ agents: worker(thrice) });
    const error = await advanceUntilSettled(environment.simulated, startTurn(environment).result).catch((thrown: unknown) => thrown);
    expect(error).toMatchObject({ attempt: 3 });
    // The default ceilings: 500 ms, then 1,000 ms.
    const [first, second] = retries(environment).map((event) => event.delayMs);
    expect(first).toBeLessThan(500);
    expect(second).toBeLessThan(1_000);
  });

  it('stops at once when stopped during a wait: the timer is cleared and the model is not asked again', async () => {
    const model = failingThen(new ModelError('Rate limited.', { status: 429, retryAfterMs: 10_000 }));
    const environment = testEnvironment({ agents: worker(model) });
    const { actor } = startTurn(environment, { retry: policy });

    await settle();
    expect(retries(environment)).toHaveLength(1);
    expect(environment.clock.pending).toBe(1); // the wait

    actor.stop();
    await settle();

    expect(environment.clock.pending).toBe(0);
    environment.advance(60_000);
    await settle();
    expect(model.calls).toHaveLength(1);
    expect(actor.getSnapshot()).toMatchObject({ status: 'stopped', output: undefined });
  });
});

describe('retryDelay', () => {
  it('draws from a ceiling that doubles from baseMs up to maxMs; a retry-after replaces it, capped at maxMs', () => {
    const policy = { attempts: 10, baseMs: 500, maxMs: 30_000 };
    const top = () => 0.999_999;
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((attempt) => retryDelay(policy, attempt, top))).toEqual([499, 999, 1_999, 3_999, 7_999, 15_999, 29_999, 29_999]);
    expect(retryDelay(policy, 3, () => 0)).toBe(0);
    expect(retryDelay(policy, 3, () => 0.5)).toBe(1_000);
    expect(retryDelay(policy, 1, top, 4_000)).toBe(4_000);
    expect(retryDelay(policy, 1, top, 45_000)).toBe(30_000);
    expect(retryDelay(policy, 1, top, 0)).toBe(0);
  });

  it('stays a number of ms past a thousand tries: 2^1024 is Infinity, and 0 × Infinity would be NaN', () => {
    // A policy of many quick tries (baseMs 0) waits 0 every time; a model.retry with delayMs NaN fails its own schema.
    expect([1, 1_025, 1_026, 5_000].map((attempt) => retryDelay({ attempts: 10_000, baseMs: 0, maxMs: 30_000 }, attempt, () => 0.5))).toEqual([0, 0, 0, 0]);
    expect(retryDelay({ attempts: 10_000, baseMs: 1, maxMs: 30_000 }, 5_000, () => 0.5)).toBe(15_000);
  });
});
