// The metrics of small scripted runs, every figure worked out by hand from the script: each reply's usage, each
// agent's latency on a simulated clock and a price table of $1 per million input tokens and $2 per million output
// tokens. The figures are read from `runtime.metrics()`, the last `metrics$` snapshot and the run's results.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, fanIn, ModelError, parallel, pipeline, race, sequence, step, type AgentResult, type Figures, type MetricsSnapshot, type Runtime } from 'troupe';
import { TestClock, advanceUntilSettled, assignCall, callTools, toolCall } from 'troupe/testing';
import { hang, scriptedPerAgent } from '../stubs.js';

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

  it('counts patterns: each group a parent whose subtree is its members, with no figures or time of its own', async () => {
    // a: 100 ms, $3e-6 a reply (1 + 1 tokens); b: 200 ms, $3e-5 (10 + 10); slow: 1000 ms, cancelled when `a` wins the
    // race at 100 ms into it; j (the fan-in's judge): 10 ms, $1.5e-5 (5 + 5).
    const latency: Record<string, number> = { a: 100, b: 200, slow: 1000, j: 10 };
    // Each agent of a name gets the list of its name (an agent a list).
    const replies = (count: number, content: string, tokens: number) => Array.from({ length: count }, () => ({ content, usage: usage(tokens, tokens) }));
    const model = scriptedPerAgent(
      { a: replies(1, 'A', 1), b: replies(1, 'B', 10), slow: [], j: replies(1, 'J', 5) },
      { model: 'm1', latencyMs: (request) => latency[request.agentName]! },
    );
    const clock = new TestClock();
    const runtime = createRuntime({ model, clock, prices: PRICES, agents: ['a', 'b', 'slow', 'j'].map((name) => agent(name)) });
    const run = sequence([
      step('a', 'x'),
      parallel([step('b', 'y'), step('a', 'z')]),
      race([step('a', 'r'), step('slow', 's')]),
      fanIn([step('b', 'p'), step('a', 'q')], { agent: 'j' }),
      pipeline(['a', 'b']),
    ]);

    const { result, last } = await watched(runtime, clock, () => run.run(runtime, 'Go.'));
    const metrics = runtime.metrics();

    const group = (name: string) => Object.values(metrics.agents).find((entry) => entry.group && entry.name === name)!;
    expect(group('parallel')).toMatchObject({ own: figures({}), subtree: figures({ inputTokens: 11, outputTokens: 11, costUsd: 0.000033, modelCalls: 2, durationMs: 300 }) });
    expect(group('race').subtree).toEqual(figures({ inputTokens: 1, outputTokens: 1, costUsd: 0.000003, modelCalls: 1, durationMs: 200 }));
    expect(group('fan-in').subtree).toEqual(figures({ inputTokens: 16, outputTokens: 16, costUsd: 0.000048, modelCalls: 3, durationMs: 310 }));
    expect(group('pipeline').subtree).toEqual(figures({ inputTokens: 11, outputTokens: 11, costUsd: 0.000033, modelCalls: 2, durationMs: 300 }));
    // 5 × a (100 ms), 3 × b (200 ms), j (10 ms) and the 100 ms `slow` ran before it lost.
    const whole = figures({ inputTokens: 40, outputTokens: 40, costUsd: 0.00012, modelCalls: 9, durationMs: 1210 });
    expect(result.metrics).toEqual({ own: figures({}), subtree: whole });
    expect(metrics.total).toEqual({ ...whole, agentsSpawned: 10, agentsRunning: 0, agentsCompleted: 9, agentsFailed: 1, peakRunning: 2 });
    expect(last.total).toEqual(metrics.total);
    expectConsistent(metrics);
    await runtime.shutdown();
  });

  it('ends the figures of a cancelled subtree at the cancel, on the runtime clock', async () => {
    // 100 ms a turn: lead hands `a` its task at 100, `a` hands `c` its task at 200, `c` calls `hang` at 300; the whole
    // tree is cancelled at 1000 (lead ran 1000 ms, a 900, c 800). The hanging call never ends, so it is not counted.
    const model = scriptedPerAgent(
      {
        lead: [{ ...callTools(assignCall('a', 'A.', { id: 'ca' })), usage: usage(1, 1) }],
        a: [{ ...callTools(assignCall('c', 'C.', { id: 'cc' })), usage: usage(10, 10) }],
        c: [{ ...callTools(toolCall('hang', {}, 'h')), usage: usage(100, 100) }],
      },
      { model: 'm1', latencyMs: 100 },
    );
    const clock = new TestClock();
    const runtime = createRuntime({ model, clock, prices: PRICES, tools: [hang], agents: [agent('lead', ['assign_task']), agent('a', ['assign_task']), agent('c', ['hang'])] });
    const handle = runtime.spawn('lead', 'Go.');
    clock.setTimeout(() => runtime.cancel(handle.id), 1_000);

    const { result, last } = await watched(runtime, clock, () => handle.result);
    const metrics = runtime.metrics();

    expect(result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(named(metrics, 'c')).toMatchObject({ state: 'failed', own: figures({ inputTokens: 100, outputTokens: 100, costUsd: 0.0003, modelCalls: 1, durationMs: 800 }) });
    expect(named(metrics, 'a').own.durationMs).toBe(900);
    const whole = figures({ inputTokens: 111, outputTokens: 111, costUsd: 0.000333, modelCalls: 3, durationMs: 2_700 });
    expect(result.metrics).toEqual({ own: figures({ inputTokens: 1, outputTokens: 1, costUsd: 0.000003, modelCalls: 1, durationMs: 1_000 }), subtree: whole });
    expect(metrics.total).toEqual({ ...whole, agentsSpawned: 3, agentsRunning: 0, agentsCompleted: 0, agentsFailed: 3, peakRunning: 3 });
    expect(last.total).toEqual(metrics.total);
    expectConsistent(metrics);
    await runtime.shutdown();
  });

  it("counts messages out and in per agent: a dead letter is sent, a resident's idle time is its running time", async () => {
    // pong (resident) answers at 10 and waits. ping starts at 50: at 60 it sends pong a message (delivered) and one to
    // nobody (a dead letter, an error result), at 70 pong replies (delivered to ping). ping answers at 80; pong is
    // stopped at 180. 10 ms a reply.
    const send = (to: string, id: string) => toolCall('send_message', { to, content: 'Ping.' }, id);
    const model = scriptedPerAgent(
      {
        ping: [{ ...callTools(send('pong', 's1'), send('nobody', 's2')), usage: usage(1, 1) }, { ...callTools(toolCall('wait_for_messages', {}, 'w')), usage: usage(1, 1) }, { content: 'Got it.', usage: usage(1, 1) }],
        pong: [{ content: 'Ready.', usage: usage(1, 1) }, { ...callTools(toolCall('reply', { content: 'Pong.' }, 'r')), usage: usage(2, 2) }, { content: 'Replied.', usage: usage(2, 2) }],
      },
      { latencyMs: 10 },
    );
    const clock = new TestClock();
    const runtime = createRuntime({ model, clock, agents: [agent('ping', ['send_message', 'wait_for_messages']), agent('pong', ['reply'], { resident: true })] });
    const pong = runtime.spawn('pong', 'Serve.');
    await advanceUntilSettled(clock, new Promise((resolve) => clock.setTimeout(resolve, 50)));
    const ping = await advanceUntilSettled(clock, runtime.run('ping', 'Go.'));
    clock.setTimeout(() => runtime.stop(pong.id), 100);
    const pongResult = await advanceUntilSettled(clock, pong.result);

    expect(ping.metrics.own).toEqual(figures({ inputTokens: 3, outputTokens: 3, modelCalls: 3, toolCalls: 3, toolErrors: 1, messagesOut: 2, messagesIn: 1, durationMs: 30 }));
    expect(pongResult.metrics.own).toEqual(figures({ inputTokens: 5, outputTokens: 5, modelCalls: 3, toolCalls: 1, messagesOut: 1, messagesIn: 1, durationMs: 180 }));
    expect(runtime.metrics().total).toMatchObject({ messagesOut: 3, messagesIn: 2, durationMs: 210 });
    expectConsistent(runtime.metrics());
    await runtime.shutdown();
  });
});
