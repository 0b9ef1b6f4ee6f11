import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, type ModelRequest } from 'troupe';
import { ScriptedModel, advanceUntilSettled, assignCall, callTools } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

describe('assign_task, waiting for the answer', () => {
  it("returns the sub-agent's answer with its id, and metadata with its figures", async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('helper', 'Count the TODOs.', { id: 'call_1' })), (request) => `Helper said: ${lastToolMessage(request)?.content}`],
      helper: ['There are 3 TODOs.'],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('helper')] });
    const events = collect(runtime.events$);

    const result = await runtime.run('lead', 'How many TODOs?');

    const spawned = ofType(events, 'agent.spawned').find((event) => event.name === 'helper')!;
    expect(spawned).toMatchObject({ parentId: result.id, toolCallId: 'call_1', depth: 1, description: 'work for helper' });
    const message = lastToolMessage(model.calls.at(-1)!)!;
    expect(message.content).toContain('There are 3 TODOs.');
    expect(message.content).toContain(spawned.agentId);
    expect(message.isError).toBeUndefined();
    expect(message.metadata).toMatchObject({
      agentId: spawned.agentId,
      agentName: 'helper',
      status: 'completed',
      toolCallsExecuted: 0,
      executionTimeMs: expect.any(Number),
      metrics: { own: { modelCalls: 1 }, subtree: { modelCalls: 1 } },
    });
    expect(result.output).toMatch(/^Helper said: There are 3 TODOs\./);
    expect(result.metrics.subtree.modelCalls).toBe(3);
    expect(result.metrics.own.modelCalls).toBe(2);
    expect(runtime.record(spawned.agentId)).toMatchObject({ parentId: result.id, depth: 1, state: 'completed' });
    await runtime.shutdown();
  });

  it('gives an error result naming the reason when the sub-agent fails, never an empty success', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('helper', 'Try.')), 'I will report the failure.'],
      helper: ['   '],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('helper')] });

    await runtime.run('lead', 'Delegate.');

    const message = lastToolMessage(model.calls.at(-1)!)!;
    expect(message.isError).toBe(true);
    expect(message.content).toMatch(/failed \(error\): The model gave an empty answer/);
    expect(message.metadata).toMatchObject({ status: 'failed', reason: 'error' });
    await runtime.shutdown();
  });

  it('describes only the agents the caller may delegate to, with their tools, examples and when not to use it', async () => {
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => (seen.push(request), 'ok'));
    const auditor = defineAgent({
      name: 'auditor',
      description: 'Audits code for security issues.',
      systemPrompt: 'Audit.',
      tools: ['task_output'],
      examples: ['Audit src/auth for injection bugs'],
    });
    const lead = leader('lead', { subagents: ['auditor'] });
    const runtime = createRuntime({ model, agents: [lead, auditor, worker('secret-agent')] });

    await runtime.run('lead', 'Look around.');

    const schema = seen[0]!.tools.find((tool) => tool.name === 'assign_task')!;
    expect(schema.description).toContain('- auditor: Audits code for security issues.');
    expect(schema.description).toContain('Tools: task_output');
    expect(schema.description).toContain('Audit src/auth for injection bugs');
    expect(schema.description).toMatch(/When NOT to use it:[\s\S]*one known file[\s\S]*one symbol[\s\S]*one-step/);
    expect(schema.description).not.toContain('secret-agent');
    expect(schema.parameters).toMatchObject({ required: expect.arrayContaining(['description', 'agent', 'task']) });
    await runtime.shutdown();
  });

  it('refuses an agent the caller may not delegate to, and spawns nothing', async () => {
    const model = scriptedPerAgent({ lead: [callTools(assignCall('secret-agent', 'Leak it.')), 'Refused, fine.'] });
    const runtime = createRuntime({ model, agents: [leader('lead', { subagents: ['helper'] }), worker('helper'), worker('secret-agent')] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Try.');

    const message = lastToolMessage(model.calls.at(-1)!)!;
    expect(message).toMatchObject({ isError: true });
    expect(message.content).toMatch(/may not delegate to "secret-agent".*helper/);
    expect(ofType(events, 'agent.spawned')).toHaveLength(1);
    await runtime.shutdown();
  });
});

describe('several delegations in one turn', () => {
  const threeAtOnce = () =>
    callTools(assignCall('auditor', 'Audit.', { id: 'c1' }), assignCall('docs', 'Update docs.', { id: 'c2' }), assignCall('todos', 'Find TODOs.', { id: 'c3' }));
  const agents = () => [leader(), worker('auditor'), worker('docs'), worker('todos')];

  it('run side by side in simulated time', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      { lead: [threeAtOnce(), 'Summary.'], auditor: ['No issues.'], docs: ['Docs updated.'], todos: ['Two TODOs.'] },
      { latencyMs: 1_000 },
    );
    const runtime = createRuntime({ model, agents: agents(), clock, maxParallel: 3 });
    const events = collect(runtime.events$);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Review the repo.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Summary.' });
    const children = ofType(events, 'agent.started').filter((event) => event.name !== 'lead');
    expect(children.map((event) => event.at)).toEqual([1_000, 1_000, 1_000]);
    const done = ofType(events, 'agent.completed').filter((event) => event.name !== 'lead');
    expect(done.map((event) => event.at)).toEqual([2_000, 2_000, 2_000]);
    expect(clock.now()).toBe(3_000);
    const messages = model.calls.at(-1)!.messages.filter((message) => message.role === 'tool');
    expect(messages.map((message) => message.role === 'tool' && message.toolCallId)).toEqual(['c1', 'c2', 'c3']);
    await runtime.shutdown();
  });

  it('stay within maxParallel: the waiting lead lends its slot, so two run at once under a cap of 2', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      { lead: [threeAtOnce(), 'Summary.'], auditor: ['a'], docs: ['b'], todos: ['c'] },
      { latencyMs: 1_000 },
    );
    const runtime = createRuntime({ model, agents: agents(), clock, maxParallel: 2 });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('lead', 'Review.'));

    const starts = ofType(events, 'agent.started').filter((event) => event.name !== 'lead');
    expect(starts.map((event) => event.at)).toEqual([1_000, 1_000, 2_000]);
    expect(clock.now()).toBe(4_000);
    await runtime.shutdown();
  });

  it('run at most maxToolConcurrency at a time', async () => {
    const clock = simulatedClock();
    const five = callTools(...['a', 'b', 'c', 'd', 'e'].map((key) => assignCall('helper', `Task ${key}`, { id: `c_${key}` })));
    const model = scriptedPerAgent({ lead: [five, 'Done.'], helper: ['ok'] }, { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [leader(), worker('helper')], clock, maxParallel: 10, maxToolConcurrency: 3 });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('lead', 'Fan out.'));

    const starts = ofType(events, 'agent.started').filter((event) => event.name === 'helper');
    expect(starts.map((event) => event.at)).toEqual([1_000, 1_000, 1_000, 2_000, 2_000]);
    await runtime.shutdown();
  });

  it('never deadlock when every slot is held by an agent waiting for its sub-agent', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('middle', 'Go down.')), 'Top done.'],
      middle: [callTools(assignCall('bottom', 'Go further.')), 'Middle done.'],
      bottom: ['Bottom done.'],
    });
    const middle = leader('middle');
    const runtime = createRuntime({ model, agents: [leader('lead'), middle, worker('bottom')], maxParallel: 1 });

    const result = await runtime.run('lead', 'Delegate twice.');

    expect(result).toMatchObject({ status: 'completed', output: 'Top done.' });
    expect(runtime.metrics().total).toMatchObject({ agentsCompleted: 3, agentsFailed: 0 });
    await runtime.shutdown();
  });

  it('runs delegations to a write-role agent one after another', async () => {
    const clock = simulatedClock();
    const editor = defineAgent({ name: 'editor', description: 'Edits files.', systemPrompt: 'Edit.', role: 'write' });
    const model = scriptedPerAgent(
      { lead: [callTools(assignCall('editor', 'Edit a.', { id: 'e1' }), assignCall('editor', 'Edit b.', { id: 'e2' })), 'Done.'], editor: ['edited'] },
      { latencyMs: 1_000 },
    );
    const runtime = createRuntime({ model, agents: [leader(), editor], clock, maxParallel: 5 });
    const events = collect(runtime.events$);

    await advanceUntilSettled(clock, runtime.run('lead', 'Edit two files.'));

    expect(ofType(events, 'agent.started').filter((event) => event.name === 'editor').map((event) => event.at)).toEqual([1_000, 2_000]);
    await runtime.shutdown();
  });
});
