import { assignTask } from './assignTask.js';
import type { Tool } from './defineTool.js';
import { parallelTasks } from './parallelTasks.js';
import { spawnAgent } from './spawnAgent.js';
import { taskOutput } from './taskOutput.js';

/**
 * The tools every runtime knows by name: an agent lists them in its `tools` to delegate. They are refused (and not
 * offered) to an agent at the runtime's `maxDepth`.
 */
export const builtinTools: readonly Tool[] = Object.freeze([assignTask, taskOutput, spawnAgent, parallelTasks] as Tool[]);

/** The names of the delegation tools. */
export const DELEGATION_TOOLS: ReadonlySet<string> = new Set(builtinTools.map((tool) => tool.name));
