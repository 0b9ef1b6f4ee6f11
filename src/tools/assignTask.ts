import { z } from 'zod';
import type { AgentSummary } from './Delegation.js';
import { defineTool } from './defineTool.js';
import { delegationReply } from './delegationReply.js';
import { listAgents } from './listAgents.js';
import { delegationContext, delegationTargets, planDelegation } from './planDelegation.js';

/**
 * `assign_task`: hands a task to a specialist agent and returns its final answer (or, in the background, its id at
 * once). Each caller sees a description that lists only the agents it may delegate to (it is not offered the tool
 * when there are none). Optional `targets` (paths, directories, globs or keys the task touches) order it against the
 * turn's other calls, and optional `context` is given to the sub-agent below its task. Without targets, a call is
 * planned as a write when the agent it goes to has the `write` role, so delegations to such an agent in one turn run
 * one after another; with targets, as a write of them unless the agent only reads (see `planDelegation`).
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
    targets: delegationTargets,
    context: delegationContext,
  }),
  kind: 'other',
  delegates: true,
  describe: (audience) => {
    const agents = audience.delegates();
    return agents.length > 0 && describeAssignTask(agents);
  },
  plan: (args, lookup) => planDelegation(args, lookup),
  // A promise chain rather than an async function: nothing of the call is kept suspended while the sub-agent runs.
  execute: (args, { delegation }) =>
    delegation
      // Absent options left undefined rather than spread in: a fan-out makes one request per sub-agent.
      .delegate({
        agent: args.agent,
        task: args.task,
        description: args.description,
        background: args.run_in_background === true,
        resume: args.resume,
        context: args.context,
      })
      .then(delegationReply),
});

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
    '- Set targets to the files, directories, globs or keys the task changes: tasks whose targets overlap run one after',
    '  another, in your order; put what the agent needs to know from you in context.',
    '',
    'When NOT to use it:',
    '- Reading one known file: read it yourself.',
    '- Searching for one symbol or one string: search for it yourself.',
    '- Simple one-step work you can do directly with your own tools.',
  ].join('\n');
}
