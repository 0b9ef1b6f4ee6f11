/**
 * How the planner sees a delegation (`assign_task`, an item of `parallel_tasks`), and the `targets` and `context`
 * parameters those tools share (the shape of TalkCody's `callAgent`).
 */
import { z } from 'zod';
import type { PlanLookup } from './defineTool.js';
import type { PlannedCall } from './schedule.js';

const READ: PlannedCall = Object.freeze({ kind: 'read' });
const WRITE: PlannedCall = Object.freeze({ kind: 'write' });

/** The `targets` parameter of a delegation: what the sub-agent's work will touch, for the planner. */
export const delegationTargets = z
  .array(z.string().min(1))
  .max(100)
  .optional()
  .describe(
    'The files, directories, globs (src/**/*.ts) or keys (blackboard:plan) the task will change or read. Tasks whose ' +
      'targets overlap run one after another, in the order you give them; the others run side by side.',
  );

/** The `context` parameter of a delegation: what the caller knows that the sub-agent needs, given with its task. */
export const delegationContext = z
  .string()
  .optional()
  .describe('What you know that the agent needs (files read, decisions made, constraints): given to it with its task.');

/** One delegation as the planner needs it: the agent it reaches and the targets it names. */
export interface DelegationTarget {
  agent: string;
  targets?: readonly string[] | undefined;
}

/**
 * The plan of one delegation. Without `targets`, as before targets existed: a write with unknown targets when the
 * agent has the `write` role (delegations to it wait for each other and for everything else), else a read, so a
 * fan-out runs side by side. With `targets`: a read of them when the agent only reads (its role is `read`, or it has
 * no role and every tool it has is a `read` tool), else a write of them.
 */
export function planDelegation({ agent, targets }: DelegationTarget, lookup: PlanLookup): PlannedCall {
  const role = lookup.roleOf(agent);
  if (targets === undefined) return role === 'write' ? WRITE : READ;
  const reads = role === 'read' || (role === undefined && lookup.readsOnly(agent));
  return { kind: reads ? 'read' : 'write', targets };
}

/**
 * The plan of several delegations in one call (`parallel_tasks`): a write when any of them writes, touching the
 * targets of all of them, or unknown targets when one of them names none.
 */
export function planDelegations(items: readonly DelegationTarget[], lookup: PlanLookup): PlannedCall {
  const plans = items.map((item) => planDelegation(item, lookup));
  const write = plans.some((plan) => plan.kind === 'write');
  if (plans.some((plan) => plan.targets === undefined)) return write ? WRITE : READ;
  return { kind: write ? 'write' : 'read', targets: plans.flatMap((plan) => plan.targets ?? []) };
}
