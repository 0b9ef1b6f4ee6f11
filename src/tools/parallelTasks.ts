import { z } from 'zod';
import { errorMessage } from '../errors.js';
import { errorInfo } from '../failure.js';
import type { AgentSummary } from './Delegation.js';
import { defineTool } from './defineTool.js';
import { listAgents } from './listAgents.js';
import { delegationContext, delegationTargets, planDelegations } from './planDelegation.js';
import { toolReply } from './toolReply.js';

/** One line of a `parallel_tasks` report. */
export interface TaskReport {
  agent: string;
  agentId?: string;
  status: 'completed' | 'failed';
  output?: string;
  reason?: string;
  /** The code of the failure (see `ErrorInfo`), beside its message. */
  code?: string;
  error?: string;
}

/**
 * `parallel_tasks`: fans several tasks out to agents at once and returns when all have ended, with
 * `{ completed, failed, reports }`. A task that could not be handed over (an unknown agent, say) is a failed
 * report; the others still run. Each caller sees the agents it may delegate to in the description (and is not
 * offered the tool when there are none). Each task may name `targets` and give `context`, as `assign_task`'s do; the
 * call is planned as all its tasks together (see `planDelegations`): a write when one of them writes.
 */
export const parallelTasks = defineTool({
  name: 'parallel_tasks',
  description: 'Runs several tasks at once, each by an agent, and reports on each when all have ended.',
  parameters: z.object({
    tasks: z
      .array(
        z.object({
          agent: z.string().min(1).describe('The name of the agent for this task.'),
          task: z.string().trim().min(1).describe('The whole task for that agent.'),
          targets: delegationTargets,
          context: delegationContext,
        }),
      )
      .min(1)
      .max(50)
      .describe('The tasks to run at the same time.'),
  }),
  kind: 'other',
  delegates: true,
  describe: (audience) => {
    const agents = audience.delegates();
    return agents.length > 0 && describeParallelTasks(agents);
  },
  plan: ({ tasks }, lookup) => planDelegations(tasks, lookup),
  execute: async ({ tasks }, { delegation }) => {
    const reports = await Promise.all(
      tasks.map(async ({ agent, task, context }): Promise<TaskReport> => {
        try {
          const result = await delegation.delegate({ agent, task, description: `parallel task for ${agent}`, ...(context === undefined ? {} : { context }) });
          if (result.status === 'completed') return { agent, agentId: result.agentId, status: 'completed', output: result.output ?? '' };
          if (result.status === 'failed') {
            return { agent, agentId: result.agentId, status: 'failed', reason: result.reason ?? 'error', code: result.error?.code ?? 'unexpected', error: result.error?.message ?? '' };
          }
          return { agent, agentId: result.agentId, status: 'failed', error: 'The agent did not end.' };
        } catch (error) {
          return { agent, status: 'failed', reason: 'refused', code: errorInfo(error, 'user').code, error: errorMessage(error) };
        }
      }),
    );
    const completed = reports.filter((report) => report.status === 'completed').length;
    const summary = { completed, failed: reports.length - completed, reports };
    return toolReply({ content: JSON.stringify(summary, null, 2), isError: completed === 0, metadata: summary });
  },
});

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
