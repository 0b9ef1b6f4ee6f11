import { InvalidAgentError } from '../errors.js';
import type { Model } from '../models/Model.js';
import type { Tool } from '../tools/defineTool.js';

/** Agent names: lower-case letters, digits, `_` and `-`, starting with a letter or digit, at most 64 long. */
export const AGENT_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;

/** The options of {@link defineAgent}. */
export interface AgentDefinition {
  /** The name agents are spawned by, such as `code-reviewer`. */
  name: string;
  /** What the agent is for; shown to agents that may delegate to it. */
  description: string;
  /** The system prompt every conversation of this agent starts with. */
  systemPrompt: string;
  /**
   * The tools this agent may call: tool objects, or names of tools given to `createRuntime({ tools })`.
   * An agent gets no tool it does not list.
   */
  tools?: readonly (Tool | string)[];
  /** A model for this agent, or a model name passed to the runtime's model (which may use it instead of its own). */
  model?: Model | string;
  /** Sampling temperature passed to the model. */
  temperature?: number;
  /** The most model turns before the agent fails with `max_turns` (default: the runtime's, 10). */
  maxTurns?: number;
  /** Idle timeout for this agent in ms (default: the runtime's, 5 minutes). */
  idleTimeoutMs?: number;
}

/** A validated agent definition. */
export type Agent = Readonly<AgentDefinition>;

/**
 * Defines an agent and validates it at once: the name must match {@link AGENT_NAME}, the description and system
 * prompt must be non-empty, and the limits must be positive. A bad definition throws {@link InvalidAgentError}.
 */
export function defineAgent(definition: AgentDefinition): Agent {
  const name = String(definition.name);
  const fail = (message: string): never => {
    throw new InvalidAgentError(`Agent "${name}": ${message}`, name);
  };
  if (!AGENT_NAME.test(name)) fail('the name must match [a-z0-9][a-z0-9_-]{0,63}');
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    fail('a description is required');
  }
  if (typeof definition.systemPrompt !== 'string' || definition.systemPrompt.trim() === '') {
    fail('a system prompt is required');
  }
  positiveInteger(definition.maxTurns, 'maxTurns', fail);
  if (definition.idleTimeoutMs !== undefined && !(definition.idleTimeoutMs > 0)) {
    fail('idleTimeoutMs must be a positive number');
  }
  const { temperature } = definition;
  if (temperature !== undefined && !(Number.isFinite(temperature) && temperature >= 0 && temperature <= 2)) {
    fail('temperature must be between 0 and 2');
  }
  const model = definition.model;
  if (model !== undefined && typeof model !== 'string' && typeof model?.complete !== 'function') {
    fail('model must be a Model or a model name');
  }
  const seen = new Set<string>();
  for (const tool of definition.tools ?? []) {
    const toolName = typeof tool === 'string' ? tool : tool?.name;
    if (typeof toolName !== 'string') fail('tools must be tools made by defineTool() or tool names');
    if (seen.has(toolName)) fail(`the tool "${toolName}" is listed twice`);
    seen.add(toolName);
  }
  return Object.freeze({ ...definition, tools: definition.tools ? Object.freeze([...definition.tools]) : undefined });
}

function positiveInteger(value: number | undefined, field: string, fail: (message: string) => never): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) fail(`${field} must be a positive integer`);
}
