// Restarts of failed agents (issue 14, supervision): `restart: 'on-failure'` with an intensity on the runtime's clock,
// escalation past it, the reasons that never restart, restart storms, one-for-all in the parallel pattern, and the run
// limits across restarts. Everything runs on a TestClock with scripted models.
import { describe, expect, it } from 'vitest';
import {
  ConfigurationError,
  createRuntime,
  defineAgent,
  formatEvent,
  formatTimeline,
  InvalidAgentError,
  parallel,
  parseAgentFile,
  step,
  type ModelRequest,
  type RestartIntensity,
  type TroupeEvent,
} from 'troupe';
import { advanceUntilSettled, assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { collect, echoTool, leader, ofType, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

/** A worker that restarts on failure (with this intensity, if given). */
function flaky(name = 'worker', restartIntensity?: { max?: number; withinMs?: number }) {
  return defineAgent({ ...worker(name), restart: 'on-failure', ...(restartIntensity ? { restartIntensity } : {}) });
}

/** The types of one agent's lifecycle events, in order. */
function lifecycle(events: readonly TroupeEvent[], agentId: string): string[] {
  const kept = new Set(['agent.spawned', 'agent.completed', 'agent.failed', 'agent.restarted', 'agent.escalated']);
  return events.filter((event) => event.agentId === agentId && kept.has(event.type)).map((event) => event.type);
}

const down = () => new Error('The model is down.');

describe('an agent that restarts on failure', () => {
  it('is started again under its id after an error, and its caller sees only the attempt that completed', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ worker: [down(), 'Done on the second try.'] });
    const runtime = createRuntime({ model, agents: [flaky()], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const handle = runtime.spawn('worker', 'Do it.');
    const result = await advanceUntilSettled(clock, handle.result);

    expect(result).toMatchObject({ id: handle.id, status: 'completed', output: 'Done on the second try.' });
    expect(lifecycle(events, handle.id)).toEqual(['agent.spawned', 'agent.failed', 'agent.restarted', 'agent.spawned', 'agent.completed']);
    expect(ofType(events, 'agent.restarted')[0]).toMatchObject({ attempt: 2, reason: 'error', error: { code: 'model_call_failed' } });
    expect(ofType(events, 'agent.spawned')[1]).toMatchObject({ agentId: handle.id, attempt: 2, task: 'Do it.' });
    // The new attempt starts fresh from its task, not from the failed conversation.
    expect(model.calls.map((call) => call.messages.filter((message) => message.role !== 'system').length)).toEqual([1, 1]);
    // The result counts both attempts; the metrics count the agent once, completed.
    expect(result.turns).toBe(2);
    expect(runtime.metrics().total).toMatchObject({ agentsSpawned: 1, agentsCompleted: 1, agentsFailed: 0 });
    expect(runtime.record(handle.id)).toMatchObject({ state: 'completed', run: 2 });
    // The views say so: a log line per restart, and the timeline's row counts them.
    expect(formatEvent(ofType(events, 'agent.restarted')[0]!)).toContain('↻ restarting (attempt 2) after error');
    expect(formatEvent(ofType(events, 'agent.spawned')[1]!)).toContain('restarted (attempt 2)');
    expect(formatTimeline(events)).toContain('ok (restarted 1×)');
    await runtime.shutdown();
  });

  it('restarts after a timeout too, and a delegating parent waits for the attempt that completes (its slot lent)', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        lead: [callTools(assignCall('worker', 'Count.')), (request: ModelRequest) => `Lead got: ${lastTool(request)}`],
        worker: ['Seven.'],
      },
      // The worker's first call would answer after its idle timeout: it fails with `timeout` (the step is used by the
      // reply that comes, the second attempt's).
      { latencyMs: (request, index) => (request.agentName === 'worker' && index === 1 ? 5_000 : 10) },
    );
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { subagents: ['worker'] }), defineAgent({ ...flaky(), idleTimeoutMs: 1_000 })],
      clock,
      maxParallel: 1, // the lead must lend its slot to each attempt, or the restart would never run
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));

    expect(result).toMatchObject({ status: 'completed' });
    expect(result.output).toMatch(/^Lead got: Seven\./);
    expect(ofType(events, 'agent.restarted').map((event) => [event.reason, event.attempt])).toEqual([['timeout', 2]]);
    await runtime.shutdown();
  });

  it('escalates past its intensity: the caller gets the failure as it is, and agent.escalated says so', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('worker', 'Count.')), (request: ModelRequest) => `Lead got: ${lastTool(request)}`],
      worker: [down(), down(), down()],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['worker'] }), flaky('worker', { max: 2 })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));

    const workerId = ofType(events, 'agent.spawned').find((event) => event.name === 'worker')!.agentId;
    expect(lifecycle(events, workerId)).toEqual([
      'agent.spawned', 'agent.failed', 'agent.restarted', 'agent.spawned', 'agent.failed', 'agent.restarted', 'agent.spawned', 'agent.failed', 'agent.escalated',
    ]);
    expect(ofType(events, 'agent.escalated')[0]).toMatchObject({ agentId: workerId, restarts: 2, max: 2, withinMs: 60_000, reason: 'error' });
    expect(ofType(events, 'agent.escalated')[0]!.refused).toBeUndefined();
    expect(formatEvent(ofType(events, 'agent.escalated')[0]!)).toContain('⇑ escalated (error): 2 restarts within 60000 ms, at most 2');
    expect(result.output).toMatch(/^Lead got: Agent worker \(agent:worker:\w+\) failed \(error\)/);
    expect(result.output).toContain('The model is down.');
    expect(runtime.metrics().total).toMatchObject({ agentsSpawned: 2, agentsFailed: 1, agentsCompleted: 1 });
    await runtime.shutdown();
  });

  it('counts restarts in a window on the runtime clock: failures further apart than withinMs restart without end', async () => {
    const clock = simulatedClock();
    // Every attempt fails after 2 s: with one restart allowed per second, each failure finds the window empty.
    const model = scriptedPerAgent({ worker: [down(), down(), down(), down(), 'At last.'] }, { latencyMs: 2_000 });
    const runtime = createRuntime({ model, agents: [flaky('worker', { max: 1, withinMs: 1_000 })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'completed', output: 'At last.' });
    expect(ofType(events, 'agent.restarted').map((event) => event.at)).toEqual([2_000, 4_000, 6_000, 8_000]);
    expect(ofType(events, 'agent.escalated')).toEqual([]);
    await runtime.shutdown();
  });

  it('escalates the same failures when they come within the window', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ worker: [down(), down()] }, { latencyMs: 200 });
    const runtime = createRuntime({ model, agents: [flaky('worker', { max: 1, withinMs: 1_000 })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));

    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(ofType(events, 'agent.restarted').map((event) => event.at)).toEqual([200]);
    expect(ofType(events, 'agent.escalated').map((event) => [event.at, event.restarts])).toEqual([[400, 1]]);
    await runtime.shutdown();
  });
});

describe('failures a restart does not mend', () => {
  it('are not restarted: cancelled, budget, max_turns', async () => {
    const clock = simulatedClock();
    const { tool } = echoTool();
    // Not a checked script: the spender's budget stops it before its last step.
    const model = ScriptedModel.perAgent({
      slow: ['Never heard.'],
      spender: [callTools(toolCall('echo', { text: 'a' })), 'Never reached.'],
      looper: [callTools(toolCall('echo', { text: 'b' }))],
    }, { latencyMs: (request) => (request.agentName === 'slow' ? 10_000 : 10) });
    const agents = ['slow', 'spender', 'looper'].map((name) => defineAgent({ ...worker(name, ['echo']), restart: 'on-failure' }));
    const runtime = createRuntime({ model, agents, tools: [tool], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const slow = runtime.spawn('slow', 'Wait.');
    const spender = runtime.spawn('spender', 'Spend.', { budget: { maxTurns: 1 } });
    const looper = runtime.spawn('looper', 'Loop.', { maxTurns: 1 });
    clock.increment(100);
    runtime.cancel(slow.id);
    const results = await advanceUntilSettled(clock, Promise.all([slow.result, spender.result, looper.result]));

    expect(results.map((result) => result.reason)).toEqual(['cancelled', 'budget', 'max_turns']);
    expect(ofType(events, 'agent.restarted')).toEqual([]);
    expect(ofType(events, 'agent.escalated')).toEqual([]);
    await runtime.shutdown();
  });

  it('nor is a failure of an agent whose spawn says never, over its definition', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: scriptedPerAgent({ worker: [down()] }), agents: [flaky()], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.', { restart: 'never' }));
    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(ofType(events, 'agent.restarted')).toEqual([]);
    await runtime.shutdown();
  });
});

describe('a restart storm', () => {
  it('ends with every call answered and at most max restarts per agent, under one slot', async () => {
    const clock = simulatedClock();
    const leads = 20;
    const model = new ScriptedModel((request) => {
      if (request.agentName === 'worker') throw down();
      return lastTool(request) === undefined ? callTools(assignCall('worker', 'Try.')) : 'Reported.';
    }, { latencyMs: 5 });
    const runtime = createRuntime({
      model,
      agents: [leader('lead', { subagents: ['worker'] }), flaky('worker', { max: 3, withinMs: 60_000 })],
      clock,
      maxParallel: 1,
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);

    const results = await advanceUntilSettled(clock, Promise.all(Array.from({ length: leads }, () => runtime.run('lead', 'Go.'))));

    expect(results.every((result) => result.status === 'completed' && result.output === 'Reported.')).toBe(true);
    expect(ofType(events, 'agent.restarted')).toHaveLength(leads * 3);
    expect(ofType(events, 'agent.escalated')).toHaveLength(leads);
    const perWorker = new Map<string, number>();
    for (const event of ofType(events, 'agent.restarted')) perWorker.set(event.agentId, (perWorker.get(event.agentId) ?? 0) + 1);
    expect([...perWorker.values()].every((count) => count === 3)).toBe(true);
    expect(runtime.record(results[0]!.id)?.state).toBe('completed');
    await runtime.shutdown();
  });
});

describe('one-for-all in the parallel pattern', () => {
  it('restarts the steps still running with the one that failed; steps that completed keep their answers', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      // (A step is used when its reply comes: the slow step's first call, cancelled, uses none.)
      { flaky: [down(), 'Flaky done.'], slow: ['Slow done.'], quick: ['Quick done.'] },
      { latencyMs: (request) => ({ flaky: 50, slow: 1_000, quick: 10 })[request.agentName] ?? 10 },
    );
    const agents = ['flaky', 'slow', 'quick'].map((name) => worker(name));
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const pattern = parallel([step('flaky', 'A.'), step('slow', 'B.'), step('quick', 'C.')], { restart: 'one-for-all' });

    const result = await advanceUntilSettled(clock, pattern.run(runtime));

    expect(result).toMatchObject({ status: 'completed' });
    expect(result.output).toBe('[1] flaky\nFlaky done.\n\n[2] slow\nSlow done.\n\n[3] quick\nQuick done.');
    const idOf = (name: string) => ofType(events, 'agent.spawned').find((event) => event.name === name)!.agentId;
    const restarted = ofType(events, 'agent.restarted');
    expect(restarted.map((event) => [event.name, event.reason, event.by ?? null])).toEqual([
      ['flaky', 'error', null],
      ['slow', 'cancelled', idOf('flaky')],
    ]);
    expect(lifecycle(events, idOf('quick'))).toEqual(['agent.spawned', 'agent.completed']);
    await runtime.shutdown();
  });

  it('counts the steps restarts together, and past the group intensity the failure stops the group', async () => {
    const clock = simulatedClock();
    let bCalls = 0;
    // Not a checked script: a's second attempt is cancelled when the group fails.
    const model = ScriptedModel.perAgent(
      { a: [down(), 'A done.'], b: [down()] },
      { latencyMs: (request) => (request.agentName === 'a' ? 50 : (bCalls += 1) === 1 ? 1_000 : 20) },
    );
    const runtime = createRuntime({ model, agents: [worker('a'), worker('b')], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const pattern = parallel([step('a', 'A.'), step('b', 'B.')], { restart: 'one-for-all', restartIntensity: { max: 1 } });

    const result = await advanceUntilSettled(clock, pattern.run(runtime));

    // a fails (restart 1 of 1; b is restarted with it), then b fails: the group's one restart is spent.
    expect(result).toMatchObject({ status: 'failed' });
    expect(result.error?.message).toContain('Step 2 (b) failed');
    expect(ofType(events, 'agent.restarted').map((event) => event.name)).toEqual(['a', 'b']);
    expect(ofType(events, 'agent.escalated').map((event) => [event.name, event.restarts, event.max])).toEqual([['b', 1, 1]]);
    await runtime.shutdown();
  });
});

describe('run limits across restarts', () => {
  it('maxAgents: a restart counts as an agent started, and one past the limit escalates', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('worker', 'Count.')), (request: ModelRequest) => `Lead got: ${lastTool(request)}`],
      worker: [down(), down()],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['worker'] }), flaky()], clock, maxAgents: 3, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));

    // lead + worker + one restart = 3 agents: the second restart is refused.
    expect(ofType(events, 'agent.restarted')).toHaveLength(1);
    expect(ofType(events, 'agent.escalated')[0]).toMatchObject({ restarts: 1, max: 3 });
    expect(ofType(events, 'agent.escalated')[0]!.refused).toMatch(/maxAgents/);
    expect(result.output).toMatch(/^Lead got: Agent worker \(agent:worker:\w+\) failed \(error\)/);
    await runtime.shutdown();
  });

  it('budgets: the attempts spend from the same budget, and a spent one refuses the next attempt', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ worker: [down(), down()] });
    const runtime = createRuntime({ model, agents: [flaky('worker', { max: 5 })], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.', { budget: { maxTurns: 2 } }));

    expect(result).toMatchObject({ status: 'failed', reason: 'error', turns: 2 });
    expect(ofType(events, 'model.request')).toHaveLength(2);
    expect(ofType(events, 'agent.escalated')[0]!.refused).toMatch(/budget/);
    await runtime.shutdown();
  });
});

describe('restart options', () => {
  it('are checked on the definition, the agent file, the spawn and the pattern', () => {
    expect(() => defineAgent({ ...worker('x'), restart: 'always' as never })).toThrow(InvalidAgentError);
    expect(() => defineAgent({ ...worker('x'), restartIntensity: { max: -1 } })).toThrow(/restartIntensity.max/);
    expect(() => defineAgent({ ...worker('x'), restartIntensity: { withinMs: 0 } })).toThrow(/restartIntensity.withinMs/);
    expect(parseAgentFile('a.md', '---\nname: a\ndescription: A.\nrestart: on-failure\nrestartIntensity:\n  max: 5\n  withinMs: 1000\n---\nYou are a.')).toMatchObject({
      restart: 'on-failure',
      restartIntensity: { max: 5, withinMs: 1_000 },
    });
    expect(() => parseAgentFile('a.md', '---\nname: a\ndescription: A.\nrestart: sometimes\n---\nYou are a.')).toThrow(/restart/);
    expect(() => parallel(['a'], { restart: 'one-for-one' as never })).toThrow(ConfigurationError);
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [worker()], projectAgentDir: false });
    expect(() => runtime.spawn('worker', 'Go.', { restart: 'on-error' as never })).toThrow(ConfigurationError);
    expect(() => runtime.spawn('worker', 'Go.', { restartIntensity: { max: 1.5 } })).toThrow(/restartIntensity.max/);
    // A field nobody reads is refused: ignored, it would leave the default of 3 restarts in force.
    const misspelled = { maxRestarts: 10 } as RestartIntensity;
    expect(() => runtime.spawn('worker', 'Go.', { restart: 'on-failure', restartIntensity: misspelled })).toThrow(
      'restartIntensity: unknown field "maxRestarts"; its fields are max and withinMs.',
    );
    expect(() => defineAgent({ ...worker('x'), restartIntensity: misspelled })).toThrow(InvalidAgentError);
    expect(() => parallel(['a'], { restart: 'one-for-all', restartIntensity: { withinMS: 1_000 } as RestartIntensity })).toThrow(
      /unknown field "withinMS" \(did you mean "withinMs"\?\)/,
    );
    expect(() => runtime.group('g', 'Go.', { restart: 'rest-for-one' as never })).toThrow(ConfigurationError);
    return runtime.shutdown();
  });
});

/** The content of a request's last tool message, or undefined. */
function lastTool(request: ModelRequest): string | undefined {
  const found = [...request.messages].reverse().find((message) => message.role === 'tool');
  return found?.role === 'tool' ? found.content : undefined;
}
