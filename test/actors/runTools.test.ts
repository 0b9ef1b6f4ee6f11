// runTools on its own: the actor logic from createRunTools(environment), invoked by a tiny parent machine that
// records what it sends back, over a real test environment on simulated time.
import { describe, expect, it } from 'vitest';
import { createActor, setup } from 'xstate';
import { z } from 'zod';
import { defineTool, sleep, toolReply, type ToolContext, type TroupeEvent } from 'troupe';
import { createRunTools, type RunToolsInput, type ToolProgress } from '../../src/actors/runTools.js';
import { clockNow } from '../../src/clock.js';
import { AbortedError, ToolTimeoutError } from '../../src/errors.js';
import type { ToolCall } from '../../src/models/Model.js';
import { settle, testEnvironment, type TestEnvironment } from '../support/environment.js';

type Done = Extract<ToolProgress, { type: 'TOOLS.DONE' }>;

const header = { runId: 'run:1', id: 'agent:worker:1', parentId: 'agent:lead:1', toolCallId: 'call_lead' };

function call(name: string, args: unknown, id: string): ToolCall {
  return { id, name, arguments: typeof args === 'string' ? args : JSON.stringify(args) };
}

/** Starts runTools for one batch under a parent machine that records every event sent back; HALT stops it. */
function startBatch(environment: TestEnvironment, toolCalls: ToolCall[], overrides: Partial<RunToolsInput> = {}) {
  const input: RunToolsInput = {
    agentId: 'agent:worker:1',
    agentName: 'worker',
    depth: 1,
    messages: [
      { role: 'user', content: 'Do it.' },
      { role: 'assistant', content: '', toolCalls },
    ],
    toolCalls,
    header,
    ...overrides,
  };
  const received: ToolProgress[] = [];
  const parent = setup({
    types: { events: {} as ToolProgress | { type: 'HALT' } },
    actors: { runTools: createRunTools(environment) },
  }).createMachine({
    initial: 'acting',
    states: {
      acting: { invoke: { src: 'runTools', input }, on: { HALT: 'halted' } },
      halted: {},
    },
    on: { '*': { actions: ({ event }) => void (event.type === 'HALT' || received.push(event)) } },
  });
  const actor = createActor(parent, { clock: environment.clock }).start();
  return {
    received,
    /** The batch's TOOLS.DONE, once it came. */
    done: () => received.find((event): event is Done => event.type === 'TOOLS.DONE'),
    halt: () => actor.send({ type: 'HALT' }),
  };
}

/** Lets the batch run, moving simulated time to each next timer, until TOOLS.DONE comes. */
async function runToDone(environment: TestEnvironment, batch: ReturnType<typeof startBatch>): Promise<Done> {
  for (let step = 0; step < 100; step++) {
    await settle();
    const done = batch.done();
    if (done) return done;
    const next = environment.clock.nextTimerAt();
    if (next === undefined) throw new Error('The batch waits for nothing but has not ended.');
    environment.clock.advanceTo(next);
  }
  throw new Error('The batch did not end.');
}

const echoCalls: string[] = [];
const echo = defineTool({
  name: 'echo',
  description: 'Echoes the text back.',
  parameters: z.object({ text: z.string() }),
  kind: 'read',
  execute: ({ text }) => {
    echoCalls.push(text);
    return `echo: ${text}`;
  },
});

/** A read tool that takes `ms` of simulated time and answers its label. */
const wait = defineTool({
  name: 'wait',
  description: 'Waits, then answers.',
  parameters: z.object({ ms: z.number(), label: z.string() }),
  kind: 'read',
  execute: async ({ ms, label }, { clock, signal }) => {
    await sleep(clock, ms, signal);
    return label;
  },
});

/** Tools that take 10 ms and log when each call ran, by call id. */
function timedTools() {
  const ran = new Map<string, { start: number; end: number }>();
  const timed = async (_args: unknown, { clock, signal, toolCallId }: ToolContext) => {
    const start = clockNow(clock);
    await sleep(clock, 10, signal);
    ran.set(toolCallId, { start, end: clockNow(clock) });
    return 'ok';
  };
  const readFile = defineTool({
    name: 'read_file',
    description: 'Reads a file.',
    parameters: z.object({ path: z.string() }),
    kind: 'read',
    targets: ({ path }) => [path],
    execute: timed,
  });
  const writeFile = defineTool({
    name: 'write_file',
    description: 'Writes a file.',
    parameters: z.object({ path: z.string() }),
    kind: 'write',
    targets: ({ path }) => [path],
    execute: timed,
  });
  const transfer = defineTool({
    name: 'transfer',
    description: 'Moves money between two accounts.',
    parameters: z.object({ from: z.string(), to: z.string() }),
    kind: 'other',
    plan: ({ from, to }) => {
      if (from === 'broken') throw new Error('cannot plan this one');
      return { kind: 'write', targets: [`accounts/${from}`, `accounts/${to}`] };
    },
    execute: timed,
  });
  return { ran, tools: [readFile, writeFile, transfer] };
}

/** The announced events of one type. */
function ofType<T extends TroupeEvent['type']>(events: readonly TroupeEvent[], type: T) {
  return events.filter((event): event is Extract<TroupeEvent, { type: T }> => event.type === type);
}

describe('runTools', () => {
  it('answers every call with one tool message in the order of the calls, and announces calls and results on the clock', async () => {
    const environment = testEnvironment({ tools: [wait] });
    const batch = startBatch(environment, [
      call('wait', { ms: 30, label: 'slow' }, 'c-slow'),
      call('wait', { ms: 10, label: 'fast' }, 'c-fast'),
    ]);

    const done = await runToDone(environment, batch);

    expect(done).toEqual({
      type: 'TOOLS.DONE',
      messages: [
        { role: 'tool', toolCallId: 'c-slow', content: 'slow' },
        { role: 'tool', toolCallId: 'c-fast', content: 'fast' },
      ],
      ended: 2,
      failed: 0,
    });
    const stamp = { runId: 'run:1', agentId: 'agent:worker:1', parentId: 'agent:lead:1', toolCallId: 'call_lead' };
    expect(environment.events).toEqual([
      // A turn of two calls is planned in the open first: two reads, side by side.
      { type: 'tool.plan', ...stamp, at: 1000, stages: [['c-slow', 'c-fast']], waits: [], maxConcurrency: 10 },
      { type: 'tool.call', ...stamp, at: 1000, callId: 'c-slow', tool: 'wait', arguments: '{"ms":30,"label":"slow"}' },
      { type: 'tool.call', ...stamp, at: 1000, callId: 'c-fast', tool: 'wait', arguments: '{"ms":10,"label":"fast"}' },
      { type: 'tool.result', ...stamp, at: 1010, callId: 'c-fast', tool: 'wait', status: 'ok', durationMs: 10, content: 'fast' },
      { type: 'tool.result', ...stamp, at: 1030, callId: 'c-slow', tool: 'wait', status: 'ok', durationMs: 30, content: 'slow' },
    ]);
    expect(batch.received).toEqual([done]);
  });

  it('gives a tool a context it may pass on as a copy with its own signal, or take parts out of', async () => {
    const innerSaw: { aborted: boolean; toolCallId: string; caller: unknown }[] = [];
    const inner = async (_args: unknown, context: ToolContext) => {
      // This environment's delegation service is the caller it was made for.
      innerSaw.push({ aborted: context.signal.aborted, toolCallId: context.toolCallId, caller: context.delegation });
      return 'inner';
    };
    const wrapper = defineTool({
      name: 'wrapper',
      description: 'Runs an inner tool with a signal of its own.',
      parameters: z.object({}),
      kind: 'read',
      execute: async (args, context) => {
        // Taken out of the context, as tools do: each part still knows its call.
        const { toolCallId, announce } = context;
        announce({ type: 'todo.updated', callId: toolCallId, items: [] });
        const aborted = new AbortController();
        aborted.abort();
        await inner(args, { ...context, signal: aborted.signal });
        return inner(args, context);
      },
    });
    const base = testEnvironment({ tools: [wrapper] });
    const environment: TestEnvironment = {
      ...base,
      delegation: (caller) => ({ agentId: caller.agentId, agentName: caller.agentName, depth: caller.depth, toolCallId: caller.toolCallId, stopped: caller.signal.aborted }) as never,
      messaging: () => ({}) as never,
    };
    const done = await runToDone(environment, startBatch(environment, [call('wrapper', {}, 'c-wrap')]));

    expect(done.messages).toEqual([{ role: 'tool', toolCallId: 'c-wrap', content: 'inner' }]);
    // The copy keeps the services and takes the new signal; the context itself keeps the call's own.
    const caller = { agentId: 'agent:worker:1', agentName: 'worker', depth: 1, toolCallId: 'c-wrap', stopped: false };
    expect(innerSaw).toEqual([
      { aborted: true, toolCallId: 'c-wrap', caller },
      { aborted: false, toolCallId: 'c-wrap', caller },
    ]);
    expect(ofType(base.events, 'todo.updated')).toEqual([
      { type: 'todo.updated', runId: 'run:1', agentId: 'agent:worker:1', parentId: 'agent:lead:1', toolCallId: 'call_lead', at: 1000, callId: 'c-wrap', items: [] },
    ]);
  });

  it('gives a tool notes whose save and search it may take out and call on their own, and that show nothing else', async () => {
    const shown: string[][] = [];
    const keeper = defineTool({
      name: 'keeper',
      description: 'Saves a note and finds it, with the notes methods taken out of the context.',
      parameters: z.object({}),
      kind: 'other',
      execute: async (_args, context) => {
        shown.push(Object.keys(context.notes));
        const { save, search } = context.notes;
        await save('The launch is on Tuesday.', { tags: ['launch'] });
        const found = await search('launch');
        return found.hits.map((hit) => hit.note.content).join('\n');
      },
    });
    const environment = testEnvironment({ tools: [keeper] });
    const done = await runToDone(environment, startBatch(environment, [call('keeper', {}, 'c-keep')]));

    expect(done.messages).toEqual([{ role: 'tool', toolCallId: 'c-keep', content: 'The launch is on Tuesday.' }]);
    // What the store's own view shows (a tool that logs its context sees no batch or environment in it).
    expect(shown).toEqual([['save', 'search']]);
  });

  it('refuses unknown tools, tools not on the agent’s list and delegation past the depth limit, and still runs the rest', async () => {
    const secret = defineTool({
      name: 'secret',
      description: 'Not for the worker.',
      parameters: z.object({}),
      kind: 'read',
      execute: () => 'leaked',
    });
    const environment = testEnvironment({
      tools: [echo, secret],
      maxDepth: 1,
      agents: [
        { name: 'worker', description: 'Works.', systemPrompt: 'Work.', tools: ['echo', 'assign_task'] },
        { name: 'helper', description: 'Helps.', systemPrompt: 'Help.', tools: ['secret'] },
      ],
    });
    const batch = startBatch(environment, [
      call('nope', {}, 'c-1'),
      call('secret', {}, 'c-2'),
      call('assign_task', { description: 'x', agent: 'helper', task: 'help' }, 'c-3'),
      call('echo', { text: 'still here' }, 'c-4'),
    ]);

    const done = await runToDone(environment, batch);

    expect(done.messages.map((message) => message.toolCallId)).toEqual(['c-1', 'c-2', 'c-3', 'c-4']);
    const [unknown, notAllowed, tooDeep, ran] = done.messages;
    expect(unknown).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: Unknown tool "nope"\. Available tools: echo\./) });
    expect(notAllowed).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: Tool "secret" is not allowed for agent "worker"/) });
    expect(tooDeep).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: "assign_task" is refused: .*depth 1/) });
    expect(ran).toEqual({ role: 'tool', toolCallId: 'c-4', content: 'echo: still here' });
    expect(done).toMatchObject({ ended: 4, failed: 3 });

    const denied = ofType(environment.events, 'tool.denied');
    expect(denied.map((event) => [event.callId, event.tool, event.reason])).toEqual([
      ['c-1', 'nope', 'unknown'],
      ['c-2', 'secret', 'not_allowed'],
      ['c-3', 'assign_task', 'depth_limit'],
    ]);
    for (const event of denied) expect(event).toMatchObject({ agentId: 'agent:worker:1', at: 1000, error: expect.stringContaining(event.tool) });
    // Each refused call is still a call with an error result, so counts of calls and results agree.
    const results = ofType(environment.events, 'tool.result');
    expect(results.map((event) => [event.callId, event.status])).toEqual([
      ['c-1', 'error'],
      ['c-2', 'error'],
      ['c-3', 'error'],
      ['c-4', 'ok'],
    ]);
  });

  it('answers arguments that are not JSON or do not fit the schema with an error the model can read, without running the tool', async () => {
    const environment = testEnvironment({ tools: [echo] });
    const before = echoCalls.length;
    const batch = startBatch(environment, [
      call('echo', '{"text": "unclosed', 'c-json'),
      call('echo', { text: 5 }, 'c-type'),
      call('echo', '', 'c-empty'),
    ]);

    const done = await runToDone(environment, batch);

    expect(echoCalls.length).toBe(before);
    const [json, type, empty] = done.messages;
    expect(json).toMatchObject({ toolCallId: 'c-json', isError: true });
    expect(json?.content).toMatch(/^Error: The arguments of "echo" are not valid JSON \(.+\)\. Send one JSON object/);
    expect(type).toMatchObject({ toolCallId: 'c-type', isError: true });
    expect(type?.content).toMatch(/^Error: The arguments of "echo" do not match its parameters:\n/);
    expect(type?.content).toContain('expected string');
    expect(type?.content).toContain('text');
    // Empty arguments are read as {}: then the missing field is what the model is told about.
    expect(empty).toMatchObject({ toolCallId: 'c-empty', isError: true });
    expect(empty?.content).toMatch(/^Error: The arguments of "echo" do not match its parameters:[\s\S]*text/);
    expect(done).toMatchObject({ ended: 3, failed: 3 });
    expect(ofType(environment.events, 'tool.denied')).toEqual([]);
    expect(ofType(environment.events, 'tool.result').map((event) => [event.callId, event.status])).toEqual([
      ['c-json', 'error'],
      ['c-type', 'error'],
      ['c-empty', 'error'],
    ]);
  });

  it('turns a tool that throws into an error message, and counts ended and failed calls in TOOLS.DONE', async () => {
    const boom = defineTool({
      name: 'boom',
      description: 'Fails.',
      parameters: z.object({}),
      kind: 'read',
      execute: async () => {
        throw new Error('disk on fire');
      },
    });
    const soft = defineTool({
      name: 'soft',
      description: 'Fails politely.',
      parameters: z.object({}),
      kind: 'read',
      execute: () => toolReply({ content: 'no such file', isError: true, metadata: { path: 'a.txt' } }),
    });
    const environment = testEnvironment({ tools: [boom, soft, echo] });
    const batch = startBatch(environment, [call('boom', {}, 'c-1'), call('soft', {}, 'c-2'), call('echo', { text: 'hi' }, 'c-3')]);

    const done = await runToDone(environment, batch);

    expect(done.messages).toEqual([
      { role: 'tool', toolCallId: 'c-1', content: 'Error: disk on fire', isError: true },
      { role: 'tool', toolCallId: 'c-2', content: 'no such file', isError: true, metadata: { path: 'a.txt' } },
      { role: 'tool', toolCallId: 'c-3', content: 'echo: hi' },
    ]);
    expect(done).toMatchObject({ ended: 3, failed: 2 });
    expect(batch.received.map((event) => event.type)).toEqual(['TOOLS.DONE']);
    const results = ofType(environment.events, 'tool.result');
    const byCall = Object.fromEntries(results.map((event) => [event.callId, [event.status, event.error]]));
    expect(byCall).toEqual({ 'c-1': ['error', 'disk on fire'], 'c-2': ['error', 'no such file'], 'c-3': ['ok', undefined] });
  });

  it('names what a tool threw that is no Error and that JSON cannot write (a cycle, a BigInt), not [object Object]', async () => {
    const cyclic: Record<string, unknown> = { code: 'E_LOCKED', table: 'orders' };
    cyclic.self = cyclic;
    const thrower = (name: string, thrown: unknown) =>
      defineTool({
        name,
        description: 'Fails with something odd.',
        parameters: z.object({}),
        kind: 'read',
        execute: () => {
          throw thrown;
        },
      });
    const tools = [thrower('cycle', cyclic), thrower('big', { rows: 10n }), thrower('text', 'plain text'), thrower('nothing', undefined)];
    const environment = testEnvironment({ tools });
    const batch = startBatch(environment, tools.map((tool, index) => call(tool.name, {}, `c-${index}`)));

    const done = await runToDone(environment, batch);

    const [cycle, big, text, nothing] = done.messages.map((message) => message.content);
    expect(cycle).toBe('Error: {"code":"E_LOCKED","table":"orders","self":"[Circular]"}');
    expect(big).toBe('Error: {"rows":"10n"}');
    expect([text, nothing]).toEqual(['Error: plain text', 'Error: undefined']);
  });

  it('turns a reply whose metadata JSON cannot hold (a cycle, a BigInt, a Map) into an error message, and keeps plain metadata as a copy', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const plain = { path: 'a.txt', when: new Date(0) };
    const metadata: Record<string, Record<string, unknown>> = { cycle: { cyclic }, big: { size: 10n }, map: { seen: new Map([['a', 1]]) }, plain };
    const tools = Object.keys(metadata).map((name) =>
      defineTool({ name, description: `Replies with ${name} metadata.`, parameters: z.object({}), kind: 'read', execute: () => toolReply({ content: 'done', metadata: metadata[name]! }) }),
    );
    const environment = testEnvironment({ tools });
    const batch = startBatch(environment, Object.keys(metadata).map((name, index) => call(name, {}, `c-${index}`)));

    const done = await runToDone(environment, batch);

    expect(done.messages.map((message) => [message.isError ?? false, message.content])).toEqual([
      [true, expect.stringMatching(/^Error: The tool's metadata could not be written as JSON \(.*circular.*\)/i)],
      [true, expect.stringMatching(/^Error: The tool's metadata could not be written as JSON \(.*BigInt.*\)/)],
      [true, "Error: The tool's metadata could not be written as JSON (a Map would be written as {}, without its entries). A tool's metadata is plain data."],
      [false, 'done'],
    ]);
    expect(done.messages[3]?.metadata).toEqual({ path: 'a.txt', when: '1970-01-01T00:00:00.000Z' });
  });

  it('turns an output JSON cannot hold (a cycle, a BigInt, a function, a Map or Set) into an error message, and sends plain data as JSON', async () => {
    const cyclic: Record<string, unknown> = { name: 'loop' };
    cyclic.self = cyclic;
    const outputs: Record<string, unknown> = {
      cycle: cyclic,
      big: 10n,
      fn: () => 'source',
      map: new Map([['alice', 3]]),
      set: { names: new Set(['bob']) },
      data: { n: 1, list: ['a'] },
    };
    const tools = Object.keys(outputs).map((name) =>
      defineTool({ name, description: `Returns ${name}.`, parameters: z.object({}), kind: 'read', execute: () => outputs[name] as never }),
    );
    const environment = testEnvironment({ tools });
    const batch = startBatch(environment, Object.keys(outputs).map((name, index) => call(name, {}, `c-${index}`)));

    const done = await runToDone(environment, batch);

    expect(done.messages.map((message) => [message.isError ?? false, message.content])).toEqual([
      [true, expect.stringMatching(/^Error: The tool's output could not be written as JSON \(.*circular.*\)/i)],
      [true, expect.stringMatching(/^Error: The tool's output could not be written as JSON \(.*BigInt.*\)/)],
      [true, "Error: The tool's output (a function that JSON leaves out) is neither text nor JSON. A tool returns text or plain data."],
      [true, "Error: The tool's output could not be written as JSON (a Map would be written as {}, without its entries). A tool returns text or plain data."],
      [true, "Error: The tool's output could not be written as JSON (a Set would be written as {}, without its entries). A tool returns text or plain data."],
      [false, '{"n":1,"list":["a"]}'],
    ]);
    expect(done).toMatchObject({ ended: 6, failed: 5 });
  });

  it('times a call out after its timeoutMs on the environment’s clock, aborting its signal and clearing its timer', async () => {
    const signals: AbortSignal[] = [];
    const hang = defineTool({
      name: 'hang',
      description: 'Never ends.',
      parameters: z.object({}),
      kind: 'read',
      timeoutMs: 500,
      execute: (_args, { signal }) => {
        signals.push(signal);
        return new Promise(() => {});
      },
    });
    const environment = testEnvironment({ tools: [hang] });
    const batch = startBatch(environment, [call('hang', {}, 'c-hang')]);

    await settle();
    environment.advance(499);
    await settle();
    expect(batch.done()).toBeUndefined();
    expect(signals[0]?.aborted).toBe(false);

    environment.advance(1);
    const done = await runToDone(environment, batch);

    expect(done).toEqual({
      type: 'TOOLS.DONE',
      messages: [{ role: 'tool', toolCallId: 'c-hang', content: 'Error: Tool "hang" timed out after 500 ms.', isError: true }],
      ended: 1,
      failed: 1,
    });
    expect(signals[0]?.aborted).toBe(true);
    expect(signals[0]?.reason).toBeInstanceOf(ToolTimeoutError);
    expect(environment.events.at(-1)).toMatchObject({ type: 'tool.result', at: 1500, status: 'error', durationMs: 500 });
    expect(environment.clock.pending).toBe(0);
  });

  it('times out a call that waits its whole timeoutMs: the limit is set before the tool starts, so it fires first', async () => {
    const slow = defineTool({
      name: 'slow',
      description: 'Waits exactly its time limit on the clock.',
      parameters: z.object({}),
      kind: 'read',
      timeoutMs: 100,
      execute: async (_args, { clock }) => {
        await sleep(clock, 100);
        return 'made it';
      },
    });
    const environment = testEnvironment({ tools: [slow] });
    const done = await runToDone(environment, startBatch(environment, [call('slow', {}, 'c-1')]));

    expect(done.messages).toEqual([{ role: 'tool', toolCallId: 'c-1', content: 'Error: Tool "slow" timed out after 100 ms.', isError: true }]);
  });

  it('clears the timeout of a call that ends in time', async () => {
    const quick = defineTool({
      name: 'quick',
      description: 'Ends at once.',
      parameters: z.object({}),
      kind: 'read',
      timeoutMs: 500,
      execute: () => 'done',
    });
    const environment = testEnvironment({ tools: [quick] });
    const done = await runToDone(environment, startBatch(environment, [call('quick', {}, 'c-1')]));
    expect(done.messages).toEqual([{ role: 'tool', toolCallId: 'c-1', content: 'done' }]);
    expect(environment.clock.pending).toBe(0);
    expect(environment.clock.now()).toBe(1000);
  });

  it('runs writes to the same target one after another, and reads and unrelated writes side by side', async () => {
    const { ran, tools } = timedTools();
    const environment = testEnvironment({ tools });
    const batch = startBatch(environment, [
      call('write_file', { path: 'a.txt' }, 'w1'),
      call('read_file', { path: 'b.txt' }, 'r1'),
      call('write_file', { path: 'a.txt' }, 'w2'),
      call('read_file', { path: 'c.txt' }, 'r2'),
      call('write_file', { path: 'd.txt' }, 'w3'),
      call('read_file', { path: 'a.txt' }, 'r3'),
    ]);

    const done = await runToDone(environment, batch);

    expect(Object.fromEntries(ran)).toEqual({
      w1: { start: 1000, end: 1010 },
      r1: { start: 1000, end: 1010 },
      w2: { start: 1010, end: 1020 },
      r2: { start: 1000, end: 1010 },
      w3: { start: 1000, end: 1010 },
      r3: { start: 1020, end: 1030 },
    });
    expect(done.messages.map((message) => message.toolCallId)).toEqual(['w1', 'r1', 'w2', 'r2', 'w3', 'r3']);
  });

  it('plans calls with the tool’s own plan hook, and a hook that throws makes the call wait for everything before it', async () => {
    const { ran, tools } = timedTools();
    const environment = testEnvironment({ tools });
    const batch = startBatch(environment, [
      call('transfer', { from: 'ann', to: 'bob' }, 't1'),
      call('transfer', { from: 'cat', to: 'dan' }, 't2'),
      call('transfer', { from: 'bob', to: 'cat' }, 't3'),
      call('read_file', { path: 'notes.txt' }, 'r1'),
      call('transfer', { from: 'broken', to: 'eve' }, 't4'),
    ]);

    await runToDone(environment, batch);

    expect(Object.fromEntries(ran)).toEqual({
      t1: { start: 1000, end: 1010 },
      t2: { start: 1000, end: 1010 },
      t3: { start: 1010, end: 1020 },
      r1: { start: 1000, end: 1010 },
      // Unknown targets: it conflicts with every earlier call, the read included.
      t4: { start: 1020, end: 1030 },
    });
  });

  it('keeps to maxToolConcurrency, starting the next call as one ends', async () => {
    let running = 0;
    let most = 0;
    const starts: number[] = [];
    const busy = defineTool({
      name: 'busy',
      description: 'Takes 10 ms.',
      parameters: z.object({}),
      kind: 'read',
      execute: async (_args, { clock, signal }) => {
        running += 1;
        most = Math.max(most, running);
        starts.push(clockNow(clock));
        try {
          await sleep(clock, 10, signal);
        } finally {
          running -= 1;
        }
        return 'ok';
      },
    });
    const environment = testEnvironment({ tools: [busy], maxToolConcurrency: 2 });
    const batch = startBatch(environment, ['1', '2', '3', '4', '5'].map((n) => call('busy', {}, `c-${n}`)));

    const done = await runToDone(environment, batch);

    expect(most).toBe(2);
    expect(starts).toEqual([1000, 1000, 1010, 1010, 1020]);
    expect(done).toMatchObject({ ended: 5, failed: 0 });
    expect(environment.clock.now()).toBe(1030);
  });

  it('fails the batch with TOOLS.FAILED when its plan cannot run (a cap below one call), rather than hang with an unhandled rejection', async () => {
    // createRuntime accepts any positive maxToolConcurrency; the plan's runner refuses a cap below 1.
    const environment = testEnvironment({ tools: [echo], maxToolConcurrency: 0.5 });
    const batch = startBatch(environment, [call('echo', { text: 'a' }, 'c-1')]);

    await settle();

    expect(batch.received).toMatchObject([{ type: 'TOOLS.FAILED', error: { message: expect.stringContaining('maxConcurrency must be at least 1') } }]);
  });

  it('aborts the running tools when stopped, starts nothing more, and sends no TOOLS.DONE after', async () => {
    const signals: AbortSignal[] = [];
    const started: string[] = [];
    // A tool that, once aborted, tidies up and returns: its late answer must not reach the agent.
    const hang = defineTool({
      name: 'hang',
      description: 'Runs until aborted.',
      parameters: z.object({ path: z.string() }),
      kind: 'write',
      targets: ({ path }) => [path],
      execute: (_args, { signal, toolCallId }) => {
        started.push(toolCallId);
        signals.push(signal);
        return new Promise((resolve) => signal.addEventListener('abort', () => resolve('tidied up')));
      },
    });
    const timed = defineTool({
      name: 'timed',
      description: 'Runs until aborted, with a time limit.',
      parameters: z.object({}),
      kind: 'read',
      targets: () => ['elsewhere'],
      timeoutMs: 60_000,
      execute: (_args, { signal, toolCallId }) => {
        started.push(toolCallId);
        signals.push(signal);
        return new Promise(() => {});
      },
    });
    const environment = testEnvironment({ tools: [hang, timed] });
    // The second write to a.txt waits for the first, and must never start.
    const batch = startBatch(environment, [
      call('hang', { path: 'a.txt' }, 'c-1'),
      call('timed', {}, 'c-2'),
      call('hang', { path: 'a.txt' }, 'c-3'),
    ]);

    await settle();
    expect(started).toEqual(['c-1', 'c-2']);
    expect(environment.clock.pending).toBe(1);

    batch.halt();
    await settle();
    environment.advance(120_000);
    await settle();

    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    for (const signal of signals) expect(signal.reason).toBeInstanceOf(AbortedError);
    expect(started).toEqual(['c-1', 'c-2']);
    expect(batch.received).toEqual([]);
    expect(environment.events.map((event) => event.type)).toEqual(['tool.plan', 'tool.call', 'tool.call']);
    expect(environment.clock.pending).toBe(0);
  });
});
