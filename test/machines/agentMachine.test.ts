import { describe, expect, it } from 'vitest';
import { createActor, type InspectionEvent } from 'xstate';
import { z } from 'zod';
import { AbortedError, createRuntime, defineAgent, defineTool, ModelError, type Tool, type ToolCall, type TroupeEvent } from 'troupe';
import { ScriptedModel, advanceUntilSettled, callTools, toolCall } from 'troupe/testing';
import { agentMachine } from '../../src/machines/agentMachine.js';
import { collect, echoTool, hang, leader, neverEnding, scripted, scriptedPerAgent, simulatedClock, tick, worker } from '../stubs.js';

describe('agent lifecycle', () => {
  it('emits spawned, started, each model turn and tool call, then completed, in that order', async () => {
    const { tool, calls } = echoTool();
    const model = scripted([callTools(toolCall('echo', { text: 'hi' })), 'All done.']);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', 'Say hi.');

    expect(result).toMatchObject({ status: 'completed', output: 'All done.', turns: 2, toolCallsExecuted: 1 });
    expect(calls).toEqual(['hi']);
    expect(events.map((event) => event.type)).toEqual([
      'agent.spawned',
      'agent.started',
      'model.request',
      'model.response',
      'tool.call',
      'tool.result',
      'model.request',
      'model.response',
      'agent.completed',
    ]);
    expect(new Set(events.map((event) => event.agentId))).toEqual(new Set([result.id]));
    await runtime.shutdown();
  });

  it("runs every turn's model call and tool batch in one worker actor of the agent, stopped when the agent ends", async () => {
    const children: { id: string; parent: string | undefined }[] = [];
    const ended: string[] = [];
    const between: string[] = [];
    const inspect = (event: InspectionEvent) => {
      const id = (event.actorRef as unknown as { id: string }).id;
      if (event.type === '@xstate.event' && event.event.type === 'xstate.init' && !id.startsWith('agent:') && id !== 'supervisor') {
        children.push({ id, parent: (event.sourceRef as { systemId?: string } | undefined)?.systemId });
      }
      // What the agent asks of its worker, and what the worker answers (the first event to the agent is its start).
      if (event.type === '@xstate.event' && (id === 'worker' || (event.sourceRef as { id?: string } | undefined)?.id === 'worker')) {
        between.push(`${id === 'worker' ? 'to' : 'from'} worker: ${event.event.type}`);
      }
      // An agent's actor id is its kind (`agent:worker`); its own id is its systemId.
      if (event.type === '@xstate.snapshot' && event.snapshot.status !== 'active') ended.push((event.actorRef as { systemId?: string }).systemId ?? id);
    };
    const { tool } = echoTool();
    const model = scripted([callTools(toolCall('echo', { text: 'hi' })), 'All done.']);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], inspect });

    const result = await runtime.run('worker', 'Say hi.');

    expect(children).toEqual([{ id: 'worker', parent: result.id }]);
    // The worker starts with the agent; every turn asks it with an event.
    expect(between).toEqual([
      'to worker: xstate.init',
      'to worker: MODEL.CALL',
      'from worker: MODEL.DONE',
      'to worker: TOOLS.RUN',
      'from worker: TOOLS.DONE',
      'to worker: MODEL.CALL',
      'from worker: MODEL.DONE',
    ]);
    expect(ended).toEqual(expect.arrayContaining(['worker', result.id]));
    await runtime.shutdown();
  });

  it('sends the tool result back to the model as a tool message answering the call', async () => {
    const { tool } = echoTool();
    const model = scripted([callTools(toolCall('echo', { text: 'ping' }, 'c-1')), 'ok']);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });

    await runtime.run('worker', 'Ping.');

    const second = model.calls[1]!;
    expect(second.messages.map((message) => message.role)).toEqual(['system', 'user', 'assistant', 'tool']);
    expect(second.messages[3]).toEqual({ role: 'tool', toolCallId: 'c-1', content: 'echo: ping' });
    expect(second.tools.map((schema) => schema.name)).toEqual(['echo']);
    await runtime.shutdown();
  });

  it('fails with max_turns when the model keeps calling tools', async () => {
    const { tool, calls } = echoTool();
    const model = new ScriptedModel(() => callTools(toolCall('echo', { text: 'again' })));
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], maxTurns: 3 });

    const result = await runtime.run('worker', 'Loop.');

    expect(result).toMatchObject({ status: 'failed', reason: 'max_turns', turns: 3 });
    expect(result.output).toBeUndefined();
    expect(calls).toHaveLength(3);
    expect(model.calls).toHaveLength(3);
    await runtime.shutdown();
  });

  it('fails instead of completing when the model answers with nothing', async () => {
    const runtime = createRuntime({ model: scripted(['   ']), agents: [worker()] });
    const result = await runtime.run('worker', 'Answer.');
    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(result.error).toMatchObject({ code: 'empty_answer', fault: 'model', retryable: true });
    expect(result.error?.message).toMatch(/empty answer/);
    await runtime.shutdown();
  });

  it('fails with error when the model call throws, naming the cause', async () => {
    const model = scripted([new ModelError('server said 500', { status: 500 })]);
    const runtime = createRuntime({ model, agents: [worker()], retry: { attempts: 1 } }); // one try: the 500 fails it
    const result = await runtime.run('worker', 'Answer.');
    expect(result).toMatchObject({ status: 'failed', reason: 'error' });
    expect(result.error).toEqual({
      code: 'model_error',
      fault: 'model',
      message: 'The model call of agent "worker" to model "scripted" failed: server said 500',
      status: 500,
      retryable: true,
    });
    await runtime.shutdown();
  });

  it('tells a model failure, a bad request, an abort and an exhausted script apart by code, in the result and the event', async () => {
    const model = scriptedPerAgent({
      flaky: [new ModelError('rate limited', { status: 429 })],
      refused: [new ModelError('bad key', { status: 401 })],
      aborted: [new AbortedError('The model call was aborted.')],
      exhausted: [],
      plain: [new Error('boom')],
    });
    const names = ['flaky', 'refused', 'aborted', 'exhausted', 'plain'];
    const runtime = createRuntime({ model, agents: names.map((name) => worker(name)), retry: { attempts: 1 } }); // the 429 not tried again
    const events = collect(runtime.events$);

    const results = await Promise.all(names.map((name) => runtime.run(name, 'Answer.')));

    expect(results.map((result) => [result.reason, result.error?.code, result.error?.fault, result.error?.retryable])).toEqual([
      ['error', 'model_error', 'model', true],
      ['error', 'model_error', 'model', false],
      ['error', 'aborted', 'system', undefined],
      ['error', 'script_exhausted', 'user', undefined],
      ['error', 'model_call_failed', 'model', undefined],
    ]);
    const failedEvents = events.flatMap((event) => (event.type === 'agent.failed' ? [event] : []));
    expect(failedEvents.map((event) => event.error)).toEqual(expect.arrayContaining(results.map((result) => result.error)));
    // Plain JSON: it survives a trip through JSON unchanged.
    expect(JSON.parse(JSON.stringify(results[0]!.error))).toEqual(results[0]!.error);
    await runtime.shutdown();
  });

  it('fails with budget instead of running more tools once its token budget is spent', async () => {
    const { tool, calls } = echoTool();
    const model = scripted([
      { ...callTools(toolCall('echo', { text: 'a' })), usage: { inputTokens: 60, outputTokens: 10 } },
      { ...callTools(toolCall('echo', { text: 'b' })), usage: { inputTokens: 60, outputTokens: 10 } },
    ]);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
    const result = await runtime.run('worker', 'Spend.', { budget: { maxTokens: 100 } });
    expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
    expect(calls).toEqual(['a']);
    expect(result.metrics.own.inputTokens).toBe(120);
    await runtime.shutdown();
  });

  it('fails clearly when run without a runtime to provide its model', async () => {
    const actor = createActor(agentMachine, {
      input: {
        id: 'agent:lonely:1',
        name: 'lonely',
        runId: 'r',
        parentId: null,
        toolCallId: null,
        depth: 0,
        task: 'Hello',
        systemPrompt: 'You are alone.',
        model: 'none',
        tools: [],
        maxTurns: 3,
        idleTimeoutMs: 1000,
      },
    }).start();
    actor.send({ type: 'START' });
    await new Promise((resolve) => setImmediate(resolve));
    expect(actor.getSnapshot().value).toBe('failed');
    expect(actor.getSnapshot().output?.error).toMatchObject({ code: 'configuration', fault: 'user' });
    expect(actor.getSnapshot().output?.error?.message).toMatch(/createRuntime/);
  });
});

describe('bad tool calls become error results and the agent goes on', () => {
  const strict = defineTool({
    name: 'lookup',
    description: 'Looks up a key.',
    parameters: z.object({ key: z.string().min(1) }),
    kind: 'read',
    execute: ({ key }) => ({ key, value: 42 }),
  });
  const broken = defineTool({
    name: 'broken',
    description: 'Always throws.',
    parameters: z.object({}),
    kind: 'other',
    execute: () => {
      throw new Error('disk on fire');
    },
  });
  const slow = neverEnding('slow', 50);
  const agent = defineAgent({
    name: 'careful',
    description: 'Calls tools badly.',
    systemPrompt: 'Call tools.',
    tools: [strict, broken, slow],
  });

  it.each([
    ['a tool that does not exist', toolCall('nope', {}), /Unknown tool "nope".*lookup, broken, slow/s],
    ['arguments that are not JSON', toolCall('lookup', '{"key": '), /not valid JSON/],
    ['arguments that fail the schema', toolCall('lookup', { key: 7 }), /do not match its parameters[\s\S]*key/],
    ['a tool that throws', toolCall('broken', {}), /disk on fire/],
    ['a tool that times out', toolCall('slow', {}), /timed out after 50 ms/],
  ])('%s', async (_label, badCall, message) => {
    const clock = simulatedClock();
    const model = scripted([callTools(badCall), 'Recovered.']);
    const runtime = createRuntime({ model, agents: [agent], clock });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('careful', 'Try.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Recovered.', toolCallsExecuted: 1 });
    const toolMessage = model.calls[1]!.messages.at(-1)!;
    expect(toolMessage).toMatchObject({ role: 'tool', toolCallId: badCall.id, isError: true });
    expect(toolMessage.content).toMatch(message);
    const resultEvent = events.find((event) => event.type === 'tool.result');
    expect(resultEvent).toMatchObject({ status: 'error', tool: badCall.name });
    expect(runtime.metrics().total.toolErrors).toBe(1);
    await runtime.shutdown();
  });

  it('answers every call of a mixed batch with exactly one tool message, in call order', async () => {
    const model = scripted([
      callTools(toolCall('lookup', { key: 'a' }, 'c1'), toolCall('nope', {}, 'c2'), toolCall('broken', {}, 'c3'), toolCall('lookup', '[', 'c4')),
      'Done.',
    ]);
    const runtime = createRuntime({ model, agents: [agent] });
    await runtime.run('careful', 'Try all.');
    const toolMessages = model.calls[1]!.messages.filter((message) => message.role === 'tool');
    expect(toolMessages.map((message) => message.role === 'tool' && message.toolCallId)).toEqual(['c1', 'c2', 'c3', 'c4']);
    expect(toolMessages.map((message) => message.role === 'tool' && Boolean(message.isError))).toEqual([false, true, true, true]);
    expect(toolMessages[0]!.content).toBe('{"key":"a","value":42}');
    await runtime.shutdown();
  });
});

describe('idle timeout in simulated time', () => {
  it('fails a stalled agent with timeout after idleTimeoutMs of no progress', async () => {
    const clock = simulatedClock();
    // No reply: the call is aborted before its latency has passed.
    const model = scripted([], { latencyMs: 10_000 });
    const runtime = createRuntime({ model, agents: [worker()], clock, idleTimeoutMs: 5_000 });

    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Think slowly.'));

    expect(result).toMatchObject({ status: 'failed', reason: 'timeout' });
    // The message says which setting ended it, so a slow model (a simulated one that thinks for minutes) can be given more.
    expect(result.error?.message).toBe('No progress for 5000 ms while waiting for the model (idleTimeoutMs: raise it on the runtime, the agent or the spawn for longer waits).');
    expect(clock.now()).toBe(5_000);
    expect(model.calls[0]!.signal.aborted).toBe(true);
    await runtime.shutdown();
  });

  it('restarts the timer at every step, so steady progress never times out', async () => {
    const clock = simulatedClock();
    const { tool } = echoTool();
    const model = scripted([callTools(toolCall('echo', { text: '1' })), callTools(toolCall('echo', { text: '2' })), 'done'], {
      latencyMs: 4_000,
    });
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], clock, idleTimeoutMs: 5_000 });
    const result = await advanceUntilSettled(clock, runtime.run('worker', 'Go.'));
    expect(result.status).toBe('completed');
    expect(clock.now()).toBe(12_000);
    await runtime.shutdown();
  });

  it.each([
    ['without an inspector', {}],
    ['under an inspector', { inspect: () => {} }],
  ])('counts each tool call that ends as progress, %s: four 200 ms calls two at a time never idle 300 ms', async (_, watched) => {
    const clock = simulatedClock();
    const slow = defineTool({
      name: 'slow_read',
      description: 'Reads for 200 ms.',
      parameters: z.object({ n: z.number() }),
      kind: 'read',
      execute: ({ n }, { clock: time }) => new Promise<string>((resolve) => time.setTimeout(() => resolve(`read ${n}`), 200)),
    });
    const calls = [1, 2, 3, 4].map((n) => toolCall('slow_read', { n }, `r${n}`));
    const model = scripted([callTools(...calls), 'All read.']);
    const agent = defineAgent({ name: 'reader', description: 'Reads.', systemPrompt: 'Read.', tools: [slow] });
    const runtime = createRuntime({ model, agents: [agent], clock, idleTimeoutMs: 300, maxToolConcurrency: 2, projectAgentDir: false, ...watched });

    const result = await advanceUntilSettled(clock, runtime.run('reader', 'Read four things.'));

    expect(result).toMatchObject({ status: 'completed', output: 'All read.' });
    expect(clock.now()).toBe(400); // two rounds of two calls; each round's ends restart the 300 ms watchdog
    await runtime.shutdown();
  });

  it('still fails an agent whose batch makes no progress for idleTimeoutMs after a call ended', async () => {
    const clock = simulatedClock();
    const timed = (name: string, ms: number) =>
      defineTool({ name, description: `Ends after ${ms} ms.`, parameters: z.object({}), kind: 'read', execute: (_, { clock: time }) => new Promise<string>((resolve) => time.setTimeout(() => resolve(name), ms)) });
    const model = scripted([callTools(toolCall('quick', {}, 'q'), toolCall('stuck', {}, 's'))]);
    const agent = defineAgent({ name: 'reader', description: 'Reads.', systemPrompt: 'Read.', tools: [timed('quick', 100), timed('stuck', 100_000)] });
    const runtime = createRuntime({ model, agents: [agent], clock, idleTimeoutMs: 300, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('reader', 'Read.'));

    expect(result).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(clock.now()).toBe(400); // 300 ms after the quick call ended at 100 ms
    await runtime.shutdown();
  });

  it('pauses while an interactive tool waits for a person', async () => {
    const clock = simulatedClock();
    let answer: (text: string) => void = () => {};
    const ask = defineTool({
      name: 'ask_person',
      description: 'Asks a person and waits.',
      parameters: z.object({ question: z.string() }),
      kind: 'other',
      interactive: true,
      execute: () => new Promise<string>((resolve) => (answer = resolve)),
    });
    const model = scripted([callTools(toolCall('ask_person', { question: 'Ship it?' })), 'Shipped.']);
    const agent = defineAgent({ name: 'asker', description: 'Asks.', systemPrompt: 'Ask.', tools: [ask] });
    const runtime = createRuntime({ model, agents: [agent], clock, idleTimeoutMs: 5_000 });
    const run = runtime.run('asker', 'Ask before shipping.');
    let settled = false;
    void run.then(() => (settled = true));

    await new Promise((resolve) => setImmediate(resolve));
    clock.increment(60_000); // a person takes a minute: far past the idle timeout
    await new Promise((resolve) => setImmediate(resolve));
    expect(settled).toBe(false);
    expect(runtime.metrics().agents[[...Object.keys(runtime.metrics().agents)][0]!]!.state).toBe('running');

    answer('yes');
    const result = await advanceUntilSettled(clock, run);
    expect(result).toMatchObject({ status: 'completed', output: 'Shipped.' });
    await runtime.shutdown();
  });

  // Unwatched, a delegating agent is told of its lent and returned slot without a step of its own (quietSlotNotices):
  // it stays in `acting.working` with its idle timer paused, and its slot guards ask the supervisor's table.
  const slowWorker = defineAgent({ name: 'worker', description: 'Works slowly.', systemPrompt: 'Work.', idleTimeoutMs: 60_000 });
  const slowly = (request: { agentName: string }) => (request.agentName === 'worker' ? 10_000 : 0);
  const assignWork = toolCall('assign_task', { description: 'd', agent: 'worker', task: 'Work.' });

  /** A lead under maxParallel 1 and a 5 s idle timeout, whose first turn assigns the slow worker's task and `calls`. */
  function leadWithSlowWorker(inspected: boolean, { calls = [], tools = [], then = [] }: { calls?: ToolCall[]; tools?: Tool[]; then?: string[] }) {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ lead: [callTools(assignWork, ...calls), ...then], worker: ['Worked.'] }, { latencyMs: slowly });
    const lead = leader('lead', { subagents: ['worker'], tools: ['assign_task', ...tools] });
    const runtime = createRuntime({ model, agents: [lead, slowWorker], clock, idleTimeoutMs: 5_000, maxParallel: 1, inspect: inspected ? () => {} : undefined });
    return { clock, runtime };
  }

  it.each([false, true])('pauses while the agent waits for its sub-agents, its slot lent (inspected: %s)', async (inspected) => {
    const { clock, runtime } = leadWithSlowWorker(inspected, { then: ['Led.'] });
    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Lead.'));
    expect(result).toMatchObject({ status: 'completed', output: 'Led.' });
    expect(clock.now()).toBe(10_000);
    await runtime.shutdown();
  });

  it.each([false, true])('runs again once its sub-agents end while another of its tools still hangs (inspected: %s)', async (inspected) => {
    const { clock, runtime } = leadWithSlowWorker(inspected, { calls: [toolCall('hang', {})], tools: [hang] });
    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Lead.'));
    // Paused for the worker's 10 s, then 5 s of no progress once it ended.
    expect(result).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(clock.now()).toBe(15_000);
    await runtime.shutdown();
  });

  it.each([false, true])('waits on for its sub-agent after a person approves a tool, its slot still lent (inspected: %s)', async (inspected) => {
    // Asked for after the worker is spawned (the approval is decided first), so the lead waits for the person with its
    // slot already lent.
    const check = defineTool({ name: 'check', description: 'Checks.', parameters: z.object({}), kind: 'read', needsApproval: true, execute: () => 'checked' });
    const { clock, runtime } = leadWithSlowWorker(inspected, { calls: [toolCall('check', {})], tools: [check], then: ['Led.'] });
    const run = runtime.run('lead', 'Lead.');
    await tick();
    clock.increment(500);
    // Approved before the worker ends: the lead waits on for it, without a slot and without its idle timer.
    runtime.approve(runtime.pendingApprovals()[0]!.requestId);
    const result = await advanceUntilSettled(clock, run);
    expect(result).toMatchObject({ status: 'completed', output: 'Led.' });
    expect(clock.now()).toBe(10_000);
    await runtime.shutdown();
  });

  it('still times out a non-interactive tool that hangs', async () => {
    const clock = simulatedClock();
    let aborted = false;
    const watch = defineTool({ ...hang, name: 'watch', execute: (_, { signal }) => new Promise(() => signal.addEventListener('abort', () => (aborted = true))) });
    const model = scripted([callTools(toolCall('hang', {}), toolCall('watch', {}))]);
    const agent = defineAgent({ name: 'stuck', description: 'Stuck.', systemPrompt: 'Wait.', tools: [hang, watch] });
    const runtime = createRuntime({ model, agents: [agent], clock, idleTimeoutMs: 5_000 });
    const result = await advanceUntilSettled(clock, runtime.run('stuck', 'Wait forever.'));
    expect(result).toMatchObject({ status: 'failed', reason: 'timeout' });
    expect(aborted).toBe(true);
    await runtime.shutdown();
  });
});

describe('cancelling an agent', () => {
  it('aborts its model call through the AbortSignal and fails it with cancelled', async () => {
    const clock = simulatedClock();
    const model = scripted([], { latencyMs: 1_000 }); // no reply: the call is aborted while it waits
    const runtime = createRuntime({ model, agents: [worker()], clock });
    const events: TroupeEvent[] = collect(runtime.events$);
    const handle = runtime.spawn('worker', 'Think.');
    await new Promise((resolve) => setImmediate(resolve));
    expect(model.calls).toHaveLength(1);

    runtime.cancel(handle.id);
    const result = await handle.result;

    expect(result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(model.calls[0]!.signal.aborted).toBe(true);
    expect(events.at(-1)).toMatchObject({ type: 'agent.failed', reason: 'cancelled' });
    await runtime.shutdown();
  });

  it('aborts its running tools through their AbortSignal', async () => {
    let toolSignal: AbortSignal | undefined;
    const wait = defineTool({
      name: 'wait',
      description: 'Waits until aborted.',
      parameters: z.object({}),
      kind: 'read',
      execute: (_, { signal }) => {
        toolSignal = signal;
        return new Promise(() => {});
      },
    });
    const model = scripted([callTools(toolCall('wait', {}))]);
    const agent = defineAgent({ name: 'waiter', description: 'Waits.', systemPrompt: 'Wait.', tools: [wait] });
    const runtime = createRuntime({ model, agents: [agent] });
    const handle = runtime.spawn('waiter', 'Wait.');
    await new Promise((resolve) => setImmediate(resolve));
    expect(toolSignal?.aborted).toBe(false);
    runtime.cancel(handle.id);
    expect(await handle.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(toolSignal?.aborted).toBe(true);
    await runtime.shutdown();
  });
});
