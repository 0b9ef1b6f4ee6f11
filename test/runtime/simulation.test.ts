// Simulation: runUntilIdle in simulated time (idle residents, deadlocks, its limit) and runs that repeat byte for byte
// for a seed.
import { describe, expect, it } from 'vitest';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime, DeadlockError, defineTool, readRecording, type Message, realClock, RECORDING_SCHEMA_VERSION, RuntimeClock, type ModelReply, type ModelRequest, type TroupeClock } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { lastMessage, leader, readMessages, resident, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';
import { ManualClock } from '../support/manualClock.js';

describe('runUntilIdle', () => {
  it('resolves with the resident agents that wait for their next message, once nothing else is left to do', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'standing by', { latencyMs: 250 });
    const runtime = createRuntime({ model, agents: [resident('guard'), worker()], clock, projectAgentDir: false });
    const guards = [runtime.spawn('guard', 'Stand by.'), runtime.spawn('guard', 'Stand by.')];
    const work = runtime.run('worker', 'Work.');

    const report = await runtime.runUntilIdle();

    expect(report).toEqual({ at: 250, waiting: expect.arrayContaining(guards.map((guard) => guard.id)) });
    expect(report.waiting).toHaveLength(2);
    expect((await work).status).toBe('completed');
    for (const guard of guards) runtime.stop(guard.id);
    expect((await Promise.all(guards.map((guard) => guard.result))).map((result) => result.output)).toEqual(['standing by', 'standing by']);
    await runtime.shutdown();
  });

  it('rejects with a DeadlockError naming both agents when each waits for a message from the other', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      alice: [callTools(toolCall('wait_for_messages', { from: 'bob' }, 'w'))],
      bob: [callTools(toolCall('wait_for_messages', { from: 'alice' }, 'w'))],
    });
    const agents = [worker('alice', ['wait_for_messages']), worker('bob', ['wait_for_messages'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const alice = runtime.spawn('alice', 'Wait for bob.');
    const bob = runtime.spawn('bob', 'Wait for alice.');

    const error = await runtime.runUntilIdle().catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(DeadlockError);
    expect(error).toMatchObject({ code: 'deadlock', at: 0 });
    expect([...(error as DeadlockError).waiting].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: alice.id, state: 'running.waiting', waitsFor: 'a message from bob' },
        { id: bob.id, state: 'running.waiting', waitsFor: 'a message from alice' },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    expect((error as Error).message).toContain(`${alice.id} (running.waiting, for a message from bob)`);
    expect((error as Error).message).toContain(bob.id);
    await runtime.shutdown();
    expect((await alice.result).reason).toBe('cancelled');
  });

  it('counts an agent waiting for any message (wait_for_messages without from) as idle, not stuck', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      listener: [callTools(toolCall('wait_for_messages', {}, 'w')), 'heard it'],
    });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });
    const listener = runtime.spawn('listener', 'Wait for news.');

    const report = await runtime.runUntilIdle();

    expect(report.waiting).toEqual([listener.id]);
    await runtime.send(listener.id, 'news');
    await runtime.runUntilIdle();
    expect(await listener.result).toMatchObject({ status: 'completed', output: 'heard it' });
    await runtime.shutdown();
  });

  it('reports agents that wait for code (a message or a reply from runtime) in a DeadlockError, and code may answer after it', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      listener: [callTools(toolCall('wait_for_messages', { from: 'runtime' }, 'w')), (request) => `heard: ${lastMessage(request).content}`],
      asker: [callTools(toolCall('send_message', { to: 'runtime', content: 'Go ahead?', expect_reply: true }, 'ask')), (request) => `told: ${lastMessage(request).content}`],
    });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages']), worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const asked: Message[] = [];
    runtime.messages$.subscribe((message) => message.to === 'runtime' && asked.push(message));
    const listener = runtime.spawn('listener', 'Wait for word from code.');
    const asker = runtime.spawn('asker', 'Ask code.');

    const error = await runtime.runUntilIdle().catch((failure: unknown) => failure);

    // Nobody answered yet: a question left unanswered is not an idle run.
    expect(error).toBeInstanceOf(DeadlockError);
    expect([...(error as DeadlockError).waiting].sort((a, b) => a.id.localeCompare(b.id))).toEqual(
      [
        { id: listener.id, state: 'running.waiting', waitsFor: 'a message from runtime' },
        { id: asker.id, state: 'running.waiting', waitsFor: `a reply to ${asked[0]!.id} from runtime` },
      ].sort((a, b) => a.id.localeCompare(b.id)),
    );
    await runtime.send(listener.id, 'Start now.');
    await runtime.send(asker.id, 'Yes.', { replyTo: asked[0]!.id });
    await runtime.runUntilIdle();
    expect(await listener.result).toMatchObject({ status: 'completed', output: expect.stringContaining('Start now.') });
    expect(await asker.result).toMatchObject({ status: 'completed', output: expect.stringContaining('Yes.') });
    await runtime.shutdown();
  });

  it('names only the stuck agent: one that waits for a reply that never comes, not the idle resident it asked', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      asker: [callTools(toolCall('send_message', { to: 'mute', content: 'well?', expect_reply: true }, 'ask'))],
      mute: ['here', 'read it'],
    });
    const runtime = createRuntime({ model, agents: [worker('asker', ['send_message']), resident('mute')], clock, projectAgentDir: false });
    const mute = runtime.spawn('mute', 'Say nothing.');
    const asker = runtime.spawn('asker', 'Ask.');

    const error = await runtime.runUntilIdle().catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(DeadlockError);
    expect((error as DeadlockError).waiting).toEqual([
      { id: asker.id, state: 'running.waiting', waitsFor: expect.stringMatching(new RegExp(`^a reply to msg:\\d+ from ${mute.id}$`)) },
    ]);
    expect((error as Error).message).not.toContain(`${mute.id} (`); // the mute one is idle, not listed as stuck
    await runtime.shutdown();
  });

  it('rejects with a DeadlockError, not waiting for ever, when an agent is queued behind the only slot and its holder waits for a person', async () => {
    const clock = simulatedClock();
    const askPerson = defineTool({
      name: 'ask_person',
      description: 'Asks a person, who never answers.',
      parameters: z.object({}),
      kind: 'other',
      interactive: true,
      execute: () => new Promise<string>(() => {}),
    });
    const model = scriptedPerAgent({ asker: [callTools(toolCall('ask_person', {}, 'p'))], worker: [] });
    const runtime = createRuntime({ model, agents: [worker('asker', ['ask_person']), worker()], tools: [askPerson], clock, maxParallel: 1, projectAgentDir: false });
    const asker = runtime.spawn('asker', 'Ask a person.');
    const queued = runtime.spawn('worker', 'Work.');

    const error = await runtime.runUntilIdle().catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(DeadlockError);
    expect((error as DeadlockError).waiting).toEqual([
      { id: asker.id, state: 'running.acting.waitingForPerson' },
      { id: queued.id, state: 'pending.queued' },
    ]);
    await runtime.shutdown();
  });

  // Without an inspector a lead that lends its slot to its sub-agents stays in `acting.working` (quiet slot notices): it
  // must count as parked all the same, or runUntilIdle waits in real time for ever.
  it.each([
    ['without an inspector', {}],
    ['under an inspector', { inspect: () => {} }],
  ])('rejects with a DeadlockError naming the lead, %s, when it waits for a sub-agent that never ends', async (_, watched) => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      lead: [callTools(toolCall('assign_task', { description: 'help', agent: 'helper', task: 'Help.' }, 'a'))],
      helper: ['Standing by.'],
    });
    const agents = [leader('lead', { subagents: ['helper'] }), resident('helper')];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false, ...watched });
    const lead = runtime.spawn('lead', 'Ask the helper.');

    const error = await runtime.runUntilIdle({ limitMs: 60_000 }).catch((failure: unknown) => failure);

    expect(error).toBeInstanceOf(DeadlockError);
    // The helper waits for its next message, which is idle; the lead waits for it, which nothing can end.
    expect((error as DeadlockError).waiting).toEqual([{ id: lead.id, state: 'running.acting.waitingForAgents' }]);
    await runtime.shutdown();
  });

  it('rejects once simulated time passes its limit, for a run that never becomes idle', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => callTools(toolCall('wait_for_messages', { timeout_ms: 1_000 }, 'tick')));
    const runtime = createRuntime({ model, agents: [resident('ticker', ['wait_for_messages'])], clock, projectAgentDir: false });
    runtime.spawn('ticker', 'Tick for ever.');

    await expect(runtime.runUntilIdle({ limitMs: 10_000 })).rejects.toThrow(/passed the limit \(10000 ms from the start of runUntilIdle/);
    expect(runtime.now()).toBeLessThanOrEqual(10_000);
    expect(model.calls.length).toBeGreaterThanOrEqual(10);
    await runtime.shutdown();
  });
});

describe('the runtime clock', () => {
  it('in simulated time, fires timers in the order they are due, those due together in the order they were set', () => {
    const clock = new RuntimeClock(simulatedClock());
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('b@20'), 20);
    clock.setTimeout(() => fired.push('a@10'), 10);
    clock.setTimeout(() => fired.push('c@20'), 20);
    const dropped = clock.setTimeout(() => fired.push('dropped@15'), 15);
    clock.setTimeout(() => fired.push('now (NaN)'), Number.NaN);
    clock.clearTimeout(dropped);

    expect(clock.nextTimerAt()).toBe(0);
    expect(clock.pending).toBe(4);
    clock.advanceTo(20);

    expect(fired).toEqual(['now (NaN)', 'a@10', 'b@20', 'c@20']);
    expect(clock.nextTimerAt()).toBeUndefined();
    expect(clock.now()).toBe(20);
  });

  it('reads a delay given as text as its number, as the host does (it was added to the time as text)', () => {
    const clock = new RuntimeClock(simulatedClock());
    clock.advanceTo(100);
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), '50' as never);
    expect(clock.nextTimerAt()).toBe(150);
    clock.advanceTo(150);
    expect(fired).toEqual([150]);
  });

  it('in real time, keeps one host timer for all of its timers, and none once its timers are cleared or fired', async () => {
    const host = hostTimers();
    const clock = new RuntimeClock(host.clock);
    const fired: string[] = [];
    const done = new Promise<void>((resolve) => {
      clock.setTimeout(() => fired.push('b@30'), 30);
      clock.setTimeout(() => fired.push('a@10'), 10);
      const dropped = clock.setTimeout(() => fired.push('dropped@20'), 20);
      clock.setTimeout(() => {
        fired.push('c@40');
        resolve();
      }, 40);
      clock.clearTimeout(dropped);
    });
    // Idle timeouts set and cleared on every turn: one host timer, not one each.
    for (let turn = 0; turn < 100; turn++) clock.clearTimeout(clock.setTimeout(() => fired.push('idle'), 60_000, 'watchdog'));

    expect(host.live.size).toBe(1);
    await done;

    expect(fired).toEqual(['a@10', 'b@30', 'c@40']);
    expect(clock.pending).toBe(0);
    expect(host.live.size).toBe(0);
  });

  it('in real time, wakes for the earliest timer after firing one that set a later timer (an idle timer set again for the rest)', () => {
    const host = new ManualClock();
    const clock = new RuntimeClock(host);
    const fired: string[] = [];
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 200, 'watchdog');
    }, 10);
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 30);

    host.advance(10);
    expect(host.nextDue()).toBe(30); // the wake-up for b, not for c at 210
    host.advance(200);
    expect(fired).toEqual(['a@10', 'b@30', 'c@210']);
    expect(host.nextDue()).toBeUndefined();
  });

  it('in real time, holds the process only while a work or watchdog timer is set', () => {
    const host = hostTimers();
    const clock = new RuntimeClock(host.clock);
    const housekeeping = clock.setTimeout(() => {}, 60_000, 'background');
    const wakeUp = () => [...host.live][0]!;
    expect(wakeUp().hasRef()).toBe(false);

    const work = clock.setTimeout(() => {}, 30_000);
    expect(wakeUp().hasRef()).toBe(true);
    clock.clearTimeout(work);
    expect(host.live.size).toBe(1);
    expect(wakeUp().hasRef()).toBe(false);

    clock.clearTimeout(housekeeping);
    expect(host.live.size).toBe(0);
  });

  it('in real time, does not fire a timer longer than the host’s limit (about 24.8 days) at once', async () => {
    const clock = new RuntimeClock(realClock);
    let fired = false;
    const id = clock.setTimeout(() => (fired = true), 3_000_000_000);
    // The host fires a longer delay after 1 ms; a short timer set after it fires after that.
    await new Promise<void>((resolve) => clock.setTimeout(resolve, 20));

    expect(fired).toBe(false);
    expect(clock.pending).toBe(1);
    clock.clearTimeout(id);
    expect(clock.pending).toBe(0);
  });
});

describe('reproducible runs', () => {
  const dir = eachTestTempDir();

  /**
   * A small world: a resident echo, a herald that writes the blackboard and publishes, three readers of the news and
   * three askers that each ask the echo. Latencies and answers are drawn from each agent's seeded random stream.
   */
  async function scenario(seed: number, record: string) {
    const clock = simulatedClock();
    const script = (request: ModelRequest): ModelReply | string => {
      const roll = Math.floor(request.random!() * 1_000);
      const last = lastMessage(request);
      const [read] = last.role === 'user' ? readMessages(last.content) : [];
      switch (request.agentName) {
        case 'echo':
          if (read) return callTools(toolCall('reply', { content: `echo ${roll}: ${read.content}` }, `r${roll}`));
          return `echo ready ${roll}`;
        case 'reader':
          return read ? `noted ${roll}` : `reading ${roll}`;
        case 'herald':
          if (last.role === 'user') {
            return callTools(
              toolCall('blackboard_write', { key: 'headline', value: { roll } }, 'write'),
              toolCall('publish', { topic: 'news', content: `news ${roll}` }, 'publish'),
            );
          }
          return `published ${roll}`;
        default:
          if (last.role === 'user') return callTools(toolCall('send_message', { to: 'echo', content: `question ${roll}`, expect_reply: true, timeout_ms: 5_000 }, 'ask'));
          return `answered ${roll}`;
      }
    };
    const model = new ScriptedModel(script, { latencyMs: (request) => 10 + Math.floor(request.random!() * 90) });
    const agents = [
      resident('echo', ['reply']),
      resident('reader', [], { subscribe: ['news'] }),
      worker('herald', ['publish', 'blackboard_write']),
      worker('asker', ['send_message']),
    ];
    const runtime = createRuntime({ model, agents, clock, seed, record, projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Echo.');
    const readers = [1, 2, 3].map(() => runtime.spawn('reader', 'Read.'));
    const askers = [1, 2, 3].map((n) => runtime.spawn('asker', `Ask question ${n}.`));
    runtime.spawn('herald', 'Publish the news.');
    await runtime.runUntilIdle();
    for (const handle of [echo, ...readers]) runtime.stop(handle.id);
    const results = await Promise.all([echo, ...readers, ...askers].map((handle) => handle.result));
    await runtime.shutdown();
    const bytes = readFileSync(record);
    const recording = await readRecording(record);
    return {
      runId: runtime.runId,
      results,
      hash: createHash('sha256').update(bytes).digest('hex'),
      header: JSON.parse(bytes.toString('utf8').split('\n')[0]!) as unknown,
      recording,
      lines: recording.events,
    };
  }

  it('writes byte-identical event logs for the same seed in simulated time', async () => {
    const first = await scenario(7, join(dir.path, 'first.jsonl'));
    const second = await scenario(7, join(dir.path, 'second.jsonl'));

    expect(first.results.every((result) => result.status === 'completed')).toBe(true);
    expect(first.results.slice(4).map((result) => result.output)).toEqual([
      expect.stringMatching(/^answered \d+$/),
      expect.stringMatching(/^answered \d+$/),
      expect.stringMatching(/^answered \d+$/),
    ]);
    expect(first.header).toEqual({ type: 'recording', schemaVersion: RECORDING_SCHEMA_VERSION, runId: first.runId });
    expect(first.recording).toMatchObject({ schemaVersion: RECORDING_SCHEMA_VERSION, runId: first.runId });
    expect(first.lines.length).toBeGreaterThan(100);
    const types = new Set(first.lines.map((line) => line.type));
    for (const type of ['agent.waiting', 'message.sent', 'message.delivered', 'blackboard.changed', 'agent.completed']) expect(types).toContain(type);
    expect(second.hash).toBe(first.hash);
    expect(second.runId).toBe(first.runId);
    expect(second.results.map((result) => result.output)).toEqual(first.results.map((result) => result.output));
  });

  it('gives other agent ids, and another log, for another seed', async () => {
    const first = await scenario(7, join(dir.path, 'seven.jsonl'));
    const other = await scenario(8, join(dir.path, 'eight.jsonl'));

    const spawned = (run: typeof first) => run.lines.filter((line) => line.type === 'agent.spawned').map((line) => line.agentId);
    expect(spawned(other)).toHaveLength(spawned(first).length);
    expect(spawned(other).filter((id) => spawned(first).includes(id))).toEqual([]);
    expect(other.runId).not.toBe(first.runId);
    expect(other.hash).not.toBe(first.hash);
  });
});

/** The real clock, with the host timers it has set and not yet fired or cleared. */
function hostTimers() {
  const live = new Set<NodeJS.Timeout>();
  const clock: TroupeClock = {
    now: () => performance.now(),
    setTimeout: (fn, ms) => {
      const timer = setTimeout(() => {
        live.delete(timer);
        fn();
      }, ms);
      live.add(timer);
      return timer;
    },
    clearTimeout: (timer: NodeJS.Timeout) => {
      live.delete(timer);
      clearTimeout(timer);
    },
  };
  return { clock, live };
}
