import { ConfigurationError } from '../errors.js';
import { assignTask } from './assignTask.js';
import { indexTools, type Tool } from './defineTool.js';
import { fileTools } from './files/fileTools.js';
import type { Workspace } from './files/Workspace.js';
import { memoryTools } from './memoryTools.js';
import { messagingTools } from './messagingTools.js';
import { parallelTasks } from './parallelTasks.js';
import { spawnAgent } from './spawnAgent.js';
import { taskOutput } from './taskOutput.js';
import { todoTools } from './todoTools.js';

const delegationTools: readonly Tool[] = [assignTask, taskOutput, spawnAgent, parallelTasks] as Tool[];
/** The built-in tools that are the same in every runtime (all but the file tools, which root at its workspace). */
const sharedTools: readonly Tool[] = [...delegationTools, ...messagingTools, ...todoTools, ...memoryTools];

/**
 * The tools every runtime knows by name; an agent lists the ones it uses in its `tools`. The delegation tools are
 * refused (and not offered) to an agent at the runtime's `maxDepth`; the messaging, blackboard, todo and memory tools
 * are not. The file tools here have no workspace (each call says so); a runtime made with `workspace` has them rooted
 * there.
 */
export const builtinTools: readonly Tool[] = Object.freeze([...sharedTools, ...fileTools(undefined)]);

/** The names of the built-in delegation tools (those that say they `delegate`); no tool of a runtime may take one. */
export const DELEGATION_TOOLS: ReadonlySet<string> = new Set(builtinTools.filter((tool) => tool.delegates).map((tool) => tool.name));

/** The names of every built-in tool. */
export const BUILTIN_TOOLS: ReadonlySet<string> = new Set(builtinTools.map((tool) => tool.name));

/**
 * A runtime's tools by name: the built-in ones (the file tools rooted at its workspace, if it has one) and the ones it
 * was given. A given tool takes the place of a built-in one of its name (`reply`, `read_file`, …), except a delegation
 * tool's: that name is a {@link ConfigurationError}.
 */
export function runtimeTools(given: readonly Tool[], workspace?: Workspace): Map<string, Tool> {
  for (const tool of given) {
    if (DELEGATION_TOOLS.has(tool.name)) {
      throw new ConfigurationError(`The tool name "${tool.name}" belongs to a built-in delegation tool; pick another name.`);
    }
  }
  const own = new Set(given.map((tool) => tool.name));
  const builtin = workspace ? [...sharedTools, ...fileTools(workspace)] : builtinTools;
  return indexTools([...builtin.filter((tool) => !own.has(tool.name)), ...given]);
}
