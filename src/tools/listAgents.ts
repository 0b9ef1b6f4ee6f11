import type { AgentSummary } from './Delegation.js';

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
