// Retries of failed model calls through the runtime: where the policy comes from, how an agent fails when the tries run
// out, cancelling during a wait, the idle timer, seeded runs that repeat, and 1,000 agents over a FaultyModel.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createRuntime,
  defineAgent,
  InMemoryMemory,
  InvalidAgentError,
  type Model,
  ModelError,
  type ModelReply,
  type ModelRequest,
  type RetryOptions,
  type TroupeEvent,
} from 'troupe';
import { advanceUntilSettled, FAULT_KINDS, FaultyModel, ScriptedModel } from 'troupe/testing';
import { collect, ofType, simulatedClock, worker } from '../stubs.js';

/** A model that fails every call with a 503. */
function alwaysBusy(): ScriptedModel {
  return new ScriptedModel(() => {
    throw new ModelError('Service unavailable.', { status: 503 });
  });
}

/** The `model.retry` events of one agent. */
function retriesOf(events: readonly TroupeEvent[], agentId: string) {
  return ofType(events, 'model.retry').filter((event) => event.agentId === agentId);
}

describe('retry options', () => {
  it('take each field from the spawn, else the definition, else the runtime, else the default', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({
      model: alwaysBusy(),
      agents: [worker('plain'), defineAgent({ ...worker('patient'), retry: { attempts: 4 } })],
      retry: { attempts: 2, baseMs: 100 },
      clock,
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);

    const plain = runtime.spawn('plain', 'Go.'); // the runtime's: 2 tries
    const patient = runtime.spawn('patient', 'Go.'); // the definition's: 4 tries
    const hurried = runtime.spawn('patient', 'Go.', { retry: { attempts: 3, maxMs: 50 } }); // the spawn's: 3 tries, waits ≤ 50 ms
    const results = await advanceUntilSettled(clock, Promise.all([plain.result, patient.result, hurried.result]));

    expect(results.map((result) => result.error?.message.match(/after (\d) tries/)?.[1] ?? '1')).toEqual(['2', '4', '3']);
    expect(retriesOf(events, plain.id)).toHaveLength(1);
    expect(retriesOf(events, patient.id)).toHaveLength(3);
    // baseMs is the runtime's (100) for both: ceilings 100, 200, 400; the spawn's maxMs caps them at 50.
    retriesOf(events, patient.id).forEach((event, index) => expect(event.delayMs).toBeLessThan(100 * 2 ** index));
    for (const event of retriesOf(events, hurried.id)) expect(event.delayMs).toBeLessThan(50);
    await runtime.shutdown();
  });

  it('are checked where they are given: the runtime, a definition, a spawn', () => {
    expect(() => createRuntime({ retry: { attempts: 0 }, projectAgentDir: false })).toThrow(ConfigurationError);
    expect(() => createRuntime({ retry: { maxMs: Number.NaN }, projectAgentDir: false })).toThrow(/retry.maxMs/);
    expect(() => defineAgent({ ...worker('x'), retry: { attempts: 1.5 } })).toThrow(InvalidAgentError);
    const runtime = createRuntime({ model: alwaysBusy(), agents: [worker()], projectAgentDir: false });
    expect(() => runtime.spawn('worker', 'Go.', { retry: { baseMs: -1 } })).toThrow(/retry.baseMs/);
    // A field nobody reads is refused, with the one meant: ignored, it would leave the default of 3 tries in force.
    const misspelled = { maxAttempts: 10 } as RetryOptions;
    expect(() => createRuntime({ retry: misspelled, projectAgentDir: false })).toThrow(
      'retry: unknown field "maxAttempts" (did you mean "attempts"?); its fields are attempts, baseMs and maxMs.',
    );
    expect(() => defineAgent({ ...worker('x'), retry: misspelled })).toThrow(InvalidAgentError);
    expect(() => runtime.spawn('worker', 'Go.', { retry: { ...misspelled, baseMs: 10 } })).toThrow(ConfigurationError);
    return runtime.shutdown();
  });
});

describe('an agent whose model calls fail', () => {
  it('completes when a retry succeeds: each retry an event between the request and the reply, one turn', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel([new ModelError('Rate limited.', { status: 429, retryAfterMs: 2_000 }), 'Done.']);
    const runtime = createRuntime({ model, agents: [worker()], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Done.', turns: 1 });
    expect(result.metrics.own.modelCalls).toBe(1); // model replies: the failed try is no reply
    expect(events.map((event) => event.type)).toEqual(['agent.spawned', 'agent.started', 'model.request', 'model.retry', 'model.response', 'agent.completed']);
    expect(ofType(events, 'model.retry')[0]).toMatchObject({ attempt: 1, delayMs: 2_000, at: 0, error: { code: 'model_error', status: 429, retryable: true } });
    expect(ofType(events, 'model.response')[0]).toMatchObject({ at: 2_000, durationMs: 2_000 });
    await runtime.shutdown();
  });

  it('fails with reason error and the last try’s error once its tries run out', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: alwaysBusy(), agents: [worker()], clock, retry: { attempts: 3 }, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(result.error).toEqual({
      code: 'model_error',
      fault: 'model',
      status: 503,
      retryable: true,
      message: 'The model call of agent "worker" to model "scripted" failed after 3 tries: Service unavailable.',
    });
    expect(ofType(events, 'agent.failed')[0]?.error).toEqual(result.error);
    expect(ofType(events, 'model.retry').map((event) => event.attempt)).toEqual([1, 2]);
    await runtime.shutdown();
  });

  it('treats a model whose complete throws, rather than rejects, as one that rejects: retried, then failed with the cause', async () => {
    const clock = simulatedClock();
    let calls = 0;
    // Not an async function: the error is thrown before any promise exists.
    const throwing: Model = {
      name: 'thrower',
      complete(): Promise<ModelReply> {
        calls += 1;
        if (calls === 1) throw new ModelError('Overloaded.', { status: 529 });
        if (calls === 2) return Promise.resolve({ content: 'Done.' });
        throw new TypeError('broken client');
      },
    };
    const runtime = createRuntime({ model: throwing, agents: [worker()], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const first = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));
    const second = await advanceUntilSettled(clock, runtime.run('worker', 'Go again.'));

    expect(first).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(ofType(events, 'model.retry')).toHaveLength(1);
    expect(second).toMatchObject({ status: 'failed', reason: 'error' });
    expect(second.error?.message).toContain('broken client');
    expect(calls).toBe(3);
    await runtime.shutdown();
  });

  it('does not try a 401 again', async () => {
    const model = new ScriptedModel([new ModelError('Incorrect API key.', { status: 401 }), 'never']);
    const runtime = createRuntime({ model, agents: [worker()], projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', 'Go.');

    expect(result.error).toMatchObject({ code: 'model_error', status: 401, retryable: false });
    expect(result.error?.message).not.toContain('tries');
    expect(model.calls).toHaveLength(1);
    expect(ofType(events, 'model.retry')).toEqual([]);
    await runtime.shutdown();
  });

  it('is cancelled at once during a wait, without waiting it out or asking the model again', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel([new ModelError('Rate limited.', { status: 429, retryAfterMs: 60_000 }), 'never']);
    const runtime = createRuntime({ model, agents: [worker()], clock, retry: { maxMs: 60_000 }, projectAgentDir: false });
    const events = collect(runtime.events$);
    const handle = runtime.spawn('worker', 'Go.');
    let retried!: () => void;
    const waiting = new Promise<void>((resolve) => (retried = resolve));
    runtime.events$.subscribe((event) => event.type === 'model.retry' && retried());
    await advanceUntilSettled(clock, waiting);
    const at = clock.now();

    runtime.cancel(handle.id);
    const result = await advanceUntilSettled(clock, handle.result);

    expect(result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(clock.now()).toBe(at); // no time passed
    expect(model.calls).toHaveLength(1);
    expect(events.at(-1)).toMatchObject({ type: 'agent.failed', reason: 'cancelled' });
    const report = await runtime.runUntilIdle();
    expect(report).toBeDefined();
    expect(clock.now()).toBe(at); // no wait was left behind
    await runtime.shutdown();
  });

  it('is not timed out by retries whose waits together pass its idle timeout: each retry is progress', async () => {
    const clock = simulatedClock();
    const rateLimited = () => new ModelError('Rate limited.', { status: 429, retryAfterMs: 4_000 });
    const model = new ScriptedModel([rateLimited(), rateLimited(), rateLimited(), 'Done.']);
    const runtime = createRuntime({ model, agents: [worker()], clock, idleTimeoutMs: 5_000, retry: { attempts: 4 }, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(clock.now()).toBe(12_000);
    await runtime.shutdown();
  });

  it('is still timed out by one wait longer than its idle timeout', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel([new ModelError('Rate limited.', { status: 429, retryAfterMs: 8_000 }), 'never']);
    const runtime = createRuntime({ model, agents: [worker()], clock, idleTimeoutMs: 5_000, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'failed', reason: 'timeout', error: { code: 'idle_timeout' } });
    expect(clock.now()).toBe(5_000);
    expect(model.calls).toHaveLength(1);
    await runtime.shutdown();
  });
});

/** Runs `count` agents over a FaultyModel in simulated time; returns the results, the event log and the runtime's store. */
async function faultyRun(seed: number, count: number, rate = 0.2) {
  const clock = simulatedClock();
  const inner = new ScriptedModel(
    (request: ModelRequest) => `Answer ${Math.floor((request.random?.() ?? 0) * 1000)}.`,
    { latencyMs: 100, record: false },
  );
  const share = rate / 5;
  const model = new FaultyModel(inner, {
    seed,
    rates: { rateLimit: share * 1.5, serverError: share * 1.5, timeout: share, disconnect: share * 0.5, malformedToolCall: share * 0.3, empty: share * 0.2 },
    retryAfterMs: 1_500,
  });
  const store = new InMemoryMemory();
  const runtime = createRuntime({ model, agents: [worker('worker', ['blackboard_read'])], clock, seed, store, maxParallel: count, projectAgentDir: false });
  const lines: string[] = [];
  runtime.events$.subscribe((event) => lines.push(JSON.stringify(event)));
  const handles = Array.from({ length: count }, (_, i) => runtime.spawn('worker', `Task ${i}.`));
  await runtime.runUntilIdle();
  const results = await Promise.all(handles.map((handle) => handle.result));
  await runtime.flush();
  const sessions = await runtime.sessions.list();
  await runtime.shutdown();
  return { results, lines, sessions, model };
}

describe('agents over a FaultyModel', () => {
  it('give the same event log for the same seed', async () => {
    const first = await faultyRun(21, 40, 0.5);
    const again = await faultyRun(21, 40, 0.5);
    expect(first.lines.some((line) => line.includes('"model.retry"'))).toBe(true);
    expect(again.lines).toEqual(first.lines);
    const other = await faultyRun(22, 40, 0.5);
    expect(other.lines).not.toEqual(first.lines);
  });

  it('1,000 agents at a 20 % fault rate in simulated time: every one ends with an answer or a reason, nothing unhandled, every session written', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const { results, lines, sessions, model } = await faultyRun(2024, 1_000);
      await new Promise((resolve) => setImmediate(resolve));

      expect(model.calls).toBeGreaterThan(1_000);
      expect(Object.values(model.injected).reduce((sum, n) => sum + n, 0) / model.calls).toBeCloseTo(0.2, 1);
      for (const kind of FAULT_KINDS) expect(model.injected[kind]).toBeGreaterThan(0);
      // A malformed tool call is an error result the agent reads, then it thinks again.
      expect(lines.some((line) => line.includes('"tool.result"') && line.includes('"error"'))).toBe(true);
      expect(results).toHaveLength(1_000);
      for (const result of results) {
        if (result.status === 'completed') expect(result.output).toMatch(/^Answer \d+\.$/);
        else {
          expect(result.reason).toBe('error');
          expect(['model_error', 'empty_answer']).toContain(result.error?.code);
        }
      }
      const completed = results.filter((result) => result.status === 'completed').length;
      expect(completed).toBeGreaterThan(900);
      expect(lines.filter((line) => line.includes('"model.retry"')).length).toBeGreaterThan(100);
      expect(sessions).toHaveLength(1_000);
      for (const session of sessions) expect(['completed', 'failed']).toContain(session.state);
      expect(sessions.filter((session) => session.state === 'completed')).toHaveLength(completed);
      expect(unhandled).toEqual([]);
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  }, 60_000);
});
