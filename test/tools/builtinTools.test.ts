import { describe, expect, it } from 'vitest';
import { assignTask, builtinTools, DELEGATION_TOOLS, parallelTasks, spawnAgent, type AgentSummary, type PlanLookup } from 'troupe';

const lookup: PlanLookup = {
  roleOf: (name) => (name === 'editor' ? 'write' : name === 'reader' ? 'read' : undefined),
  readsOnly: (name) => name === 'looker',
  tool: (name) => builtinTools.find((tool) => tool.name === name),
};
const audience = (delegates: AgentSummary[]) => ({ agentName: 'lead', delegates: () => delegates });
const reader: AgentSummary = { name: 'reader', description: 'Reads things.', tools: ['blackboard_read'], examples: ['Read the notes'] };

describe('the built-in delegation tools', () => {
  it('say they delegate, and are the DELEGATION_TOOLS', () => {
    expect(builtinTools.filter((tool) => tool.delegates).map((tool) => tool.name)).toEqual([...DELEGATION_TOOLS]);
    expect([...DELEGATION_TOOLS].sort()).toEqual(['assign_task', 'parallel_tasks', 'spawn_agent', 'task_output']);
  });

  it('plan a call as a write when it reaches a write-role agent or gives a new agent a tool that is not a read', () => {
    expect(assignTask.plan({ description: 'x', agent: 'editor', task: 't' }, lookup)).toEqual({ kind: 'write' });
    expect(assignTask.plan({ description: 'x', agent: 'reader', task: 't' }, lookup)).toEqual({ kind: 'read' });
    expect(parallelTasks.plan({ tasks: [{ agent: 'reader', task: 't' }, { agent: 'editor', task: 't' }] }, lookup)).toEqual({ kind: 'write' });
    expect(parallelTasks.plan({ tasks: [{ agent: 'reader', task: 't' }] }, lookup)).toEqual({ kind: 'read' });
    const spawn = (tools?: string[]) => spawnAgent.plan({ name: 'n', task: 't', system_prompt: 'p', ...(tools ? { tools } : {}) }, lookup);
    expect(spawn()).toEqual({ kind: 'read' });
    expect(spawn(['blackboard_read'])).toEqual({ kind: 'read' });
    expect(spawn(['blackboard_read', 'blackboard_write'])).toEqual({ kind: 'write' });
    expect(spawn(['no_such_tool'])).toEqual({ kind: 'write' });
  });

  it('describe the agents a caller may delegate to, and are left out for a caller with none', () => {
    expect(assignTask.describe?.(audience([reader]))).toMatch(/Available agents:\n- reader: Reads things\.\n {2}Tools: blackboard_read\n {2}Examples:\n {4}- Read the notes/);
    expect(parallelTasks.describe?.(audience([reader]))).toMatch(/Available agents:\n- reader: Reads things\./);
    expect(assignTask.describe?.(audience([]))).toBe(false);
    expect(parallelTasks.describe?.(audience([]))).toBe(false);
  });
});
