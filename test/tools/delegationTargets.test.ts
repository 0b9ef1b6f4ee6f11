// assign_task and parallel_tasks with targets and context: targets order delegations in the planner (a delegation to
// an agent that may write is a write of its targets; one to an agent that only reads is a read), and context reaches
// the sub-agent with its task.
import { describe, expect, it } from 'vitest';
import { assignTask, builtinTools, createRuntime, parallelTasks, type PlanLookup, type TroupeEvent } from 'troupe';
import { assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, leader, ofType, scriptedPerAgent, worker } from '../stubs.js';

const lookup: PlanLookup = {
  roleOf: (name) => (name === 'editor' ? 'write' : name === 'reader' ? 'read' : undefined),
  readsOnly: (name) => name === 'looker',
  tool: (name) => builtinTools.find((tool) => tool.name === name),
};
const assign = (agent: string, targets?: string[]) => ({ description: 'x', agent, task: 't', ...(targets ? { targets } : {}) });

describe('the plan of a delegation with targets', () => {
  it('is a write of its targets unless the agent only reads, by its role or by its tools', () => {
    expect(assignTask.plan(assign('editor', ['src/**']), lookup)).toEqual({ kind: 'write', targets: ['src/**'] });
    expect(assignTask.plan(assign('anyone', ['src/a.ts']), lookup)).toEqual({ kind: 'write', targets: ['src/a.ts'] });
    expect(assignTask.plan(assign('reader', ['src/a.ts']), lookup)).toEqual({ kind: 'read', targets: ['src/a.ts'] });
    expect(assignTask.plan(assign('looker', ['src/a.ts']), lookup)).toEqual({ kind: 'read', targets: ['src/a.ts'] });
  });

  it('is what it was before targets without them: a write with unknown targets for a write-role agent, else a read', () => {
    expect(assignTask.plan(assign('editor'), lookup)).toEqual({ kind: 'write' });
    expect(assignTask.plan(assign('anyone'), lookup)).toEqual({ kind: 'read' });
  });

  it('of parallel_tasks is all its tasks together: a write when one writes, unknown targets when one names none', () => {
    const plan = (...tasks: { agent: string; task: string; targets?: string[] }[]) => parallelTasks.plan({ tasks }, lookup);
    expect(plan({ agent: 'looker', task: 't', targets: ['a'] }, { agent: 'anyone', task: 't', targets: ['b/**'] })).toEqual({ kind: 'write', targets: ['a', 'b/**'] });
    expect(plan({ agent: 'looker', task: 't', targets: ['a'] }, { agent: 'reader', task: 't', targets: ['b'] })).toEqual({ kind: 'read', targets: ['a', 'b'] });
    expect(plan({ agent: 'anyone', task: 't', targets: ['a'] }, { agent: 'reader', task: 't' })).toEqual({ kind: 'write' });
  });
});

/** The index of the first event that matches. */
const at = (events: readonly TroupeEvent[], test: (event: TroupeEvent) => boolean) => events.findIndex(test);

describe('delegations with targets in one turn', () => {
  it('run side by side when their targets are apart, one after another when they overlap, in the order asked', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(
          assignCall('editor', 'Fix a.ts.', { id: 'e1', targets: ['src/a.ts'] }),
          assignCall('editor', 'Format every TypeScript file.', { id: 'e2', targets: ['src/**/*.ts'] }),
          assignCall('editor', 'Fix the docs.', { id: 'e3', targets: ['docs/x.md'] }),
          assignCall('reader', 'Review a.ts.', { id: 'r1', targets: ['src/a.ts'] }),
        ),
        'All done.',
      ],
      editor: ['Edited.'],
      reader: ['Looks good.'],
    });
    // The editor may write (blackboard_write is a write tool); the reader has only read tools.
    const runtime = createRuntime({ model, agents: [leader(), worker('editor', ['blackboard_write']), worker('reader', ['blackboard_read'])], maxToolConcurrency: 4 });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Tidy the project.');

    const spawned = (call: string) => at(events, (event) => event.type === 'agent.spawned' && event.toolCallId === call);
    const ended = (call: string) => {
      const id = events[spawned(call)]!.agentId;
      return at(events, (event) => event.type === 'agent.completed' && event.agentId === id);
    };
    expect(spawned('e3')).toBeLessThan(ended('e1')); // apart: side by side
    expect(spawned('e2')).toBeGreaterThan(ended('e1')); // src/**/*.ts holds src/a.ts: after it
    expect(spawned('r1')).toBeGreaterThan(ended('e2')); // a read of src/a.ts after both writes of it
    expect(spawned('r1')).toBeGreaterThan(ended('e1'));
    await runtime.shutdown();
  });
});

describe('context', () => {
  it('reaches the sub-agent below its task, under a heading that names the caller', async () => {
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('editor', 'Fix the parser.', { context: 'The tests in test/parse.test.ts fail since a1b2c3.' })), 'Done.'],
      editor: [(request) => `I read: ${request.messages.find((message) => message.role === 'user')?.content ?? ''}`],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('editor')] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Fix it.');

    const answer = ofType(events, 'agent.completed').find((event) => event.agentId.startsWith('agent:editor'))!.output;
    expect(answer).toBe('I read: Fix the parser.\n\n## Context from lead\n\nThe tests in test/parse.test.ts fail since a1b2c3.');
    await runtime.shutdown();
  });

  it('reaches each task of parallel_tasks that gives one', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(
          toolCall('parallel_tasks', {
            tasks: [
              { agent: 'editor', task: 'One.', context: 'Use tabs.' },
              { agent: 'editor', task: 'Two.' },
            ],
          }),
        ),
        'Done.',
      ],
      editor: [(request) => String(request.messages.find((message) => message.role === 'user')?.content)],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['parallel_tasks'] }), worker('editor')] });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Do both.');

    const answers = ofType(events, 'agent.completed').filter((event) => event.agentId.startsWith('agent:editor')).map((event) => event.output);
    expect(answers.sort()).toEqual(['One.\n\n## Context from lead\n\nUse tabs.', 'Two.']);
    await runtime.shutdown();
  });
});
