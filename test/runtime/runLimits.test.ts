// The limits that keep a run from running away: maxAgents per run, maxPending for agents started by agents, and
// budgets over a subtree (an agent's and everything it starts) or a whole run.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, parallel, sequence, step, type Model, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools, toolCall } from 'troupe/testing';
import { echoTool, leader, ofType, collect, resident, worker } from '../stubs.js';

/** The tool messages of a request. */
const toolMessages = (request: ModelRequest) => request.messages.filter((message) => message.role === 'tool');

describe('maxAgents', () => {
  /** Every agent asks for `fan` sub-agents of its own kind in its first turn, and answers in its second. */
  async function spawnBomb(fan: number, options: { maxAgents?: number }) {
    const bomb = defineAgent({ name: 'bomb', description: 'Multiplies.', systemPrompt: 'Multiply.', tools: ['assign_task'], subagents: ['bomb'] });
    const model = new ScriptedModel(
      (request) => {
        const offered = request.tools.some((schema) => schema.name === 'assign_task');
        if (!offered || toolMessages(request).length > 0) return 'done';
        return callTools(...Array.from({ length: fan }, (_, index) => assignCall('bomb', `Part ${index}.`, { id: `b${index}` })));
      },
      { record: false },
    );
    const runtime = createRuntime({ model, agents: [bomb], maxDepth: 10, maxParallel: 64, maxToolConcurrency: fan, ...options });
    const events = collect(runtime.events$);
    const result = await runtime.run('bomb', 'Go.');
    const { total } = runtime.metrics();
    await runtime.shutdown();
    const refused = ofType(events, 'tool.result').filter((event) => event.status === 'error' && /maxAgents/.test(event.error ?? ''));
    return { result, total, refused: refused.length };
  }

  it('stops a spawn bomb at 1,000 agents by default: every agent asks for 50 more, at maxDepth 10', async () => {
    const { result, total, refused } = await spawnBomb(50, {});
    // How many agents ran: the whole run stops at the limit, and every one of them ends.
    expect(total.agentsSpawned).toBe(1_000);
    expect(total.agentsCompleted).toBe(1_000);
    expect(total.agentsRunning).toBe(0);
    expect(refused).toBeGreaterThan(0); // the calls past the limit failed; their callers went on
    expect(result.status).toBe('completed');
  });

  it('takes its limit from the runtime, and counts each run on its own', async () => {
    const { total } = await spawnBomb(5, { maxAgents: 40 });
    expect(total.agentsSpawned).toBe(40);
    const bomb = defineAgent({ name: 'bomb', description: 'Multiplies.', systemPrompt: 'Multiply.', tools: ['assign_task'], subagents: ['bomb'] });
    // At maxDepth 1 only the top agent may delegate: each run is the top agent and one sub-agent.
    const offered = (request: ModelRequest) => request.tools.some((schema) => schema.name === 'assign_task');
    const model = new ScriptedModel((request) => (offered(request) && toolMessages(request).length === 0 ? callTools(assignCall('bomb', 'Part.')) : 'done'), { record: false });
    const runtime = createRuntime({ model, agents: [bomb], maxAgents: 2, maxDepth: 1 });
    const runs = await Promise.all([runtime.run('bomb', 'A.'), runtime.run('bomb', 'B.')]);
    expect(runs.map((run) => run.status)).toEqual(['completed', 'completed']);
    expect(runtime.metrics().total.agentsSpawned).toBe(4); // two runs of two: each run has its own count
    await runtime.shutdown();
  });
});

describe('maxPending', () => {
  it('refuses delegations past the number of agents started by agents that wait for a slot', async () => {
    const seen: string[] = [];
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'worker') return 'worked';
        if (toolMessages(request).length === 0) {
          return callTools(...Array.from({ length: 12 }, (_, index) => assignCall('worker', `Part ${index}.`, { id: `p${index}`, background: true })));
        }
        seen.push(...toolMessages(request).map((message) => (message.isError ? `refused: ${message.content}` : 'started')));
        return 'handed out';
      },
      { record: false },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker()], maxParallel: 1, maxPending: 5, maxToolConcurrency: 12 });
    const result = await runtime.run('lead', 'Hand out work.');
    await runtime.idle();
    expect(result.status).toBe('completed');
    expect(seen.filter((text) => text === 'started')).toHaveLength(5);
    expect(seen.filter((text) => text.startsWith('refused'))).toHaveLength(7);
    expect(seen.find((text) => text.startsWith('refused'))).toMatch(/maxPending/);
    expect(runtime.metrics().total.agentsCompleted).toBe(6);
    await runtime.shutdown();
  });
});

describe('budgets over a subtree', () => {
  it("counts every sub-agent's turns against the lead's budget, before each model call: maxTurns is never passed", async () => {
    const { tool } = echoTool();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'lead') {
          return toolMessages(request).length === 0
            ? callTools(assignCall('helper', 'One.', { id: 'a' }), assignCall('helper', 'Two.', { id: 'b' }), assignCall('helper', 'Three.', { id: 'c' }))
            : 'summed up';
        }
        return toolMessages(request).length === 0 ? callTools(toolCall('echo', { text: 'look' })) : 'helped';
      },
    );
    const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['helper'] }), worker('helper', ['echo'])], tools: [tool], maxParallel: 4 });
    const lead = runtime.spawn('lead', 'Split it.', { budget: { maxTurns: 3 } });
    const events = collect(lead.events$);
    const result = await lead.result;
    const subtree = runtime.metrics().agents[lead.id]!.subtree;
    // Three turns fit: the lead's first and two helpers' first. Turns are counted before the model is called, so the
    // budget was spent when the third delegation came (refused: no helper started), and no model was called for the
    // helpers' and the lead's next turns.
    expect(subtree.modelCalls).toBe(3);
    expect(model.calls.filter((request) => request.agentName === 'lead')).toHaveLength(1);
    expect(model.calls.filter((request) => request.agentName === 'helper')).toHaveLength(2);
    const { total } = runtime.metrics();
    expect([total.agentsSpawned, total.agentsFailed]).toEqual([3, 3]); // the lead and two helpers, each with reason budget
    const refused = ofType(events, 'tool.result').filter((event) => event.agentId === lead.id && /budget of agent:lead:.* is spent/.test(event.error ?? ''));
    expect(refused.length).toBeGreaterThan(0);
    expect(refused[0]!.error).toMatch(/is spent \(maxTurns 3 used\)/); // which limit, as well as whose
    expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
    expect(result.error?.message).toMatch(/^The budget of agent:lead:\S+ is spent \(maxTurns 3 used\): no more model turns under it\.$/);
    await runtime.shutdown();
  });

  it('refuses a delegation under a spent budget: the sub-agent is never started', async () => {
    const model = new ScriptedModel((request) => (toolMessages(request).length === 0 ? callTools(assignCall('worker', 'Do it.')) : 'done'));
    const runtime = createRuntime({ model, agents: [leader(), worker()] });
    const lead = runtime.spawn('lead', 'Delegate.', { budget: { maxTurns: 1 } });
    const events = collect(lead.events$);
    const result = await lead.result;
    expect(ofType(events, 'tool.result')[0]).toMatchObject({ status: 'error', error: expect.stringMatching(/budget of agent:lead:.* is spent/) });
    expect(model.calls.map((request) => request.agentName)).toEqual(['lead']);
    expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
    await runtime.shutdown();
  });

  it('fails an agent whose turn took its subtree past its tokens (overshoot: that one turn)', async () => {
    const { tool } = echoTool();
    // Every reply costs 10 tokens (5 in, 5 out): the third takes the subtree to 30, past 25.
    const model = new ScriptedModel(() => ({ ...callTools(toolCall('echo', { text: 'more' })), usage: { inputTokens: 5, outputTokens: 5 } }), { record: false });
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
    const handle = runtime.spawn('worker', 'Spend.', { budget: { maxTokens: 25 } });
    const result = await handle.result;
    expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
    const own = runtime.metrics().agents[handle.id]!.own;
    expect(own.inputTokens + own.outputTokens).toBe(30);
    expect(own.toolCalls).toBe(2); // the turn that crossed the budget ran no tools
    // The failure says which limit the turn crossed, and by how much.
    expect(result.error?.message).toBe('The agent went over its budget: this turn brought its tokens to 30, past maxTokens 25.');
    await runtime.shutdown();
  });

  it("names the budget above a sub-agent whose turn took its lead's subtree past it", async () => {
    const { tool } = echoTool();
    // Every reply costs 10 tokens: the lead's first, then the helper's second takes the lead's subtree to 30, past 25.
    const model = new ScriptedModel(
      (request) => {
        const usage = { inputTokens: 5, outputTokens: 5 };
        if (request.agentName === 'lead') return { ...(toolMessages(request).length === 0 ? callTools(assignCall('helper', 'Dig.')) : { content: 'done' }), usage };
        return { ...callTools(toolCall('echo', { text: 'deeper' })), usage };
      },
      { record: false },
    );
    const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['helper'] }), worker('helper', ['echo'])], tools: [tool] });
    const lead = runtime.spawn('lead', 'Split it.', { budget: { maxTokens: 25 } });
    const events = collect(lead.events$);
    await lead.result;
    const helperFailed = ofType(events, 'agent.failed').find((event) => event.agentId !== lead.id)!;
    expect(helperFailed).toMatchObject({ reason: 'budget' });
    expect(helperFailed.error.message).toBe(`The agent went over the budget of ${lead.id}: this turn brought that subtree's tokens to 30, past maxTokens 25.`);
    await runtime.shutdown();
  });

  describe('a maxCostUsd budget and a model the price table does not know', () => {
    // The model is asked for as `stand-in` and answers as `gpt-9-preview`: no price matches either, so its cost would
    // count as 0 and the budget never trip.
    const unpriced = (script: ConstructorParameters<typeof ScriptedModel>[0]) => new ScriptedModel(script, { name: 'stand-in', model: 'gpt-9-preview', record: false });
    const usage = { inputTokens: 1_000, outputTokens: 1_000 };

    it('fails the agent at its first turn that would go on, before its tools run, and says how to price the model', async () => {
      const { tool, calls } = echoTool();
      const model = unpriced(() => ({ ...callTools(toolCall('echo', { text: 'spend' })), usage }));
      const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
      const result = await runtime.run('worker', 'Spend.', { budget: { maxCostUsd: 0.5 } });
      expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
      expect(result.error?.message).toBe(
        `The model "gpt-9-preview" (asked for as "stand-in") has no price, so its budget (maxCostUsd $0.5) cannot be kept: give its price in USD per million tokens, createRuntime({ prices: { 'stand-in': { input, output } } }).`,
      );
      expect(calls).toEqual([]);
      await runtime.shutdown();
    });

    it("names the budget above, for the runtime's budget and a lead's", async () => {
      const model = unpriced((request) => (request.agentName === 'lead' && toolMessages(request).length === 0 ? { ...callTools(assignCall('helper', 'Dig.')), usage } : { ...callTools(toolCall('echo', { text: 'x' })), usage }));
      const { tool } = echoTool();
      const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['helper'] }), worker('helper', ['echo'])], tools: [tool], budget: { maxCostUsd: 5 } });
      const lead = runtime.spawn('lead', 'Split it.');
      const events = collect(lead.events$);
      const result = await lead.result;
      // The runtime's budget covers the run from its lead: the lead's own first turn is stopped, naming it as its own.
      expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
      expect(result.error?.message).toMatch(/^The model "gpt-9-preview" \(asked for as "stand-in"\) has no price, so its budget \(maxCostUsd \$5\) cannot be kept/);
      expect(ofType(events, 'agent.spawned')).toHaveLength(1);
      await runtime.shutdown();

      // A lead's budget over its sub-agent (the lead's own model priced, the helper's not): the helper's turn names it.
      const mixed = new ScriptedModel(
        (request) =>
          request.agentName === 'lead'
            ? { ...(toolMessages(request).length === 0 ? callTools(assignCall('helper', 'Dig.')) : { content: 'done' }), usage, model: 'gpt-4o-mini' }
            : { ...callTools(toolCall('echo', { text: 'x' })), usage, model: 'gpt-9-preview' },
        { name: 'stand-in', record: false },
      );
      const second = createRuntime({ model: mixed, agents: [leader('lead', { subagents: ['helper'] }), worker('helper', ['echo'])], tools: [tool] });
      const budgeted = second.spawn('lead', 'Split it.', { budget: { maxCostUsd: 5 } });
      const seen = collect(budgeted.events$);
      await expect(budgeted.result).resolves.toMatchObject({ status: 'completed' });
      const helperFailed = ofType(seen, 'agent.failed').find((event) => event.agentId !== budgeted.id)!;
      expect(helperFailed).toMatchObject({ reason: 'budget' });
      expect(helperFailed.error.message).toMatch(new RegExp(`^The model "gpt-9-preview" \\(asked for as "stand-in"\\) has no price, so the budget of ${budgeted.id} \\(maxCostUsd \\$5\\)`));
      await second.shutdown();
    });

    it('runs as before once the model is priced, or when no budget limits cost', async () => {
      const { tool } = echoTool();
      const script = (request: ModelRequest) => (toolMessages(request).length < 2 ? { ...callTools(toolCall('echo', { text: 'x' })), usage } : { content: 'done', usage });
      const priced = createRuntime({ model: unpriced(script), agents: [worker('worker', ['echo'])], tools: [tool], prices: { 'gpt-9': { input: 1, output: 2 } } });
      const result = await priced.run('worker', 'Spend.', { budget: { maxCostUsd: 0.5 } });
      // Priced by prefix (`gpt-9` prices `gpt-9-preview`): three turns of 1,000 + 1,000 tokens cost $0.009.
      expect(result).toMatchObject({ status: 'completed', output: 'done' });
      expect(priced.metrics().total.costUsd).toBeCloseTo(0.009, 12);
      await priced.shutdown();

      const tokensOnly = createRuntime({ model: unpriced(script), agents: [worker('worker', ['echo'])], tools: [tool] });
      await expect(tokensOnly.run('worker', 'Spend.', { budget: { maxTokens: 100_000 } })).resolves.toMatchObject({ status: 'completed' });
      expect(tokensOnly.metrics().total.costUsd).toBe(0);
      await tokensOnly.shutdown();
    });

    it("keeps a program's cost budget in its offline tests: a ScriptedModel of the default name is priced at 0", async () => {
      const { tool, calls } = echoTool();
      const model = new ScriptedModel((request) => (toolMessages(request).length === 0 ? { ...callTools(toolCall('echo', { text: 'x' })), usage } : { content: 'done', usage }), { record: false });
      const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], budget: { maxCostUsd: 5 } });
      await expect(runtime.run('worker', 'Spend.')).resolves.toMatchObject({ status: 'completed', output: 'done' });
      expect(calls).toEqual(['x']);
      expect(runtime.metrics().total.costUsd).toBe(0);
      await runtime.shutdown();
    });

    it('fails a resident with the message too, rather than let it end quietly with its first answer', async () => {
      const runtime = createRuntime({ model: unpriced(() => ({ content: 'Ready.', usage })), agents: [resident('chat')], budget: { maxCostUsd: 5 } });
      const result = await runtime.spawn('chat', 'Chat.').result;
      expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
      expect(result.error?.message).toMatch(/^The model "gpt-9-preview" \(asked for as "stand-in"\) has no price, so its budget \(maxCostUsd \$5\) cannot be kept/);
      await runtime.shutdown();

      // A resident that reaches a limit of its budget still ends with its answer.
      const tokens = createRuntime({ model: unpriced(() => ({ content: 'Ready.', usage })), agents: [resident('chat')], budget: { maxTokens: 100 } });
      await expect(tokens.spawn('chat', 'Chat.').result).resolves.toMatchObject({ status: 'completed', output: 'Ready.' });
      await tokens.shutdown();
    });

    it('lets a reply that reports no usage pass: it costs nothing whatever its price (a server that sends none)', async () => {
      const { tool, calls } = echoTool();
      // A model of its own, as a server without usage answers (a ScriptedModel estimates usage for replies without it).
      const model: Model = {
        name: 'local-llm',
        complete: async (request) => (toolMessages(request).length === 0 ? callTools(toolCall('echo', { text: 'x' })) : { content: 'done' }),
      };
      const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], budget: { maxCostUsd: 5 } });
      await expect(runtime.run('worker', 'Spend.', { budget: { maxCostUsd: 1 } })).resolves.toMatchObject({ status: 'completed', output: 'done' });
      expect(calls).toHaveLength(1);
      await runtime.shutdown();
    });

    it("prices a reply under the name it was asked for when the server's name has no price", async () => {
      const { tool } = echoTool();
      // The agent asks for `gpt-4o-mini`; the server answers as `my-deployment`, which the table does not know.
      const model = new ScriptedModel((request) => (toolMessages(request).length === 0 ? { ...callTools(toolCall('echo', { text: 'x' })), usage, model: 'my-deployment' } : { content: 'done', usage, model: 'my-deployment' }), { record: false });
      const agent = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', tools: ['echo'], model: 'gpt-4o-mini' });
      const runtime = createRuntime({ model, agents: [agent], tools: [tool] });
      await expect(runtime.run('worker', 'Spend.', { budget: { maxCostUsd: 1 } })).resolves.toMatchObject({ status: 'completed' });
      expect(runtime.metrics().total.costUsd).toBeGreaterThan(0);
      await runtime.shutdown();
    });
  });

  it("gives every run the runtime's budget on its own", async () => {
    const { tool } = echoTool();
    const model = new ScriptedModel((request) => (toolMessages(request).length < 2 ? callTools(toolCall('echo', { text: 'again' })) : 'done'), { record: false });
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], budget: { maxTurns: 2 } });
    const [first, second] = await Promise.all([runtime.run('worker', 'A.'), runtime.run('worker', 'B.')]);
    for (const run of [first!, second!]) {
      // The turn that found the budget spent never called the model: it is not counted as one.
      expect(run).toMatchObject({ status: 'failed', reason: 'budget', turns: 2 });
      expect(runtime.metrics().agents[run.id]!.own.modelCalls).toBe(2);
    }
    await runtime.shutdown();
  });

  it("holds a pattern run (a group at the top) to the runtime's budget, all its steps together", async () => {
    const { tool, calls } = echoTool();
    const model = new ScriptedModel(() => ({ ...callTools(toolCall('echo', { text: 'again' })), usage: { inputTokens: 10, outputTokens: 10 } }), { record: false });
    const runtime = createRuntime({ model, agents: [worker('a', ['echo']), worker('b', ['echo'])], tools: [tool], budget: { maxTurns: 3 } });
    const result = await parallel([step('a', 'A.'), step('b', 'B.')], { onFailure: 'continue' }).run(runtime, 'both');
    const steps = Object.values(runtime.metrics().agents).filter((agent) => agent.own.modelCalls > 0);
    // Three model turns for the whole run (not ten for each step, their maxTurns), each step ended by the budget.
    expect(steps.reduce((sum, agent) => sum + agent.own.modelCalls, 0)).toBe(3);
    expect(calls.length).toBeLessThanOrEqual(3);
    expect(result.status).toBe('failed');
    await runtime.shutdown();

    const tokens = createRuntime({ model, agents: [worker('a', ['echo'])], tools: [tool], budget: { maxTokens: 50 } });
    const alone = await sequence([step('a', 'A.')]).run(tokens, 'one');
    expect(alone).toMatchObject({ status: 'failed' });
    expect(alone.error?.message).toMatch(/went over the budget of group:sequence:\S+: this turn brought that subtree's tokens to 60, past maxTokens 50/);
    await tokens.shutdown();
  });

  it("counts a resumed or pooled agent's budget from its launch, not from its earlier runs' figures", async () => {
    // Each run: 40 tokens; the budgets allow 50 tokens and 2 turns a launch. Counted over the runs, the second would be
    // at 60 tokens after its first turn, and its second turn the fourth.
    const turns = () => [{ ...callTools(toolCall('echo', { text: 'a' })), usage: { inputTokens: 10, outputTokens: 10 } }, { content: 'Done.', usage: { inputTokens: 10, outputTokens: 10 } }];
    const { tool } = echoTool();
    const resumed = createRuntime({ model: new ScriptedModel([...turns(), ...turns()]), agents: [worker('worker', ['echo'])], tools: [tool] });
    const budget = { maxTokens: 50, maxTurns: 2 };
    const first = await resumed.run('worker', 'One.', { budget });
    const second = await (await resumed.resume(first.id, 'Two.', { budget })).result;
    expect([first.status, second.status]).toEqual(['completed', 'completed']);
    expect(second.metrics.own).toMatchObject({ inputTokens: 20, outputTokens: 20, modelCalls: 2 });
    await resumed.shutdown();

    const pooledWorker = defineAgent({ name: 'pooled', description: 'Kept.', systemPrompt: 'Work.', tools: ['echo'], persist: true });
    const pooled = createRuntime({ model: new ScriptedModel([...turns(), ...turns()]), agents: [pooledWorker], tools: [tool], budget });
    const one = await pooled.run('pooled', 'One.');
    const two = await pooled.run('pooled', 'Two.');
    expect(two.id).toBe(one.id);
    expect([one.status, two.status]).toEqual(['completed', 'completed']);
    await pooled.shutdown();
  });

  it('holds a resumed agent to the budget of its new launch only', async () => {
    // The first launch had a budget of 25 tokens; the resume has none, and its 40 tokens are fine.
    const turns = () => [{ ...callTools(toolCall('echo', { text: 'a' })), usage: { inputTokens: 10, outputTokens: 10 } }, { content: 'Done.', usage: { inputTokens: 10, outputTokens: 10 } }];
    const { tool } = echoTool();
    const runtime = createRuntime({ model: new ScriptedModel([...turns(), ...turns()]), agents: [worker('worker', ['echo'])], tools: [tool] });
    const first = await runtime.run('worker', 'One.', { budget: { maxTokens: 25 } });
    const second = await (await runtime.resume(first.id, 'Two.')).result;
    expect(second.status).toBe('completed');
    await runtime.shutdown();
  });

  it('refuses a bad budget with a clear error', () => {
    expect(() => createRuntime({ agents: [worker()], budget: { maxTurns: 0 } })).toThrow(/budget.maxTurns must be a whole number/);
    expect(() => createRuntime({ agents: [worker()], maxAgents: 1.5 })).toThrow(/maxAgents must be a whole number/);
  });
});
