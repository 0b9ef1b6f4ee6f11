import type { AgentSummary } from '../tools/Delegation.js';

/** The agents as a list for a tool description: name, description, tools and usage examples of each. */
export function listAgents(agents: readonly AgentSummary[]): string {
  return agents
    .map((agent) => {
      const lines = [`- ${agent.name}: ${agent.description.trim()}`, `  Tools: ${agent.tools.length > 0 ? agent.tools.join(', ') : 'none'}`];
      if (agent.examples.length > 0) {
        lines.push('  Examples:', ...agent.examples.map((example) => `    - ${example.trim()}`));
      }
      return lines.join('\n');
    })
    .join('\n');
}

/** The description of `assign_task` as a caller sees it: only the agents it may delegate to are listed. */
export function describeAssignTask(agents: readonly AgentSummary[]): string {
  return [
    'Hands a task to a specialist agent. The agent works on it in a conversation of its own, with its own tools, and',
    'its final answer comes back as this tool\'s result.',
    '',
    'Available agents:',
    listAgents(agents),
    '',
    'How to use it:',
    '- Write `task` as a complete brief: the agent sees nothing of your conversation unless its definition shares it.',
    '- Several assign_task calls in one reply run at the same time: send independent tasks together.',
    '- Set run_in_background to true to get the agent\'s id at once and go on; collect its answer later with task_output.',
    '- Set resume to the id of an agent that has ended to continue its session: it keeps its whole earlier conversation.',
    '',
    'When NOT to use it:',
    '- Reading one known file: read it yourself.',
    '- Searching for one symbol or one string: search for it yourself.',
    '- Simple one-step work you can do directly with your own tools.',
  ].join('\n');
}

/** The description of `parallel_tasks` as a caller sees it. */
export function describeParallelTasks(agents: readonly AgentSummary[]): string {
  return [
    'Runs several tasks at once, each by a specialist agent, and returns when all of them have ended, with a report',
    'of each (completed with its answer, or failed with its error).',
    '',
    'Available agents:',
    listAgents(agents),
  ].join('\n');
}
