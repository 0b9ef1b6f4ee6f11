import { z } from 'zod';
import type { Clock } from '../clock.js';
import { InvalidToolError, errorMessage } from '../errors.js';
import type { ChatMessage, ToolSchema } from '../models/Model.js';
import type { Blackboard } from '../messaging/Blackboard.js';
import type { Messaging } from '../messaging/Messaging.js';
import type { Delegation } from './Delegation.js';

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
}

/**
 * What a tool returns: a string is given to the model as it is, a {@link toolReply} with its error flag and
 * metadata, anything else as JSON.
 */
export type ToolOutput = unknown;

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
  /** True for a tool that waits for a person: the agent's idle timeout is paused while it runs. */
  interactive?: boolean;
  /** A limit on one call, on the actor system's clock; past it the call is aborted and becomes an error result. */
  timeoutMs?: number;
  /** Runs the tool. Throwing (or rejecting) gives the model an error result; the agent goes on. */
  execute: (args: z.output<Params>, context: ToolContext) => ToolOutput | Promise<ToolOutput>;
}

/** A validated tool, ready for a runtime. */
export interface Tool<Params extends z.ZodObject = z.ZodObject> extends Readonly<ToolDefinition<Params>> {
  /** The tool as the model sees it. */
  readonly schema: ToolSchema;
}

/** Names the model may call: the pattern OpenAI-compatible servers accept for function names. */
export const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

const KINDS: readonly ToolKind[] = ['read', 'write', 'other'];

/**
 * Defines a tool and validates it at once: a bad name, a missing description, parameters that are not a zod
 * object (or cannot be described as JSON schema), an unknown kind or a bad timeout throw {@link InvalidToolError}
 * before any model is called.
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
  const { name } = definition;
  const fail = (message: string): never => {
    throw new InvalidToolError(`Tool "${String(name)}": ${message}`, String(name));
  };
  if (typeof name !== 'string' || !TOOL_NAME.test(name)) {
    fail('the name must be 1-64 letters, digits, "_" or "-"');
  }
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
  if (definition.targets !== undefined && typeof definition.targets !== 'function') {
    fail('targets must be a function of the arguments');
  }
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
  });
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
