import { describe, expect, it } from 'vitest';
import { SimulatedClock, type InspectionEvent } from 'xstate';
import {
  ConfigurationError,
  createRuntime,
  defineAgent,
  defineTool,
  InvalidAgentError,
  InvalidToolError,
  RuntimeClosedError,
  TroupeEvent,
  UnknownAgentError,
  type ModelReply,
  type ModelRequest,
} from 'troupe';
import { ScriptedModel, advanceUntilSettled, nextTimerAt, callTools, toolCall } from 'troupe/testing';
import { collect, echoTool, scripted, simulatedClock, worker } from './stubs.js';

describe('the supervisor', () => {
  it('runs at most maxParallel agents at once: 20 agents under a cap of 3 peak at exactly 3', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'done', { latencyMs: (_request, index) => 100 + (index % 7) * 10 });
    const runtime = createRuntime({ model, agents: [worker()], clock, maxParallel: 3 });
    let running = 0;
    let peak = 0;
    runtime.events$.subscribe((event) => {
      if (event.type === 'agent.started') peak = Math.max(peak, ++running);
      if (event.type === 'agent.completed' || event.type === 'agent.failed') running -= 1;
    });

    const results = await advanceUntilSettled(
      clock,
      Promise.all(Array.from({ length: 20 }, (_, index) => runtime.run('worker', `Task ${index}`))),
    );

    expect(results.every((result) => result.status === 'completed')).toBe(true);
    expect(peak).toBe(3);
    expect(runtime.metrics().total).toMatchObject({ peakRunning: 3, agentsSpawned: 20, agentsCompleted: 20, agentsRunning: 0 });
    await runtime.shutdown();
  });

  it('starts waiting agents first come, first served, unless a priority says otherwise', async () => {
    const model = new ScriptedModel(() => 'done');
    const runtime = createRuntime({ model, agents: [worker()], maxParallel: 1 });
    const started: string[] = [];
    runtime.events$.subscribe((event) => event.type === 'agent.spawned' || event.type !== 'agent.started' || started.push(event.agentId));
    const first = runtime.spawn('worker', 'first');
    const second = runtime.spawn('worker', 'second');
    const urgent = runtime.spawn('worker', 'urgent', { priority: 5 });
    const third = runtime.spawn('worker', 'third');
    await runtime.idle();
    expect(started).toEqual([first.id, urgent.id, second.id, third.id]);
    await runtime.shutdown();
  });

  it('gives a free slot to an agent as it is made, and gets it back when it ends, for a resumed agent too', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel((request) => `done: ${String(request.messages.at(-1)?.content)}`, { latencyMs: 100 });
    const runtime = createRuntime({ model, agents: [worker()], clock, maxParallel: 1, projectAgentDir: false });
    const first = await advanceUntilSettled(clock, runtime.run('worker', 'first'));
    // The ended agent comes back under its own id (its record is used again), takes the free slot and holds it: the
    // next agent waits for it, then gets the slot it gives back.
    const resumed = await runtime.resume(first.id, 'again');
    expect(runtime.record(first.id)?.state).toBe('running');
    const next = runtime.spawn('worker', 'next');
    expect(runtime.record(next.id)?.state).toBe('pending');
    const results = await advanceUntilSettled(clock, Promise.all([resumed.result, next.result, runtime.run('worker', 'last')]));
    expect(results.map((result) => [result.status, result.output])).toEqual([
      ['completed', 'done: again'],
      ['completed', 'done: next'],
      ['completed', 'done: last'],
    ]);
    expect(runtime.metrics().total).toMatchObject({ peakRunning: 1, agentsRunning: 0 });
    await runtime.shutdown();
  });

  // Unwatched, an agent's work has no worker actor (the runtime keeps it by agent id); under an inspector it has one.
  it.each([
    ['without an inspector', undefined],
    ['under an inspector', () => {}],
  ])('aborts the model call of an agent cancelled while it thinks, and drops its late answer (%s)', async (_, inspect) => {
    const calls: { signal: AbortSignal; answer: (reply: ModelReply) => void }[] = [];
    const model = {
      name: 'held',
      complete: (request: { signal: AbortSignal }) => new Promise<ModelReply>((answer) => calls.push({ signal: request.signal, answer })),
    };
    const runtime = createRuntime({ model, agents: [worker()], projectAgentDir: false, ...(inspect ? { inspect } : {}) });
    const [cancelled, kept] = [runtime.spawn('worker', 'Think.'), runtime.spawn('worker', 'Think too.')];
    while (calls.length < 2) await new Promise((resolve) => setImmediate(resolve));
    const after = collect(runtime.events$);
    runtime.cancel(cancelled.id);
    expect(await cancelled.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(calls.map((call) => call.signal.aborted)).toEqual([true, false]);
    calls[0]!.answer({ content: 'Too late.' });
    calls[1]!.answer({ content: 'In time.' });
    expect(await kept.result).toMatchObject({ status: 'completed', output: 'In time.' });
    // Nothing of the late answer reached the cancelled agent: no reply announced for it after its end.
    expect(after.filter((event) => event.agentId === cancelled.id).map((event) => event.type)).toEqual(['agent.failed']);
    await runtime.shutdown();
  });

  it("gives a launch its own limits over its definition's, and never lends them to the next launch", async () => {
    const looper = defineAgent({ name: 'looper', description: 'Loops.', systemPrompt: 'Loop.', tools: ['echo'], maxTurns: 3 });
    const model = new ScriptedModel(() => callTools(toolCall('echo', { text: 'again' })));
    const runtime = createRuntime({ model, agents: [looper], tools: [echoTool().tool], projectAgentDir: false });
    // The definition's limits are made once and serve every launch that overrides none of them.
    const results = [
      await runtime.run('looper', 'Loop.', { maxTurns: 1 }),
      await runtime.run('looper', 'Loop.'),
      await runtime.run('looper', 'Loop.', { maxTurns: 2 }),
      await runtime.run('looper', 'Loop.'),
    ];
    expect(results.map((result) => [result.reason, result.turns])).toEqual([
      ['max_turns', 1],
      ['max_turns', 3],
      ['max_turns', 2],
      ['max_turns', 3],
    ]);
    await runtime.shutdown();
  });

  it('gives each agent a readable id and records its parent and depth', async () => {
    const model = new ScriptedModel(() => 'ok');
    const runtime = createRuntime({ model, agents: [worker('lead'), worker('helper')] });
    const lead = runtime.spawn('lead', 'Lead.');
    const helper = runtime.spawn('helper', 'Help.', { parentId: lead.id, toolCallId: 'call_7' });
    const events = collect(helper.events$);
    await runtime.idle();
    expect(lead.id).toMatch(/^agent:lead:[0-9A-Za-z]{10}$/);
    expect(runtime.record(helper.id)).toMatchObject({ name: 'helper', parentId: lead.id, depth: 1, state: 'completed' });
    expect(events[0]).toMatchObject({ type: 'agent.spawned', parentId: lead.id, toolCallId: 'call_7', depth: 1 });
    await runtime.shutdown();
  });

  it('cancels an agent and all its descendants, queued ones included', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'late', { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [worker()], clock, maxParallel: 3 });
    const root = runtime.spawn('worker', 'root');
    const child = runtime.spawn('worker', 'child', { parentId: root.id });
    const grandchild = runtime.spawn('worker', 'grandchild', { parentId: child.id });
    const queued = runtime.spawn('worker', 'queued', { parentId: child.id });
    const bystander = runtime.spawn('worker', 'bystander');
    expect(runtime.record(queued.id)?.state).toBe('pending');

    runtime.cancel(root.id);
    const results = await Promise.all([root, child, grandchild, queued].map((handle) => handle.result));

    expect(results.map((result) => result.reason)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(await advanceUntilSettled(clock, bystander.result)).toMatchObject({ status: 'completed' });
    await runtime.shutdown();
  });

  it('leaves no actor or timer behind after shutdown, and refuses new work', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(() => 'slow', { latencyMs: 60_000 });
    const runtime = createRuntime({ model, agents: [worker()], clock, maxParallel: 2 });
    const handles = Array.from({ length: 4 }, (_, index) => runtime.spawn('worker', `Task ${index}`));
    let completed = false;
    runtime.events$.subscribe({ complete: () => (completed = true) });
    expect(nextTimerAt(clock)).toBeDefined();

    await runtime.shutdown();

    const results = await Promise.all(handles.map((handle) => handle.result));
    expect(results.map((result) => result.reason)).toEqual(['cancelled', 'cancelled', 'cancelled', 'cancelled']);
    expect(nextTimerAt(clock)).toBeUndefined();
    expect(completed).toBe(true);
    expect(() => runtime.spawn('worker', 'more')).toThrow(RuntimeClosedError);
  });

  it('refuses bad requests with typed errors', async () => {
    const runtime = createRuntime({ model: scripted([]), agents: [worker()] });
    expect(() => runtime.spawn('nobody', 'x')).toThrow(UnknownAgentError);
    expect(() => runtime.spawn('worker', '  ')).toThrow(ConfigurationError);
    expect(() => runtime.cancel('agent:worker:missing')).toThrow(UnknownAgentError);
    expect(() => runtime.spawn('worker', 'x', { parentId: 'agent:ghost:1' })).toThrow(UnknownAgentError);
    // run returns a promise: what keeps an agent from being spawned rejects it, for .catch() to hear.
    const refused = runtime.run('nobody', 'x');
    await expect(refused).rejects.toThrow(UnknownAgentError);
    await runtime.shutdown();
    await expect(runtime.run('worker', 'x')).rejects.toThrow(RuntimeClosedError);
    expect(() => createRuntime({ agents: [worker()] })).toThrow(/has no model/);
    // The class rather than a clock (a scenario's options are JavaScript, unchecked): a clear error, not XState's.
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], clock: SimulatedClock as never })).toThrow(
      new ConfigurationError('clock must be a clock (an object with setTimeout and clearTimeout), such as new SimulatedClock() from xstate.'),
    );
    expect(() => createRuntime({ model: scripted([]), agents: [worker('a', ['missing'])] })).toThrow(
      /lists the tool "missing"/,
    );
    expect(() => createRuntime({ model: scripted([]), agents: [worker(), worker()] })).toThrow(/Two agents/);
    // Below one tool call at a time no call could ever run: refused as the runtime is made, not in every batch.
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], maxToolConcurrency: 0.5 })).toThrow(
      new ConfigurationError('maxToolConcurrency must be a number ≥ 1.'),
    );
  });

  it('refuses a definition that is not one, and tools that are not a list, with typed errors', () => {
    expect(() => defineAgent(null as never)).toThrow(InvalidAgentError);
    // A string would be read as a list of one-letter tool names.
    expect(() => defineAgent({ name: 'a', description: 'A.', systemPrompt: 'A.', tools: 'grep' as never })).toThrow(/tools must be a list/);
    expect(() => defineTool(null as never)).toThrow(InvalidToolError);
    expect(() => defineTool(undefined as never)).toThrow(/defineTool takes a tool definition/);
  });

  it('refuses an idle timeout given as text, which the clock would add to the time as text', () => {
    // From a config file, say: '1000' passed a check of `> 0`, and an idle timer set at 100 ms was due at 1,001,000 ms.
    expect(() => defineAgent({ ...worker('slow'), idleTimeoutMs: '1000' as never })).toThrow(InvalidAgentError);
    expect(() => defineAgent({ ...worker('slow'), idleTimeoutMs: '1000' as never })).toThrow(/idleTimeoutMs must be a positive number/);
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], pool: { idleTimeoutMs: '60000' as never } })).toThrow(
      new ConfigurationError('pool.idleTimeoutMs must be a positive number.'),
    );
  });
});

describe('nested options', () => {
  it("refuses a misspelled field of an inbox or a budget, wherever one is given, rather than keep the default", async () => {
    const inboxTypo = "inbox: unknown field \"capcity\" (did you mean \"capacity\"?); its fields are capacity and overflow.";
    const budgetTypo = 'budget: unknown field "maxToken" (did you mean "maxTokens"?); its fields are maxTurns, maxTokens and maxCostUsd.';
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], inbox: { capcity: 2 } as never })).toThrow(new ConfigurationError(inboxTypo));
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], budget: { maxToken: 1 } as never })).toThrow(new ConfigurationError(budgetTypo));
    expect(() => defineAgent({ ...worker('a'), inbox: { capcity: 2 } as never })).toThrow(InvalidAgentError);
    expect(() => defineAgent({ ...worker('a'), inbox: { capcity: 2 } as never })).toThrow(inboxTypo);

    const runtime = createRuntime({ model: scripted([]), agents: [worker()] });
    expect(() => runtime.spawn('worker', 'Go.', { inbox: { capcity: 2 } as never })).toThrow(new ConfigurationError(inboxTypo));
    expect(() => runtime.spawn('worker', 'Go.', { budget: { maxToken: 1 } as never })).toThrow(new ConfigurationError(budgetTypo));
    // The fields it reads still pass.
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], inbox: { capacity: 2, overflow: 'drop-oldest' }, budget: { maxTurns: 3, maxTokens: 10, maxCostUsd: 1 } })).not.toThrow();
    await runtime.shutdown();
  });
});

describe('events and metrics', () => {
  it.each([false, true])(
    "counts an agent's turns and running time from its first turn, begun at once or after a wait for a slot (inspected: %s)",
    async (inspected) => {
      // Unwatched, the first agent is made in `running` with its first turn begun in its initial context; the second,
      // and every agent under an inspector, begins its turn on `START`.
      const clock = simulatedClock();
      const reply = (request: ModelRequest) => (request.messages.some((message) => message.role === 'tool') ? 'done' : callTools(toolCall('echo', { text: 'a' })));
      const model = new ScriptedModel(reply, { latencyMs: 250 });
      const inspect = inspected ? () => {} : undefined;
      const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [echoTool().tool], clock, maxParallel: 1, projectAgentDir: false, inspect });
      const results = await advanceUntilSettled(clock, Promise.all([runtime.run('worker', 'First.'), runtime.run('worker', 'Second.')]));

      expect(results.map((result) => [result.status, result.turns, result.metrics.own.durationMs])).toEqual([
        ['completed', 2, 500],
        ['completed', 2, 500],
      ]);
      await runtime.shutdown();
    },
  );

  it('totals equal the sum of every reply usage and cost', async () => {
    const replies: ModelReply[] = [];
    let n = 0;
    const model = new ScriptedModel(
      (request) => {
        n += 1;
        const reply: ModelReply =
          request.messages.length < 3
            ? { ...callTools(toolCall('echo', { text: `t${n}` })), usage: { inputTokens: 100 + n, outputTokens: 10 + n } }
            : { content: `answer ${n}`, usage: { inputTokens: 200 + n, outputTokens: 20 + n } };
        replies.push(reply);
        return reply;
      },
      { model: 'gpt-4o-mini' },
    );
    const { tool } = echoTool();
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('worker', 'lead');
    runtime.spawn('worker', 'child', { parentId: lead.id });
    runtime.spawn('worker', 'other');
    await runtime.idle();

    const input = replies.reduce((sum, reply) => sum + reply.usage!.inputTokens, 0);
    const output = replies.reduce((sum, reply) => sum + reply.usage!.outputTokens, 0);
    const cost = (input * 0.15 + output * 0.6) / 1_000_000;
    const { total, agents } = runtime.metrics();
    expect(total).toMatchObject({ inputTokens: input, outputTokens: output, modelCalls: 6, toolCalls: 3, agentsCompleted: 3 });
    expect(total.costUsd).toBeCloseTo(cost, 12);
    const costs = events.flatMap((event) => (event.type === 'model.response' ? [event.costUsd] : []));
    expect(costs.reduce((a, b) => a + b, 0)).toBeCloseTo(cost, 12);
    expect(agents[lead.id]!.subtree.modelCalls).toBe(4);
    expect(agents[lead.id]!.own.modelCalls).toBe(2);
    expect((await lead.result).metrics.own.modelCalls).toBe(2);
    for (const event of events) expect(TroupeEvent.safeParse(event).success).toBe(true);
    await runtime.shutdown();
  });

  it('refuses a price table that would make costs NaN or negative, naming the model', async () => {
    const make = (prices: unknown) => () => createRuntime({ model: new ScriptedModel([]), agents: [worker()], prices: prices as Record<string, { input: number; output: number }> });
    // Without the check: `{ input: 1 }` priced every reply at NaN, and the run's cost with it.
    expect(make({ m1: { input: 1 } })).toThrow(ConfigurationError);
    expect(make({ m1: { input: 1 } })).toThrow(/prices\["m1"\] must be \{ input, output \}/);
    expect(make({ m1: { input: -1, output: 2 } })).toThrow(ConfigurationError);
    expect(make({ m1: { input: '1', output: 2 } })).toThrow(ConfigurationError);
    expect(make({ m1: null })).toThrow(ConfigurationError);
    expect(make([])).toThrow(/prices must be an object/);
    await make({ m1: { input: 0, output: 0.5 } })().shutdown();
  });

  it('an inspect callback sees an actor for the supervisor and for every agent', async () => {
    const refs = new Set<{ systemId?: string; id: string }>();
    const inspect = (event: InspectionEvent) => {
      if (event.type === '@xstate.actor') refs.add(event.actorRef as unknown as { systemId?: string; id: string });
    };
    const runtime = createRuntime({ model: new ScriptedModel(() => 'hi'), agents: [worker()], inspect });
    const ids = await Promise.all([1, 2, 3].map((index) => runtime.run('worker', `Task ${index}`)));
    // An agent's actor id is its kind (`agent:<name>`); its own id is its systemId (set once the actor is made).
    const actors = new Set([...refs].map((ref) => ref.systemId ?? ref.id));
    expect(actors.has('supervisor')).toBe(true);
    expect([...actors].filter((id) => id.startsWith('agent:')).sort()).toEqual(ids.map(({ id }) => id).sort());
    await runtime.shutdown();
  });

  it("a handle's events$ sees its agent from the first event, and its sub-agents", async () => {
    const model = new ScriptedModel(() => 'ok');
    const runtime = createRuntime({ model, agents: [worker()] });
    const parent = runtime.spawn('worker', 'parent');
    const events = collect(parent.events$);
    const child = runtime.spawn('worker', 'child', { parentId: parent.id });
    await runtime.idle();
    expect(events[0]).toMatchObject({ type: 'agent.spawned', agentId: parent.id });
    expect(events.some((event) => event.agentId === child.id)).toBe(true);
    await runtime.shutdown();
  });

  it("a handle's events$ subscribed later, or again, sees its agent's events from then on, and none after it unsubscribes", async () => {
    const resident = defineAgent({ name: 'resident', description: 'Lives on.', systemPrompt: 'Answer.', resident: true });
    const runtime = createRuntime({ model: new ScriptedModel(() => 'noted'), agents: [resident], clock: simulatedClock() });
    const handle = runtime.spawn('resident', 'Wait for mail.');
    const other = runtime.spawn('resident', 'Wait too.');
    await runtime.runUntilIdle(); // past the tick in which they were spawned: nothing kept for a late subscriber
    const seen = (events: TroupeEvent[]) => events.filter((event) => event.type === 'message.delivered').map((event) => event.agentId);

    const first = collect(handle.events$);
    runtime.send(handle.id, 'one');
    runtime.send(other.id, 'one');
    await runtime.runUntilIdle();
    const second = collect(handle.events$);
    const watching = handle.events$.subscribe(() => {});
    watching.unsubscribe();
    runtime.send(handle.id, 'two');
    await runtime.runUntilIdle();

    expect(seen(first)).toEqual([handle.id, handle.id]);
    expect(seen(second)).toEqual([handle.id]);
    expect(first.every((event) => event.agentId === handle.id)).toBe(true);
    await runtime.shutdown();
  });

  it('uses an agent definition model and temperature over the runtime model', async () => {
    const own = scripted(['from own model']);
    const shared = scripted(['from shared']);
    const special = defineAgent({ name: 'special', description: 'S.', systemPrompt: 'S.', model: own });
    const named = defineAgent({ name: 'named', description: 'N.', systemPrompt: 'N.', model: 'gpt-4o', temperature: 0.2 });
    const runtime = createRuntime({ model: shared, agents: [special, named] });
    expect((await runtime.run('special', 'x')).output).toBe('from own model');
    expect(shared.calls).toHaveLength(0);
    expect((await runtime.run('named', 'x')).output).toBe('from shared');
    expect(shared.calls[0]).toMatchObject({ model: 'gpt-4o', temperature: 0.2, agentName: 'named' });
    await runtime.shutdown();
  });
});
