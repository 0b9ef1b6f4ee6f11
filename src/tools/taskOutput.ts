import { z } from 'zod';
import { defineTool } from './defineTool.js';
import { delegationReply } from './delegationReply.js';

/** How long a blocking `task_output` waits when the model names no timeout. */
export const DEFAULT_TASK_OUTPUT_TIMEOUT_MS = 30_000;

/**
 * `task_output`: asks about a sub-agent started in the background. Says it is still running, or returns its
 * answer and figures, or an error for one that failed. `blocking` waits until it ends or `timeout_ms` passes.
 */
export const taskOutput = defineTool({
  name: 'task_output',
  description:
    'Gets the result of an agent started with run_in_background. Says whether it is still running, or returns its ' +
    'answer (or its error). Set blocking to true to wait for it, up to timeout_ms.',
  parameters: z.object({
    agent_id: z.string().min(1).describe('The agent id that assign_task returned.'),
    blocking: z.boolean().optional().describe('Wait until the agent ends (default false: answer at once).'),
    timeout_ms: z
      .number()
      .int()
      .positive()
      .max(3_600_000)
      .optional()
      .describe(`How long a blocking call waits, in milliseconds (default ${DEFAULT_TASK_OUTPUT_TIMEOUT_MS}).`),
  }),
  kind: 'read',
  delegates: true,
  execute: async ({ agent_id, blocking, timeout_ms }, { delegation }) => {
    const timeoutMs = timeout_ms ?? DEFAULT_TASK_OUTPUT_TIMEOUT_MS;
    const output = await delegation.taskOutput(agent_id, { blocking: blocking === true, timeoutMs });
    return delegationReply(output, { timeoutMs });
  },
});
