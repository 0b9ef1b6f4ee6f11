// troupe reads nothing private of XState: here every core scenario runs on a SimulatedClock whose private fields
// throw when anything reads them, so a read of `timeouts` or `_now` (by the runtime, its machines or its testing
// helpers) fails the test.
import { afterEach, describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, parallel, sequence, step, type Runtime, type TroupeEvent } from 'troupe';
import { ScriptedModel, advanceUntilSettled, nextTimerAt } from 'troupe/testing';
import { neverEnding, scripted } from '../stubs.js';

/** A SimulatedClock that keeps its state in fields of its own and throws on a read of the base class's private ones. */
class SealedClock extends SimulatedClock {
  #now = 0;
  #nextId = 0;
  readonly #timers = new Map<number, { due: number; fn: () => void }>();
  /** How many times a private field was read (a read also throws, but a caller could swallow the error). */
  static privateReads = 0;

  constructor() {
    super();
    for (const field of ['timeouts', '_now', '_id', '_flushing', '_flushingInvalidated']) {
      Object.defineProperty(this, field, {
        get() {
          SealedClock.privateReads += 1;
          throw new Error(`SimulatedClock.${field} is private and was read`);
        },
        set() {
          SealedClock.privateReads += 1;
          throw new Error(`SimulatedClock.${field} is private and was written`);
        },
      });
    }
  }

  override now(): number {
    return this.#now;
  }

  override setTimeout(fn: (...args: any[]) => void, timeout: number): number {
    const id = this.#nextId++;
    this.#timers.set(id, { due: this.#now + Math.max(0, timeout), fn });
    return id;
  }

  override clearTimeout(id: number): void {
    this.#timers.delete(id);
  }

  override set(time: number): void {
    if (time < this.#now) throw new Error('Unable to travel back in time');
    this.#now = time;
    for (;;) {
      let first: [number, { due: number; fn: () => void }] | undefined;
      for (const entry of this.#timers) if (entry[1].due <= time && (!first || entry[1].due < first[1].due)) first = entry;
      if (!first) return;
      this.#timers.delete(first[0]);
      first[1].fn();
    }
  }

  override increment(ms: number): void {
    this.set(this.#now + ms);
  }
}

const call = (name: string, args: unknown, id = `call_${name}`) => ({ id, name, arguments: JSON.stringify(args) });
const callsTools = (...calls: ReturnType<typeof call>[]) => ({ content: '', toolCalls: calls });
const agent = (name: string, tools: string[] = [], extra: Record<string, unknown> = {}) =>
  defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools, ...extra });

let runtime: Runtime | undefined;
afterEach(async () => {
  await runtime?.shutdown();
  runtime = undefined;
  expect(SealedClock.privateReads).toBe(0);
});

describe('a runtime on a SimulatedClock whose private fields are sealed', () => {
  it('runs a delegation with model latencies, stamping events with the clock time', async () => {
    const clock = new SealedClock();
    const model = new ScriptedModel(
      [callsTools(call('assign_task', { description: 'sum', agent: 'helper', task: 'Add 2 and 2.' })), '4', 'The helper says 4.'],
      { latencyMs: 1_000 },
    );
    runtime = createRuntime({ model, agents: [agent('lead', ['assign_task']), agent('helper')], clock, projectAgentDir: false });
    const events: TroupeEvent[] = [];
    runtime.events$.subscribe((event) => events.push(event));

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'What is 2 + 2?'));

    expect(result).toMatchObject({ status: 'completed', output: 'The helper says 4.' });
    expect(clock.now()).toBe(3_000); // three model turns of one simulated second each
    const completed = events.filter((event) => event.type === 'agent.completed').map((event) => event.at);
    expect(completed).toEqual([2_000, 3_000]);
    model.assertDone();
  });

  it('times a slow tool out and fails an idle agent, in simulated time', async () => {
    const clock = new SealedClock();
    const slow = neverEnding('slow', 5_000);
    const model = scripted([callsTools(call('slow', {})), 'It timed out.']);
    runtime = createRuntime({ model, agents: [agent('worker', ['slow'])], tools: [slow], clock, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Be slow.'));

    expect(result).toMatchObject({ status: 'completed', output: 'It timed out.' });
    expect(model.calls[1]!.messages.at(-1)?.content).toContain('timed out');
    expect(clock.now()).toBe(5_000);

    const stuck = new ScriptedModel(() => new Promise<never>(() => {}));
    const idle = createRuntime({ model: stuck, agents: [agent('worker')], clock, idleTimeoutMs: 60_000, projectAgentDir: false });
    const failed = await advanceUntilSettled(clock, idle.run('worker', 'Hang.'));
    expect(failed).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(clock.now()).toBe(65_000);
    await idle.shutdown();
    expect(nextTimerAt(clock)).toBeUndefined();
  });

  it('runs residents that message each other until idle, and patterns as groups', async () => {
    const clock = new SealedClock();
    const model = new ScriptedModel(
      (request) => {
        const last = request.messages.at(-1)!.content;
        if (request.agentName === 'pinger') {
          if (request.messages.length <= 2) return callsTools(call('send_message', { to: 'ponger', content: 'ping', expect_reply: true, timeout_ms: 10_000 }));
          return `Got: ${last}`;
        }
        if (request.agentName === 'ponger') return last.endsWith('] ping') ? callsTools(call('reply', { content: 'pong' })) : 'Waiting.';
        return `done: ${last}`;
      },
      { latencyMs: 250 },
    );
    runtime = createRuntime({
      model,
      agents: [agent('pinger', ['send_message']), agent('ponger', ['reply'], { resident: true }), agent('step')],
      clock,
      seed: 7,
      projectAgentDir: false,
    });
    runtime.spawn('ponger', 'Answer pings.');
    const pinger = runtime.run('pinger', 'Ping the ponger.');
    const report = await runtime.runUntilIdle();
    expect(await pinger).toMatchObject({ status: 'completed', output: expect.stringMatching(/^Got: \[message .* in reply to .*\] pong$/) });
    expect(report.waiting).toHaveLength(1);
    expect(report.at).toBeGreaterThan(0);

    const events: TroupeEvent[] = [];
    runtime.events$.subscribe((event) => events.push(event));
    const started = clock.now();
    const composed = sequence([parallel([step('step', 'a'), step('step', 'b')]), step('step', (previous) => `after ${previous?.output}`)]).run(runtime);
    await runtime.runUntilIdle();
    const composedResult = await composed;
    expect(composedResult.status).toBe('completed');
    expect(composedResult.output).toMatch(/^done: after [^]*done: a[^]*done: b/);
    const groupIds = events.flatMap((event) => (event.type === 'agent.spawned' && event.group === true ? [event.agentId] : []));
    expect(groupIds).toHaveLength(2);
    // The groups stamp their events with the sealed clock's time: the sequence ends after two model turns.
    const sequenceEnd = events.find((event) => event.type === 'agent.completed' && event.agentId === groupIds[0]);
    expect(sequenceEnd?.at).toBe(started + 500);
  });
});
