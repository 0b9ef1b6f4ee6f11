import { z } from 'zod';
import { defineTool } from './defineTool.js';
import { delegationReply } from './delegationReply.js';

/**
 * `assign_task`: hands a task to a specialist agent and returns its final answer (or, in the background, its id at
 * once). The description the model sees is written by the runtime for each caller, listing only the agents it may
 * delegate to.
 */
export const assignTask = defineTool({
  name: 'assign_task',
  description: 'Hands a task to a specialist agent and returns its answer.',
  parameters: z.object({
    description: z.string().min(1).describe('A 5-10 word summary of the task.'),
    agent: z.string().min(1).describe('The name of the agent to hand the task to, from the list of available agents.'),
    task: z.string().trim().min(1).describe('The whole task: everything the agent needs to know to do it.'),
    run_in_background: z
      .boolean()
      .optional()
      .describe('Return at once with the agent id instead of waiting; collect the answer later with task_output.'),
    resume: z.string().min(1).optional().describe('The id of an earlier agent whose session to continue.'),
  }),
  kind: 'other',
  execute: async (args, { delegation }) =>
    delegationReply(
      await delegation.delegate({
        agent: args.agent,
        task: args.task,
        description: args.description,
        background: args.run_in_background === true,
        ...(args.resume === undefined ? {} : { resume: args.resume }),
      }),
    ),
});
