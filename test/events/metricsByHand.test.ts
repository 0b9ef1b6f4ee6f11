// The metrics of small scripted runs, every figure worked out by hand from the script: each reply's usage, each
// agent's latency on a simulated clock and a price table of $1 per million input tokens and $2 per million output
// tokens. The figures are read from `runtime.metrics()`, the last `metrics$` snapshot and the run's results.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, ModelError, type AgentResult, type Figures, type MetricsSnapshot, type Runtime } from 'troupe';
import { TestClock, advanceUntilSettled, assignCall, callTools, toolCall } from 'troupe/testing';
import { scriptedPerAgent } from '../stubs.js';

const PRICES = { m1: { input: 1, output: 2 } };
const usage = (inputTokens: number, outputTokens: number) => ({ inputTokens, outputTokens });

function agent(name: string, tools: string[] = [], extra: Record<string, unknown> = {}) {
  return defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools, ...extra });
}

/** Figures with the given fields, the others zero. */
function figures(given: Partial<Figures>): Figures {
  return { inputTokens: 0, outputTokens: 0, costUsd: 0, modelCalls: 0, toolCalls: 0, toolErrors: 0, messagesOut: 0, messagesIn: 0, durationMs: 0, ...given };
}

/** The entry of the one agent named `name`. */
function named(snapshot: MetricsSnapshot, name: string) {
  const found = Object.entries(snapshot.agents).filter(([, entry]) => entry.name === name);
  expect(found).toHaveLength(1);
  return { id: found[0]![0], ...found[0]![1] };
}

/** Every subtree is its own figures plus its children's subtrees; the run's figures are the sum of every own. */
function expectConsistent(snapshot: MetricsSnapshot) {
  const keys = Object.keys(figures({})) as (keyof Figures)[];
  const sum = (list: Figures[], key: keyof Figures) => Math.round(list.reduce((total, f) => total + f[key], 0) * 1e12) / 1e12;
  const entries = Object.entries(snapshot.agents);
  for (const [id, entry] of entries) {
    const children = entries.filter(([, child]) => child.parentId === id).map(([, child]) => child.subtree);
    for (const key of keys) expect(entry.subtree[key], `${id} ${key}`).toBe(sum([entry.own, ...children], key));
  }
  const owns = entries.map(([, entry]) => entry.own);
  for (const key of keys) expect(snapshot.total[key], `total ${key}`).toBe(sum(owns, key));
}

async function watched(runtime: Runtime, clock: TestClock, run: () => Promise<AgentResult>) {
  let last: MetricsSnapshot | undefined;
  runtime.metrics$.subscribe((snapshot) => (last = snapshot));
  const result = await advanceUntilSettled(clock, run());
  return { result, last: last! };
}

describe('metrics worked out by hand', () => {
  it('counts a lead, two specialists and a specialist of a specialist, own and subtree', async () => {
    // lead (100 ms a turn) hands `a` (200 ms) and `b` (300 ms) their tasks in one turn at 100; `a` hands `c` (50 ms)
    // its task at 300. c: 300–350; b: 100–400; a: 100–550; lead: 0–650.
    const latency: Record<string, number> = { lead: 100, a: 200, b: 300, c: 50 };
    const model = scriptedPerAgent(
      {
        lead: [{ ...callTools(assignCall('a', 'A.', { id: 'ca' }), assignCall('b', 'B.', { id: 'cb' })), usage: usage(10, 1) }, { content: 'L', usage: usage(20, 2) }],
        a: [{ ...callTools(assignCall('c', 'C.', { id: 'cc' })), usage: usage(100, 10) }, { content: 'A', usage: usage(200, 20) }],
        b: [{ content: 'B', usage: usage(1000, 100) }],
        c: [{ content: 'C', usage: usage(5000, 500) }],
      },
      { model: 'm1', latencyMs: (request) => latency[request.agentName]! },
    );
    const clock = new TestClock();
    const runtime = createRuntime({ model, clock, prices: PRICES, agents: [agent('lead', ['assign_task']), agent('a', ['assign_task']), agent('b'), agent('c')] });

    const { result, last } = await watched(runtime, clock, () => runtime.run('lead', 'Go.'));
    const metrics = runtime.metrics();

    // Cost: (input × 1 + output × 2) / 1e6.
    const c = figures({ inputTokens: 5000, outputTokens: 500, costUsd: 0.006, modelCalls: 1, durationMs: 50 });
    const b = figures({ inputTokens: 1000, outputTokens: 100, costUsd: 0.0012, modelCalls: 1, durationMs: 300 });
    const a = figures({ inputTokens: 300, outputTokens: 30, costUsd: 0.00036, modelCalls: 2, toolCalls: 1, durationMs: 450 });
    const lead = figures({ inputTokens: 30, outputTokens: 3, costUsd: 0.000036, modelCalls: 2, toolCalls: 2, durationMs: 650 });
    expect(named(metrics, 'c').own).toEqual(c);
    expect(named(metrics, 'b').own).toEqual(b);
    expect(named(metrics, 'a').own).toEqual(a);
    expect(named(metrics, 'a').subtree).toEqual(figures({ inputTokens: 5300, outputTokens: 530, costUsd: 0.00636, modelCalls: 3, toolCalls: 1, durationMs: 500 }));
    const whole = figures({ inputTokens: 6330, outputTokens: 633, costUsd: 0.007596, modelCalls: 6, toolCalls: 3, durationMs: 1450 });
    expect(named(metrics, 'lead').subtree).toEqual(whole);
    expect(metrics.total).toEqual({ ...whole, agentsSpawned: 4, agentsRunning: 0, agentsCompleted: 4, agentsFailed: 0, peakRunning: 4 });
    expect(result.metrics).toEqual({ own: lead, subtree: whole });
    expect(last.total).toEqual(metrics.total);
    expectConsistent(metrics);
    await runtime.shutdown();
  });

  it('counts a retried call once, a failed specialist and a restarted one over both attempts', async () => {
    // `b` (200 ms) fails with a 503 at 300, waits the 1000 ms the server asked for and answers at 1500: one model call,
    // 1400 ms. `f` (300 ms) fails at 400 with no reply. `r` (50 ms) replies at 150 with a call of an unknown tool (an
    // error result), fails at 200 and is started again, answering at 250: 100 + 50 ms over its two attempts.
    const latency: Record<string, number> = { lead: 100, b: 200, f: 300, r: 50 };
    const model = scriptedPerAgent(
      {
        lead: [
          { ...callTools(assignCall('b', 'B.', { id: 'cb' }), assignCall('f', 'F.', { id: 'cf' }), assignCall('r', 'R.', { id: 'cr' })), usage: usage(10, 1) },
          { content: 'L', usage: usage(20, 2) },
        ],
        b: [new ModelError('Busy.', { status: 503, retryAfterMs: 1000 }), { content: 'B', usage: usage(1000, 100) }],
        f: [new Error('Broken.')],
        r: [{ ...callTools(toolCall('no_such_tool', {}, 'x')), usage: usage(7, 7) }, new Error('Broken.'), { content: 'R', usage: usage(3, 3) }],
      },
      { model: 'm1', latencyMs: (request) => latency[request.agentName]! },
    );
    const clock = new TestClock();
    const agents = [agent('lead', ['assign_task']), agent('b'), agent('f'), agent('r', [], { restart: 'on-failure' })];
    const runtime = createRuntime({ model, clock, prices: PRICES, agents });

    const { result, last } = await watched(runtime, clock, () => runtime.run('lead', 'Go.'));
    const metrics = runtime.metrics();

    expect(named(metrics, 'b').own).toEqual(figures({ inputTokens: 1000, outputTokens: 100, costUsd: 0.0012, modelCalls: 1, durationMs: 1400 }));
    expect(named(metrics, 'f')).toMatchObject({ state: 'failed', own: figures({ durationMs: 300 }) });
    const r = figures({ inputTokens: 10, outputTokens: 10, costUsd: 0.00003, modelCalls: 2, toolCalls: 1, toolErrors: 1, durationMs: 150 });
    expect(named(metrics, 'r').own).toEqual(r);
    expect(await runtime.taskOutput(named(metrics, 'r').id)).toMatchObject({ status: 'completed', metrics: { own: r, subtree: r } });
    const lead = figures({ inputTokens: 30, outputTokens: 3, costUsd: 0.000036, modelCalls: 2, toolCalls: 3, toolErrors: 1, durationMs: 1600 });
    const whole = figures({ inputTokens: 1040, outputTokens: 113, costUsd: 0.001266, modelCalls: 5, toolCalls: 4, toolErrors: 2, durationMs: 3450 });
    expect(result.metrics).toEqual({ own: lead, subtree: whole });
    expect(metrics.total).toMatchObject({ ...whole, agentsSpawned: 4, agentsCompleted: 3, agentsFailed: 1, agentsRunning: 0 });
    expect(last.total).toEqual(metrics.total);
    expectConsistent(metrics);
    await runtime.shutdown();
  });

  it("gives a resumed agent's result the messages of that run only, as its tokens and time", async () => {
    // Each run: a turn that sends one message to the runtime, then an answer; 10 ms a turn.
    const send = (id: string) => ({ ...callTools(toolCall('send_message', { to: 'runtime', content: 'Hello.' }, id)), usage: usage(1, 1) });
    const model = scriptedPerAgent({ w: [send('s1'), { content: 'One.', usage: usage(1, 1) }, send('s2'), { content: 'Two.', usage: usage(1, 1) }] }, { latencyMs: 10 });
    const clock = new TestClock();
    const runtime = createRuntime({ model, clock, agents: [agent('w', ['send_message'])] });

    const first = await advanceUntilSettled(clock, runtime.run('w', 'Send one.'));
    const second = await advanceUntilSettled(clock, (await runtime.resume(first.id, 'Send another.')).result);

    const oneRun = figures({ inputTokens: 2, outputTokens: 2, modelCalls: 2, toolCalls: 1, messagesOut: 1, durationMs: 20 });
    expect(first.metrics).toEqual({ own: oneRun, subtree: oneRun });
    expect(second.metrics).toEqual({ own: oneRun, subtree: oneRun });
    // The metrics add both runs up.
    expect(runtime.metrics().agents[first.id]!.own).toEqual(figures({ inputTokens: 4, outputTokens: 4, modelCalls: 4, toolCalls: 2, messagesOut: 2, durationMs: 40 }));
    await runtime.shutdown();
  });

  it("keeps a result's own cost on the metrics' grid: $0.1 and $0.2 make $0.3", async () => {
    // 100,000 and 200,000 input tokens at $1 per million.
    const model = scriptedPerAgent({ w: [{ ...callTools(toolCall('no_such_tool', {}, 'x')), usage: usage(100_000, 0) }, { content: 'Done.', usage: usage(200_000, 0) }] }, { model: 'm1' });
    const runtime = createRuntime({ model, prices: PRICES, agents: [agent('w')] });

    const result = await runtime.run('w', 'Go.');

    expect(result.metrics.own.costUsd).toBe(0.3);
    expect(result.metrics.subtree.costUsd).toBe(0.3);
    expect(runtime.metrics().total.costUsd).toBe(0.3);
    await runtime.shutdown();
  });

  it('prices a model the table does not know at zero, its tokens still counted', async () => {
    const model = scriptedPerAgent({ w: [{ content: 'Done.', usage: usage(300, 40) }] }, { model: 'unknown-model' });
    const runtime = createRuntime({ model, prices: PRICES, agents: [agent('w')] });

    const result = await runtime.run('w', 'Go.');

    expect(result.metrics.own).toMatchObject({ inputTokens: 300, outputTokens: 40, costUsd: 0, modelCalls: 1 });
    expect(runtime.metrics().total).toMatchObject({ inputTokens: 300, outputTokens: 40, costUsd: 0 });
    await runtime.shutdown();
  });
});
