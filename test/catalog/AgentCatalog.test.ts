import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineTool, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scripted, scriptedPerAgent, worker } from '../stubs.js';

describe('the depth limit', () => {
  it('offers no delegation tools at maxDepth, refuses a delegation call there, and spawns nothing', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('middle', 'Go down.')), 'Top done.'],
      middle: [callTools(assignCall('bottom', 'Go further.')), 'Middle did it alone.'],
    });
    const runtime = createRuntime({ model, agents: [leader('lead'), leader('middle'), worker('bottom')], maxDepth: 1 });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Delegate twice.');

    const tools = (request: ModelRequest) => request.tools.map((tool) => tool.name);
    const [leadFirst] = model.calls.filter((request) => request.agentName === 'lead');
    const [middleFirst, middleSecond] = model.calls.filter((request) => request.agentName === 'middle');
    expect(tools(leadFirst!)).toEqual(['assign_task', 'task_output']);
    expect(tools(middleFirst!)).toEqual([]);
    expect(lastToolMessage(middleSecond!)).toMatchObject({ isError: true, content: expect.stringMatching(/depth 1.*maxDepth 1/) });
    expect(ofType(events, 'tool.denied')).toEqual([expect.objectContaining({ tool: 'assign_task', reason: 'depth_limit' })]);
    expect(ofType(events, 'agent.spawned').map((event) => event.name)).toEqual(['lead', 'middle']);
    await runtime.shutdown();
  });

  it('maxDepth 0 means no agent may delegate', async () => {
    const model = new ScriptedModel((request) => (request.tools.length === 0 ? 'no tools offered' : 'tools offered'));
    const runtime = createRuntime({ model, agents: [leader(), worker('helper')], maxDepth: 0 });
    expect((await runtime.run('lead', 'x')).output).toBe('no tools offered');
    await runtime.shutdown();
  });
});

describe('tool allow-lists, enforced where tools run', () => {
  it('refuses a tool the agent does not list with an error result and a tool.denied event, and never runs it', async () => {
    let ran = 0;
    const wipe = defineTool({
      name: 'wipe_disk',
      description: 'Wipes the disk.',
      parameters: z.object({}),
      kind: 'write',
      execute: () => (ran += 1, 'wiped'),
    });
    const model = scriptedPerAgent({ reader: [callTools(toolCall('wipe_disk', {})), 'I could not.'] });
    const admin = worker('admin', ['wipe_disk']);
    const runtime = createRuntime({ model, agents: [worker('reader'), admin], tools: [wipe] });
    const events = collect(runtime.events$);

    const result = await runtime.run('reader', 'Clean up.');

    expect(ran).toBe(0);
    expect(result).toMatchObject({ status: 'completed', toolCallsExecuted: 1 });
    expect(lastToolMessage(model.calls.at(-1)!)).toMatchObject({
      isError: true,
      content: expect.stringMatching(/"wipe_disk" is not allowed for agent "reader"/),
    });
    expect(ofType(events, 'tool.denied')).toEqual([expect.objectContaining({ tool: 'wipe_disk', reason: 'not_allowed', agentId: result.id })]);
    expect(model.calls[0]!.tools).toEqual([]);
    await runtime.shutdown();
  });

  it('a sub-agent only gets the tools its own definition lists', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('helper', 'Help.')), 'ok'],
      helper: [callTools(toolCall('assign_task', { description: 'x', agent: 'lead', task: 'loop' })), 'Could not delegate.'],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('helper')] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Go.');

    const helperCalls = model.calls.filter((request) => request.agentName === 'helper');
    expect(helperCalls[0]!.tools).toEqual([]);
    expect(ofType(events, 'tool.denied')).toEqual([expect.objectContaining({ tool: 'assign_task', reason: 'not_allowed' })]);
    await runtime.shutdown();
  });

  it('refuses tool names that clash with the built-in delegation tools', () => {
    const clash = defineTool({ name: 'assign_task', description: 'Mine.', parameters: z.object({}), kind: 'read', execute: () => '' });
    expect(() => createRuntime({ model: scripted([]), agents: [worker()], tools: [clash] })).toThrow(/built-in/);
    expect(() => createRuntime({ model: scripted([]), agents: [leader('lead', { subagents: ['ghost'] })] })).toThrow(
      /"ghost" in subagents/,
    );
  });
});
