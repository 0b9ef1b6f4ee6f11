import { z } from 'zod';
import { defineTool } from './defineTool.js';
import { delegationReply } from './delegationReply.js';

const READ = Object.freeze({ kind: 'read' } as const);
const WRITE = Object.freeze({ kind: 'write' } as const);

/**
 * `spawn_agent`: makes an agent that is not in the catalog (its own system prompt, a subset of the caller's tools, and
 * the caller's reach: the agents the caller may delegate to and its message allow-list) and runs a task with it. A `temporary` agent (the default) is removed when the task ends; a `permanent` one stays
 * available to `assign_task` for the rest of the run. A call is planned as a write when the new agent gets a tool
 * that is not a `read` tool (or one the runtime does not know).
 */
export const spawnAgent = defineTool({
  name: 'spawn_agent',
  description:
    'Creates a new agent with its own system prompt and some of your tools, runs a task with it and returns its ' +
    'answer. Use it when no listed agent fits. A permanent agent can be given more tasks later with assign_task.',
  parameters: z.object({
    name: z.string().min(1).describe('A new agent name: lower-case letters, digits, "-" and "_".'),
    task: z.string().trim().min(1).describe('The whole task for the new agent.'),
    system_prompt: z.string().min(1).describe('Who the agent is and how it should work.'),
    description: z.string().min(1).optional().describe('What the agent is for, in one sentence.'),
    tools: z.array(z.string()).optional().describe('Names of your own tools the agent may use (default none).'),
    lifecycle: z
      .enum(['temporary', 'permanent'])
      .optional()
      .describe('temporary (default): removed when the task ends; permanent: stays available to assign_task.'),
  }),
  kind: 'other',
  delegates: true,
  plan: ({ tools = [] }, lookup) => (tools.some((name) => lookup.tool(name)?.kind !== 'read') ? WRITE : READ),
  execute: async (args, { delegation }) =>
    delegationReply(
      await delegation.spawnAgent({
        name: args.name,
        task: args.task,
        systemPrompt: args.system_prompt,
        ...(args.description === undefined ? {} : { description: args.description }),
        tools: args.tools ?? [],
        lifecycle: args.lifecycle ?? 'temporary',
      }),
    ),
});
