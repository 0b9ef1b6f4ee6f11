import { assignTask } from './assignTask.js';
import type { Tool } from './defineTool.js';
import { messagingTools } from './messagingTools.js';
import { parallelTasks } from './parallelTasks.js';
import { spawnAgent } from './spawnAgent.js';
import { taskOutput } from './taskOutput.js';

const delegationTools: readonly Tool[] = [assignTask, taskOutput, spawnAgent, parallelTasks] as Tool[];

/**
 * The tools every runtime knows by name; an agent lists the ones it uses in its `tools`. The delegation tools are
 * refused (and not offered) to an agent at the runtime's `maxDepth`; the messaging and blackboard tools are not.
 */
export const builtinTools: readonly Tool[] = Object.freeze([...delegationTools, ...messagingTools]);

/** The names of the delegation tools. */
export const DELEGATION_TOOLS: ReadonlySet<string> = new Set(delegationTools.map((tool) => tool.name));

/** The names of every built-in tool. */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set(builtinTools.map((tool) => tool.name));
