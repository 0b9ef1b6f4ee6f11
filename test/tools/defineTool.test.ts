import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, InvalidToolError, sleep, toolReply, type Clock, type ModelRequest } from 'troupe';
import { advanceUntilSettled, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, ofType, scripted, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

const base = { name: 'probe', description: 'Probes.', parameters: z.object({ key: z.string() }), kind: 'read' as const, execute: () => 'ok' };

describe('defineTool hooks, checked at definition', () => {
  it('refuses a plan hook beside targets, and hooks that are not functions', () => {
    expect(() => defineTool({ ...base, targets: ({ key }) => [key], plan: () => ({ kind: 'read' }) })).toThrow(/plan or targets/);
    expect(() => defineTool({ ...base, describe: 'Probes more.' as never })).toThrow(InvalidToolError);
    expect(() => defineTool({ ...base, plan: { kind: 'read' } as never })).toThrow(/plan must be a function/);
    expect(() => defineTool({ ...base, delegates: 'yes' as never })).toThrow(/delegates/);
    expect(() => defineTool({ ...base, realTime: 'yes' as never })).toThrow('realTime must be true or false');
  });

  it('refuses a realTime tool that waits for a person or for other agents (a simulation would hold still for ever)', () => {
    expect(() => defineTool({ ...base, realTime: true, interactive: true })).toThrow(/realTime tool may not be interactive/);
    expect(() => defineTool({ ...base, realTime: true, delegates: true })).toThrow(/realTime tool may not be delegating/);
    expect(defineTool({ ...base, realTime: true }).realTime).toBe(true);
  });

  it('gives every tool a plan: its hook, or its kind and targets', () => {
    const lookup = { roleOf: () => undefined, readsOnly: () => false, tool: () => undefined };
    expect(defineTool(base).plan({ key: 'a' }, lookup)).toEqual({ kind: 'read' });
    expect(defineTool({ ...base, targets: ({ key }) => [key] }).plan({ key: 'a' }, lookup)).toEqual({ kind: 'read', targets: ['a'] });
    expect(defineTool({ ...base, plan: ({ key }) => ({ kind: 'write', targets: [`k/${key}`] }) }).plan({ key: 'a' }, lookup)).toEqual({
      kind: 'write',
      targets: ['k/a'],
    });
  });
});

describe("a tool's plan hook", () => {
  it('orders two calls that plan the same write target, and runs a call with another target beside them', async () => {
    const clock = simulatedClock();
    // Without the hook, `other` calls without targets would run one after another: 0, 1000, 2000.
    const transfer = defineTool({
      name: 'transfer',
      description: 'Moves money out of an account.',
      parameters: z.object({ account: z.string(), amount: z.number() }),
      kind: 'other',
      plan: ({ account }) => ({ kind: 'write', targets: [`accounts/${account}`] }),
      execute: async ({ account }, { clock: toolClock, signal }) => {
        await sleep(toolClock, 1_000, signal);
        return `moved from ${account}`;
      },
    });
    const model = scriptedPerAgent({
      teller: [
        callTools(
          toolCall('transfer', { account: 'a', amount: 5 }, 'a1'),
          toolCall('transfer', { account: 'a', amount: 7 }, 'a2'),
          toolCall('transfer', { account: 'b', amount: 9 }, 'b1'),
        ),
        'Done.',
      ],
    });
    const runtime = createRuntime({ model, agents: [worker('teller', ['transfer'])], tools: [transfer], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('teller', 'Pay three bills.'));

    const startedAt = Object.fromEntries(ofType(events, 'tool.call').map((event) => [event.callId, event.at]));
    expect(startedAt).toEqual({ a1: 0, a2: 1_000, b1: 0 });
    await runtime.shutdown();
  });

  it('may look up the role of the agent a call names', async () => {
    const clock = simulatedClock();
    const ask = defineTool({
      name: 'ask',
      description: 'Asks an agent (a note here; a real tool would delegate).',
      parameters: z.object({ agent: z.string() }),
      kind: 'read',
      plan: ({ agent }, lookup) => ({ kind: lookup.roleOf(agent) === 'write' ? 'write' : 'read' }),
      execute: async ({ agent }, { clock: toolClock, signal }) => {
        await sleep(toolClock, 1_000, signal);
        return `asked ${agent}`;
      },
    });
    const editor = defineAgent({ name: 'editor', description: 'Edits.', systemPrompt: 'Edit.', role: 'write' });
    const model = scriptedPerAgent({
      lead: [
        callTools(
          toolCall('ask', { agent: 'reader' }, 'r1'),
          toolCall('ask', { agent: 'reader' }, 'r2'),
          toolCall('ask', { agent: 'editor' }, 'e1'),
          toolCall('ask', { agent: 'editor' }, 'e2'),
        ),
        'ok',
      ],
    });
    const agents = [worker('lead', ['ask']), editor, worker('reader')];
    const runtime = createRuntime({ model, agents, tools: [ask], clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('lead', 'Ask around.'));

    const startedAt = Object.fromEntries(ofType(events, 'tool.call').map((event) => [event.callId, event.at]));
    // Reads side by side; writes (no targets: they touch anything) after them, one after another.
    expect(startedAt).toEqual({ r1: 0, r2: 0, e1: 1_000, e2: 2_000 });
    await runtime.shutdown();
  });
  it('runs a call as its kind, touching anything, when the hook throws or gives no plan (async, or targets not a list)', async () => {
    const clock = simulatedClock();
    const slowly = async (text: string, toolClock: Clock, signal: AbortSignal) => {
      await sleep(toolClock, 1_000, signal);
      return text;
    };
    const parameters = z.object({ key: z.string() });
    const hooks = {
      throws: () => {
        throw new Error('no plan');
      },
      later: (async () => ({ kind: 'read' as const })) as never,
      text: () => ({ kind: 'write' as const, targets: 'ledger' as never }),
      nothing: () => undefined as never,
    };
    const tools = Object.entries(hooks).map(([name, plan]) =>
      defineTool({ name, description: 'Writes.', parameters, kind: 'write', plan, execute: ({ key }, { clock: toolClock, signal }) => slowly(key, toolClock, signal) }),
    );
    const model = scriptedPerAgent({
      clerk: [callTools(...Object.keys(hooks).map((name) => toolCall(name, { key: name }, name))), 'Done.'],
    });
    const runtime = createRuntime({ model, agents: [worker('clerk', Object.keys(hooks))], tools, clock, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('clerk', 'Write four times.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(ofType(events, 'tool.result').map((event) => [event.callId, event.status, event.content])).toEqual(
      Object.keys(hooks).map((name) => [name, 'ok', name]),
    );
    // Writes that may touch anything: one after another.
    const startedAt = Object.fromEntries(ofType(events, 'tool.call').map((event) => [event.callId, event.at]));
    expect(startedAt).toEqual({ throws: 0, later: 1_000, text: 2_000, nothing: 3_000 });
    await runtime.shutdown();
  });
});

describe("a tool's describe hook", () => {
  const branchTool = () =>
    defineTool({
      name: 'open_ledger',
      description: 'Opens a ledger.',
      parameters: z.object({}),
      kind: 'read',
      describe: ({ agentName }) => (agentName === 'visitor' ? false : `Opens the ledger of the ${agentName.replace('teller-', '')} branch.`),
      execute: () => 'opened',
    });
  const description = (request: ModelRequest | undefined, tool: string) => request?.tools.find((schema) => schema.name === tool)?.description;

  it('gives each caller the description written for it, in the schema the model gets', async () => {
    const model = new ScriptedModel(() => 'ok');
    const agents = [worker('teller-north', ['open_ledger']), worker('teller-south', ['open_ledger'])];
    const runtime = createRuntime({ model, agents, tools: [branchTool()], projectAgentDir: false });

    await runtime.run('teller-north', 'Open it.');
    await runtime.run('teller-south', 'Open it.');
    await runtime.run('teller-north', 'Again.');

    const [north, south, northAgain] = model.calls;
    expect(description(north, 'open_ledger')).toBe('Opens the ledger of the north branch.');
    expect(description(south, 'open_ledger')).toBe('Opens the ledger of the south branch.');
    expect(northAgain!.tools).toBe(north!.tools); // kept: described once per agent, not per turn
    await runtime.shutdown();
  });

  it('leaves the tool out for a caller it returns false for, which may still call it', async () => {
    const model = scripted([callTools(toolCall('open_ledger', {})), (request) => `tools seen: ${request.tools.length}`]);
    const runtime = createRuntime({ model, agents: [worker('visitor', ['open_ledger'])], tools: [branchTool()], projectAgentDir: false });

    const result = await runtime.run('visitor', 'Peek.');

    expect(model.calls[0]!.tools).toEqual([]);
    expect(lastToolMessage(model.calls[1]!)).toMatchObject({ content: 'opened' });
    expect(result.output).toBe('tools seen: 0');
    await runtime.shutdown();
  });

  it('fails the caller with an error naming the tool when the hook throws or answers neither text nor false (an async hook)', async () => {
    const hooks = {
      broken: () => {
        throw new Error('no ledger today');
      },
      later: (async () => 'Opens it later.') as never,
    };
    const tools = Object.entries(hooks).map(([name, describe]) => defineTool({ ...base, name, describe }));
    const runtime = createRuntime({
      model: new ScriptedModel([]),
      agents: Object.keys(hooks).map((name) => worker(`uses-${name}`, [name])),
      tools,
      projectAgentDir: false,
    });

    const broken = await runtime.run('uses-broken', 'Open it.');
    const later = await runtime.run('uses-later', 'Open it.');

    expect(broken).toMatchObject({ status: 'failed', error: { code: 'invalid_tool', fault: 'user' } });
    expect(broken.error?.message).toBe('Tool "broken": its describe hook threw (no ledger today).');
    expect(later).toMatchObject({ status: 'failed', error: { code: 'invalid_tool' } });
    expect(later.error?.message).toBe('Tool "later": its describe hook must answer a description or false at once (it gave a promise).');
    await runtime.shutdown();
  });

  it('lists the agents the caller may delegate to; a tool that delegates is neither offered nor run at maxDepth', async () => {
    const consult = defineTool({
      name: 'consult',
      description: 'Consults an expert.',
      parameters: z.object({ expert: z.string() }),
      kind: 'read',
      delegates: true,
      describe: (audience) => `Consults one of: ${audience.delegates().map((agent) => agent.name).join(', ')}.`,
      execute: ({ expert }) => `consulted ${expert}`,
    });
    const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['consult'], subagents: ['tax', 'law'] });
    const agents = [lead, worker('tax'), worker('law'), worker('art')];
    const script = () => scriptedPerAgent({ lead: [callTools(toolCall('consult', { expert: 'tax' })), (request) => lastToolMessage(request)!.content] });

    const below = script();
    const free = createRuntime({ model: below, agents, tools: [consult], projectAgentDir: false });
    expect((await free.run('lead', 'Ask.')).output).toBe('consulted tax');
    expect(description(below.calls[0], 'consult')).toBe('Consults one of: tax, law.');
    await free.shutdown();

    const atLimit = script();
    const limited = createRuntime({ model: atLimit, agents, tools: [consult], maxDepth: 0, projectAgentDir: false });
    const events = collect(limited.events$);
    expect((await limited.run('lead', 'Ask.')).output).toMatch(/maxDepth 0/);
    expect(atLimit.calls[0]!.tools).toEqual([]);
    expect(ofType(events, 'tool.denied')).toEqual([expect.objectContaining({ tool: 'consult', reason: 'depth_limit' })]);
    await limited.shutdown();
  });
});

describe("a tool reply's metadata", () => {
  it('that JSON cannot hold (a cycle) is an error result, and the run settles (it never did: the end of the agent overflowed the stack)', async () => {
    const loop: Record<string, unknown> = {};
    loop.self = loop;
    const tagger = defineTool({
      name: 'tag',
      description: 'Tags a thing.',
      parameters: z.object({}),
      kind: 'write',
      execute: () => toolReply({ content: 'Tagged.', metadata: { loop } }),
    });
    const model = new ScriptedModel([callTools(toolCall('tag', {})), (request: ModelRequest) => String(lastToolMessage(request)?.content)]);
    const runtime = createRuntime({ model, projectAgentDir: false, tools: [tagger], agents: [worker('worker', ['tag'])] });

    const result = await runtime.run('worker', 'Tag it.');
    await runtime.shutdown();

    expect(result).toMatchObject({ status: 'completed', output: expect.stringMatching(/^Error: The tool's metadata could not be written as JSON \(.*circular/i) });
  });
});
