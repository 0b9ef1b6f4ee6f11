import { z } from 'zod';
import type { Clock } from '../clock.js';
import { InvalidToolError, errorMessage } from '../errors.js';
import type { TroupeEventOf } from '../events/events.js';
import type { AgentNotes } from '../memory/NoteStore.js';
import type { ChatMessage, ToolSchema } from '../models/Model.js';
import type { Blackboard } from '../messaging/Blackboard.js';
import type { Messaging } from '../messaging/Messaging.js';
import type { AgentSummary, Delegation } from './Delegation.js';
import type { PlannedCall } from './schedule.js';
import { TOOL_CATEGORIES, type ToolCategory } from './toolApproval.js';
import { describeUnknownKeys, unknownKeys } from '../unknownKeys.js';

/** How a tool touches the world; the planner runs reads side by side and orders conflicting writes. */
export type ToolKind = 'read' | 'write' | 'other';

/** What a running tool knows about its call. */
export interface ToolContext {
  /** The id of the calling agent. */
  agentId: string;
  /** The name of the calling agent's definition. */
  agentName: string;
  /** The id of this tool call, as the model sent it. */
  toolCallId: string;
  /** Aborted when the agent is cancelled, the runtime shuts down, or the tool's `timeoutMs` passes. */
  signal: AbortSignal;
  /** The actor system's clock (simulated in tests). */
  clock: Clock;
  /** The calling agent's conversation, up to the assistant message that made this call. */
  messages: readonly ChatMessage[];
  /** Hands work to other agents on the caller's behalf (what `assign_task` and `task_output` use). */
  delegation: Delegation;
  /** Sends, publishes and waits for messages on the caller's behalf (what `send_message` and its kin use). */
  messaging: Messaging;
  /** The run's shared key-value store. */
  blackboard: Blackboard;
  /** The long-term notes of the runtime's store, on the caller's behalf (what `memory_save` and `memory_search` use). */
  notes: AgentNotes;
  /** Puts an event about the calling agent into the runtime's stream, stamped with its header and the time. */
  announce(event: ToolAnnouncement): void;
}

/** An event a tool may announce about its agent (what `todo_write` announces), without the header the runtime stamps. */
export type ToolAnnouncement = Omit<TroupeEventOf<'todo.updated'>, 'runId' | 'agentId' | 'parentId' | 'toolCallId' | 'at'>;

/**
 * What a tool returns: a string is given to the model as it is, a {@link toolReply} with its error flag and
 * metadata, anything else as JSON.
 */
export type ToolOutput = unknown;

/**
 * The agent a tool is described to, as a {@link ToolDefinition.describe} hook sees it. What it gives is all a
 * description may depend on: the runtime asks once per agent definition (and side of the depth limit), and keeps
 * the answer until an agent is added to the runtime or removed.
 */
export interface ToolAudience {
  /** The name of the agent's definition. */
  readonly agentName: string;
  /** The agents it may hand work to (its `subagents`, or every other agent, plus the ones it made), as listed to it. */
  delegates(): readonly AgentSummary[];
}

/** What a {@link ToolDefinition.plan} hook may look up: the runtime's agents and tools by name. */
export interface PlanLookup {
  /** The `role` of the agent of that name; undefined when it has none or there is no such agent. */
  roleOf(agentName: string): 'read' | 'write' | undefined;
  /**
   * True when every tool the agent of that name has is a `read` tool (so is an agent without tools): its work
   * changes nothing a call of its caller's turn could see. False for an unknown agent.
   */
  readsOnly(agentName: string): boolean;
  /** The tool of that name among the runtime's tools (the built-in ones and those it was given). */
  tool(name: string): Tool | undefined;
}

/** The options of {@link defineTool}. */
export interface ToolDefinition<Params extends z.ZodObject = z.ZodObject> {
  /** The name the model calls: letters, digits, `_` and `-`, at most 64 characters. */
  name: string;
  /** What the tool does, for the model. */
  description: string;
  /** A zod object describing the arguments; the model sees its JSON schema. */
  parameters: Params;
  /** `read` tools run side by side; `write` and `other` tools are ordered when their targets overlap. */
  kind: ToolKind;
  /** The paths or keys a call touches; a write without targets conflicts with every other call. */
  targets?: (args: z.output<Params>) => readonly string[];
  /**
   * How the planner sees one call, when `kind` and `targets` are not enough: its kind and targets from the
   * arguments and what it may look up (`assign_task` is a write when the agent it goes to has the `write` role).
   * Give `plan` or `targets`, not both. Called once per valid call, and answers at once (not a promise); a hook that
   * throws or gives no plan (an unknown kind, targets that are not a list of strings) makes the call a `kind` call
   * with unknown targets.
   *
   * @example
   * plan: ({ account }) => ({ kind: 'write', targets: [`accounts/${account}`] })
   */
  plan?: (args: z.output<Params>, lookup: PlanLookup) => PlannedCall;
  /**
   * The description a given agent sees in place of `description`, or `false` to leave the tool out of what that
   * agent is offered (it can still call a tool it lists). `assign_task` lists here the agents the caller may
   * delegate to, and is left out for a caller with none. Asked when the agent's tool list is made, not per turn, and
   * answers at once: a hook that throws or gives anything else (a promise) fails that agent with an `InvalidToolError`.
   *
   * @example
   * describe: ({ agentName }) => `Moves money, at most ${limits[agentName]} per transfer.`
   */
  describe?: (audience: ToolAudience) => string | false;
  /** True for a tool that hands work to other agents: at the runtime's `maxDepth` it is neither offered nor run. */
  delegates?: boolean;
  /** True for a tool that waits for a person: the agent's idle timeout is paused while it runs. */
  interactive?: boolean;
  /**
   * Ask a person before a call runs: `true`, or a function of the call's arguments (and context) that says whether
   * this one must be approved. The agent waits in `running.acting.waitingForPerson` until `runtime.approve(requestId)`
   * (the call runs) or `runtime.deny(requestId, reason)` (the model gets an error result with the reason); the request
   * is in `runtime.pendingApprovals()` and an `approval.requested` event. A function that throws refuses the call.
   */
  needsApproval?: boolean | ((args: z.output<Params>, context: ToolContext) => boolean | Promise<boolean>);
  /**
   * What the tool touches, for a `toolPolicy` that allows, denies or asks per category: `tool` (default), `sub_agent`
   * (the default of a tool that `delegates`), `mcp`, `file_op` or `db_op`. The file tools are `file_op`, MCP servers'
   * tools `mcp`, `blackboard_write` `db_op`.
   */
  category?: ToolCategory;
  /** A limit on one call, on the actor system's clock; past it the call is aborted and becomes an error result. */
  timeoutMs?: number;
  /**
   * True when running a call twice does no more than running it once (a read, a put of the same value). A call that
   * was running when its process died is then offered to the model again after a resume; any other is reported as
   * interrupted, with the warning that it may or may not have taken effect, and not run again.
   */
  idempotent?: boolean;
  /**
   * True for a tool whose calls take real time outside the runtime's clock and never wait on it: they read or write
   * files, a local database. Under a simulated clock, simulated time stands still while such a call runs (it takes
   * none, however long the disk takes), and such calls run one at a time in the order they started, so two agents'
   * calls never interleave and a seeded simulation repeats (a call whose agent is stopped while it waits its turn never
   * starts). The file tools and the memory tools are. A `realTime` tool must not wait on `context.clock` (nothing
   * would move it) nor for other agents. Its `timeoutMs`, and the agent's idle timeout, cannot end such a call under a
   * simulated clock (time stands still while it runs): a call that never ends holds the simulation, and the
   * `realTime` calls after it, until the process ends.
   */
  realTime?: boolean;
  /** Runs the tool. Throwing (or rejecting) gives the model an error result; the agent goes on. */
  execute: (args: z.output<Params>, context: ToolContext) => ToolOutput | Promise<ToolOutput>;
}

/** A validated tool, ready for a runtime. */
export interface Tool<Params extends z.ZodObject = z.ZodObject> extends Readonly<ToolDefinition<Params>> {
  /** The tool as the model sees it (before a `describe` hook rewrites its description for one agent). */
  readonly schema: ToolSchema;
  /** How the planner sees one call: the definition's `plan`, or its `kind` and `targets`. */
  readonly plan: (args: z.output<Params>, lookup: PlanLookup) => PlannedCall;
}

/** Names the model may call: the pattern OpenAI-compatible servers accept for function names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const KINDS: readonly ToolKind[] = ['read', 'write', 'other'];

/** Every field of a definition (the compiler keeps this list and `ToolDefinition` the same), and a tool's `schema`. */
const TOOL_FIELDS = Object.keys({
  name: true, description: true, parameters: true, kind: true, targets: true, plan: true, describe: true, delegates: true,
  interactive: true, needsApproval: true, category: true, timeoutMs: true, idempotent: true, realTime: true, execute: true, schema: true,
} satisfies Record<keyof ToolDefinition | 'schema', true>);

/**
 * Defines a tool and validates it at once: a bad name, an unknown field (named with the one most likely meant), a
 * missing description, parameters that are not a zod object (or cannot be described as JSON schema), an unknown kind
 * or category, a bad timeout or `needsApproval`, a hook that is not a function (or `plan` beside `targets`), or a
 * `realTime` tool that is `interactive` or `delegates` throw {@link InvalidToolError} before any model is called.
 *
 * @example
 * const readFile = defineTool({
 *   name: 'read_file',
 *   description: 'Reads a text file.',
 *   parameters: z.object({ path: z.string() }),
 *   kind: 'read',
 *   targets: ({ path }) => [path],
 *   execute: ({ path }) => fs.readFile(path, 'utf8'),
 * });
 */
export function defineTool<Params extends z.ZodObject>(definition: ToolDefinition<Params>): Tool<Params> {
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidToolError('defineTool takes a tool definition: { name, description, parameters, kind, execute }', String(definition));
  }
  const { name } = definition;
  const fail = (message: string): never => {
    throw new InvalidToolError(`Tool "${String(name)}": ${message}`, String(name));
  };
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    fail('the name must be 1-64 letters, digits, "_" or "-"');
  }
  // A misspelled field (`timeoutMS`) would be ignored without a word. A defined tool's `schema` is allowed, so a tool
  // can be defined again from a copy of another (`{ ...tool, name: 'other' }`); it is made anew.
  const unknown = unknownKeys(definition, TOOL_FIELDS);
  if (unknown.length > 0) fail(describeUnknownKeys(unknown, 'field'));
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    fail('a description is required');
  }
  if (!(definition.parameters instanceof z.ZodObject)) {
    fail('parameters must be a zod object, such as z.object({ path: z.string() })');
  }
  if (!KINDS.includes(definition.kind)) {
    fail(`kind must be one of ${KINDS.join(', ')}`);
  }
  if (typeof definition.execute !== 'function') fail('execute must be a function');
  for (const hook of ['targets', 'plan', 'describe'] as const) {
    if (definition[hook] !== undefined && typeof definition[hook] !== 'function') fail(`${hook} must be a function`);
  }
  if (definition.targets !== undefined && definition.plan !== undefined) {
    fail('give plan or targets, not both (plan returns the targets too)');
  }
  if (definition.delegates !== undefined && typeof definition.delegates !== 'boolean') fail('delegates must be true or false');
  if (definition.realTime !== undefined && typeof definition.realTime !== 'boolean') fail('realTime must be true or false');
  // Under a simulated clock a realTime call holds time still until it ends: one that waits for a person or for other
  // agents would wait for ever (nothing could move the simulation meanwhile).
  if (definition.realTime === true && (definition.interactive === true || definition.delegates === true)) {
    fail(`a realTime tool may not be ${definition.interactive === true ? 'interactive' : 'delegating'}: it must not wait for a person or for other agents`);
  }
  const { needsApproval, category } = definition;
  if (needsApproval !== undefined && typeof needsApproval !== 'boolean' && typeof needsApproval !== 'function') {
    fail('needsApproval must be true, false or a function of the arguments');
  }
  if (category !== undefined && !TOOL_CATEGORIES.includes(category)) fail(`category must be one of ${TOOL_CATEGORIES.join(', ')}`);
  const { timeoutMs } = definition;
  if (timeoutMs !== undefined && !(Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    fail('timeoutMs must be a positive number');
  }
  let parameters: Record<string, unknown> = {};
  try {
    const { $schema: _ignored, ...rest } = z.toJSONSchema(definition.parameters, { io: 'input' }) as Record<
      string,
      unknown
    >;
    parameters = rest;
  } catch (error) {
    fail(`parameters cannot be described as JSON schema (${errorMessage(error)})`);
  }
  return Object.freeze({
    ...definition,
    schema: Object.freeze({ name, description: definition.description, parameters }),
    plan: definition.plan ?? planByKind(definition.kind, definition.targets),
  });
}

/** The plan of a tool without a `plan` hook: its kind, and its targets if it has them (one shared object if not). */
function planByKind<Args>(kind: ToolKind, targets: ((args: Args) => readonly string[]) | undefined): (args: Args) => PlannedCall {
  if (targets === undefined) {
    const planned: PlannedCall = Object.freeze({ kind });
    return () => planned;
  }
  return (args) => ({ kind, targets: targets(args) });
}

/**
 * Checks a list of tools for duplicate names and returns them by name.
 * @throws InvalidToolError when two tools share a name.
 */
export function indexTools(tools: readonly Tool[]): Map<string, Tool> {
  const byName = new Map<string, Tool>();
  for (const tool of tools) {
    if (byName.has(tool.name) && byName.get(tool.name) !== tool) {
      throw new InvalidToolError(`Two tools are named "${tool.name}"; tool names must be unique.`, tool.name);
    }
    byName.set(tool.name, tool);
  }
  return byName;
}
