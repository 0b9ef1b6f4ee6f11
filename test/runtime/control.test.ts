// Lifecycle control from code (`cancel`, `stop`, `shutdown`) at the points of an agent's life where it waits: what
// every handle settles with, the order agents end in, and what a bad call says.
import { describe, expect, it } from 'vitest';
import { ConfigurationError, RuntimeClosedError, UndeliverableError, UnknownAgentError, UnknownRequestError, createRuntime, defineAgent, type ModelRequest } from 'troupe';
import { ScriptedModel, advanceUntilSettled, callTools, toolCall } from 'troupe/testing';
import { collect, hang, leader, ofType, simulatedClock, worker } from '../stubs.js';

const turnOf = (request: ModelRequest) => request.messages.filter((message) => message.role === 'assistant').length;

describe('shutdown', () => {
  it('ends sub-agents before the agents that wait for them, as a cancel does', async () => {
    // lead → helper → sub (each delegating and waiting), and a group with a member beside them.
    const lead = leader('lead', { subagents: ['helper'] });
    const helper = leader('helper', { subagents: ['sub'] });
    const sub = worker('sub', ['hang']);
    const model = new ScriptedModel((request: ModelRequest) => {
      if (turnOf(request) > 0) return 'never read';
      if (request.agentName === 'sub') return callTools(toolCall('hang', {}));
      const next = request.agentName === 'lead' ? 'helper' : 'sub';
      return callTools(toolCall('assign_task', { description: 'a part', agent: next, task: 'Do the part.' }));
    });
    const clock = simulatedClock();
    const runtime = createRuntime({ model, agents: [lead, helper, sub], tools: [hang], clock, seed: 3, projectAgentDir: false });
    const events = collect(runtime.events$);
    const led = runtime.run('lead', 'Lead.');
    const group = runtime.group('team', 'Work together.');
    const member = runtime.run('sub', 'Hang.', { parentId: group.id });
    // Until both `sub` agents hang in their tool.
    const hanging = new Promise<void>((resolve) => {
      let calls = 0;
      runtime.events$.subscribe((event) => {
        if (event.type === 'tool.call' && event.tool === 'hang' && ++calls === 2) resolve();
      });
    });
    await advanceUntilSettled(clock, hanging);
    expect(runtime.record(group.id)?.state).toBe('running');
    expect(ofType(events, 'agent.spawned')).toHaveLength(5);

    await runtime.shutdown();
    const ended = ofType(events, 'agent.failed').map((event) => event.agentId);
    expect(ended).toHaveLength(5);
    for (const id of ended) {
      const children = ofType(events, 'agent.spawned').filter((event) => event.parentId === id).map((event) => event.agentId);
      for (const child of children) expect(ended.indexOf(child), `${child} ends before ${id}`).toBeLessThan(ended.indexOf(id));
    }
    for (const result of [await led, await member, await group.result]) {
      expect(result).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled', message: 'The runtime shut down.' } });
    }
  });
});

describe('control calls with a bad argument', () => {
  it('refuse what is not an id with a ConfigurationError, an unknown id with UnknownAgentError, and leave an ended one', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(['Done.']), agents: [worker()], projectAgentDir: false });
    const handle = runtime.spawn('worker', 'Work.');
    for (const method of ['cancel', 'stop'] as const) {
      expect(() => runtime[method](handle as never)).toThrow(ConfigurationError);
      expect(() => runtime[method](handle as never)).toThrow(`runtime.${method}: id must be a non-empty string, not an object (pass the handle's id).`);
      expect(() => (runtime[method] as (id?: unknown) => void)()).toThrow(`runtime.${method}: id must be a non-empty string, not undefined.`);
      expect(() => runtime[method](42 as never)).toThrow(ConfigurationError);
      expect(() => runtime[method]('')).toThrow(ConfigurationError);
      expect(() => runtime[method]('agent:worker:none')).toThrow(UnknownAgentError);
    }
    expect(() => runtime.approve(undefined as never)).toThrow('runtime.approve: requestId must be a non-empty string, not undefined.');
    expect(() => runtime.deny(7 as never)).toThrow(ConfigurationError);
    expect(() => runtime.deny('approval:none', 7 as never)).toThrow('runtime.deny: reason must be a string, not 7.');
    expect(() => runtime.deny('approval:none')).toThrow(UnknownRequestError);
    expect(await handle.result).toMatchObject({ status: 'completed', output: 'Done.' });
    // An ended agent is left as it is.
    runtime.cancel(handle.id);
    runtime.stop(handle.id);
    expect(runtime.record(handle.id)?.state).toBe('completed');
    await runtime.shutdown();
  });
});

describe('a cancel or stop as a restartable agent fails', () => {
  // The first model call fails; a restart would run the agent again and answer.
  const failingOnce = () => {
    let calls = 0;
    return new ScriptedModel(() => {
      calls += 1;
      if (calls === 1) throw new Error('boom');
      return 'Answered after a restart.';
    });
  };

  for (const [heard, method] of [['agent.failed', 'cancel'], ['agent.failed', 'stop'], ['agent.restarted', 'cancel'], ['agent.restarted', 'stop']] as const) {
    it(`is not lost when made as ${heard} is heard (${method})`, async () => {
      const runtime = createRuntime({ model: failingOnce(), agents: [worker()], retry: { attempts: 1 }, projectAgentDir: false });
      const events = collect(runtime.events$);
      const handle = runtime.spawn('worker', 'Work.', { restart: 'on-failure' });
      runtime.events$.subscribe((event) => {
        if (event.type === heard) runtime[method](handle.id);
      });
      const result = await handle.result;
      expect(result.status).toBe('failed');
      if (heard === 'agent.failed') {
        // Its failed attempt had ended: that failure is the result, and nothing runs again.
        expect(result).toMatchObject({ reason: 'error', error: { code: 'model_call_failed' } });
        expect(ofType(events, 'agent.restarted')).toHaveLength(0);
      } else {
        // The new attempt was on its way: it gets the cancel or stop as it starts.
        expect(result).toMatchObject({ reason: 'cancelled', error: { code: 'cancelled' } });
        expect(ofType(events, 'agent.restarted')).toHaveLength(1);
        expect(ofType(events, 'agent.failed').map((event) => event.reason)).toEqual(['error', 'cancelled']);
      }
      expect(ofType(events, 'agent.completed')).toHaveLength(0);
      await runtime.shutdown();
    });
  }

  it('is not lost when the runtime is shut down as agent.restarted is heard: the new attempt is refused', async () => {
    const runtime = createRuntime({ model: failingOnce(), agents: [worker()], retry: { attempts: 1 }, projectAgentDir: false });
    const events = collect(runtime.events$);
    const handle = runtime.spawn('worker', 'Work.', { restart: 'on-failure' });
    const shutDown = new Promise<{ ended: Promise<void> }>((resolve) => {
      runtime.events$.subscribe((event) => {
        if (event.type === 'agent.restarted') resolve({ ended: runtime.shutdown() });
      });
    });
    let settled: unknown;
    void handle.result.then((result) => (settled = result));
    await (await shutDown).ended;
    // The new attempt could not start: its handle settles as a launch refused by the shutdown, and its session ended.
    expect(settled).toMatchObject({ status: 'failed', reason: 'cancelled', error: { code: 'cancelled', message: 'The runtime is shutting down.' } });
    expect((await runtime.sessions.get(handle.id))?.state).toBe('failed');
    expect(ofType(events, 'agent.restarted')).toHaveLength(1);
    expect(runtime.metrics().total).toMatchObject({ agentsFailed: 1, agentsRunning: 0 });
  });

  it('cancelling the lead as its sub-agent fails leaves no restarted sub-agent running under it', async () => {
    const lead = leader('lead', { subagents: ['worker'] });
    let workerCalls = 0;
    const model = new ScriptedModel((request: ModelRequest) => {
      if (request.agentName === 'lead') return callTools(toolCall('assign_task', { description: 'a part', agent: 'worker', task: 'Do it.' }));
      workerCalls += 1;
      if (workerCalls === 1) throw new Error('boom');
      return 'Done after a restart.';
    });
    const worker$ = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', restart: 'on-failure' });
    const runtime = createRuntime({ model, agents: [lead, worker$], retry: { attempts: 1 }, projectAgentDir: false });
    const events = collect(runtime.events$);
    const handle = runtime.spawn('lead', 'Lead.');
    runtime.events$.subscribe((event) => {
      if (event.type === 'agent.failed' && event.agentId.startsWith('agent:worker:')) runtime.cancel(handle.id);
    });
    expect(await handle.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    await runtime.idle();
    expect(workerCalls).toBe(1);
    expect(ofType(events, 'agent.restarted')).toHaveLength(0);
    expect(ofType(events, 'agent.spawned')).toHaveLength(2);
    await runtime.shutdown();
  });
});

describe('a group handle given bad arguments', () => {
  it('refuses them with a ConfigurationError and stays open, instead of ending with a result no schema allows', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [worker()], projectAgentDir: false });
    const events = collect(runtime.events$);
    expect(() => runtime.group('team', 'Work.', { restrat: 'one-for-all' } as never)).toThrow('group: unknown option "restrat" (did you mean "restart"?).');
    const group = runtime.group('team', 'Work.');
    expect(() => group.complete(42 as never)).toThrow('group.complete: the output must be a string, not 42.');
    expect(() => (group.complete as (output?: unknown) => void)()).toThrow(ConfigurationError);
    expect(() => group.fail('It broke.', 'broken' as never)).toThrow(
      'group.fail: the reason must be one of error, timeout, cancelled, max_turns, budget, denied, required_tools, not "broken".',
    );
    expect(() => group.fail({} as never)).toThrow(ConfigurationError);
    expect(() => group.fail('  ')).toThrow(ConfigurationError);
    expect(() => (group.fail as (error?: unknown) => void)()).toThrow(ConfigurationError);
    expect(group.open).toBe(true);
    // A step's error is taken as it is.
    group.fail({ code: 'max_turns', message: 'The step ran out of turns.', fault: 'user' }, 'max_turns');
    expect(await group.result).toMatchObject({ status: 'failed', reason: 'max_turns', error: { code: 'max_turns', fault: 'user' } });
    expect(ofType(events, 'agent.failed')).toHaveLength(1);
    await runtime.shutdown();
  });
});

describe('options of calls from code', () => {
  it('are refused when misspelled or out of range, rather than ignored', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(['Done.']), agents: [worker()], projectAgentDir: false });
    const handle = runtime.spawn('worker', 'Work.');
    // The tools' spelling (`timeout_ms`) would be ignored: a blocking wait of the default 30 s instead.
    await expect(runtime.taskOutput(handle.id, { blocking: true, timeout_ms: 100 } as never)).rejects.toThrow(
      'taskOutput: unknown option "timeout_ms" (did you mean "timeoutMs"?).',
    );
    await expect(runtime.taskOutput(handle.id, { blocking: true, timeoutMs: -5 })).rejects.toThrow('taskOutput: timeoutMs must be a positive, finite number, not -5.');
    await expect(runtime.taskOutput(handle.id, { blocking: 'yes' as never })).rejects.toThrow(ConfigurationError);
    await expect(runtime.request(handle.id, 'Hello?', { timeout: 5 } as never)).rejects.toThrow('request: unknown option "timeout" (did you mean "timeoutMs"?).');
    await expect(runtime.send(handle.id, 'Hello.', { reply_to: 'msg:1' } as never)).rejects.toThrow('send: unknown option "reply_to" (did you mean "replyTo"?).');
    await expect(runtime.publish('news', 'Hello.', { sender: 'runtime' } as never)).rejects.toThrow(ConfigurationError);
    await expect(runtime.runUntilIdle({ limit: 5 } as never)).rejects.toThrow('runUntilIdle: unknown option "limit" (did you mean "limitMs"?).');
    await expect(runtime.runUntilIdle({ limitMs: 'soon' as never })).rejects.toThrow('runUntilIdle: limitMs must be a positive number, not "soon".');
    expect(await runtime.taskOutput(handle.id, { blocking: true, timeoutMs: 60_000 })).toMatchObject({ status: 'completed', output: 'Done.' });
    await runtime.shutdown();
  });
});

describe('a runtime after shutdown', () => {
  it('refuses new work with RuntimeClosedError and still answers what it knows', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(['Done.']), agents: [worker()], projectAgentDir: false });
    const handle = runtime.spawn('worker', 'Work.');
    await handle.result;
    const [first, second] = [runtime.shutdown(), runtime.shutdown()];
    expect(first).toBe(second);
    await first;
    expect(() => runtime.spawn('worker', 'More.')).toThrow(RuntimeClosedError);
    await expect(runtime.run('worker', 'More.')).rejects.toThrow(RuntimeClosedError);
    expect(() => runtime.group('team', 'More.')).toThrow(RuntimeClosedError);
    await expect(runtime.resume(handle.id, 'More.')).rejects.toThrow(RuntimeClosedError);
    await expect(runtime.send(handle.id, 'Hello.')).rejects.toThrow(RuntimeClosedError);
    await expect(runtime.request(handle.id, 'Hello?')).rejects.toThrow(RuntimeClosedError);
    await expect(runtime.publish('news', 'Hello.')).rejects.toThrow(RuntimeClosedError);
    runtime.cancel(handle.id);
    runtime.stop(handle.id);
    expect(() => runtime.cancel('agent:worker:none')).toThrow(UnknownAgentError);
    expect(runtime.record(handle.id)?.state).toBe('completed');
    expect(runtime.metrics().total.agentsCompleted).toBe(1);
    expect(await runtime.taskOutput(handle.id)).toMatchObject({ status: 'completed', output: 'Done.' });
    expect((await runtime.sessions.get(handle.id))?.state).toBe('completed');
    await runtime.shutdown();
  });
});

describe('a message to a group', () => {
  it('is refused with an error that says it is a group, not that no agent has that name', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [worker()], projectAgentDir: false });
    const group = runtime.group('team', 'Work.');
    await expect(runtime.send(group.id, 'Hello.')).rejects.toThrow(`${group.id} is a group, which reads no messages: send to its members.`);
    await expect(runtime.send(group.id, 'Hello.')).rejects.toThrow(UndeliverableError);
    group.complete('Done.');
    await runtime.shutdown();
  });
});
