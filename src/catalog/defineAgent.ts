import { InvalidAgentError } from '../errors.js';
import { isTopicName, TOPIC_PREFIX } from '../messaging/Message.js';
import type { Model } from '../models/Model.js';
import { intensityProblem, restartModeProblem, type RestartIntensity, type RestartMode } from '../restart.js';
import { retryProblem, type RetryOptions } from '../retry.js';
import type { Tool } from '../tools/defineTool.js';
import { McpServerEntries, mcpConfigProblem, readMcpEntries } from '../tools/mcp/McpServerConfig.js';
import { INBOX_FIELDS, describeUnknownKeys, nestedFieldsProblem, unknownKeys } from '../unknownKeys.js';

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
   * An agent gets no tool it does not list. An MCP server's tools are named `server:tool` (`files:read_file`), and
   * `server:*` lists every tool of that server.
   */
  tools?: readonly (Tool | string)[];
  /**
   * MCP servers whose every tool this agent gets, in Claude Code's shapes: a mapping of servers by name
   * (`{ files: { command: 'npx', args: [...] } }`, `{ docs: { type: 'http', url } }`), or a list whose items name a
   * server of the runtime (`'files'`) or define one (`{ files: { command, args } }`). A server defined here takes the
   * place of the runtime's of the same name for this agent (the two share one process when defined alike).
   */
  mcpServers?: McpServerEntries;
  /** A model for this agent, or a model name passed to the runtime's model (which may use it instead of its own). */
  model?: Model | string;
  /** Sampling temperature passed to the model. */
  temperature?: number;
  /** The most model turns before the agent fails with `max_turns` (default: the runtime's, 10). */
  maxTurns?: number;
  /** Idle timeout for this agent in ms (default: the runtime's, 5 minutes). */
  idleTimeoutMs?: number;
  /**
   * How this agent's failed model calls are tried again: `{ attempts?, baseMs?, maxMs? }`, each field over the
   * runtime's (a spawn's over this). See `RuntimeOptions.retry`.
   */
  retry?: RetryOptions;
  /**
   * Whether a failed run of this agent is started again: `never` (default) or `on-failure`, which restarts it after a
   * failure with reason `error` or `timeout`, under the same id and fresh from its task (its caller waits on and gets
   * the last attempt's result), at most `restartIntensity.max` times within `restartIntensity.withinMs`; past that the
   * failure goes to the caller (`agent.escalated`). A spawn's `restart` is over this. See `RestartMode`.
   */
  restart?: RestartMode;
  /** At most this many restarts within this window on the runtime's clock (default 3 within 60,000 ms). */
  restartIntensity?: RestartIntensity;
  /**
   * The agents this one may hand tasks to with `assign_task` and `parallel_tasks` (default: every other agent of
   * the runtime, and the permanent agents made during the run). Delegation also needs those tools in `tools`.
   */
  subagents?: readonly string[];
  /** Example tasks, shown to agents that may delegate to this one. */
  examples?: readonly string[];
  /**
   * `write` for an agent that changes shared things: delegations to it in one turn run one after another, in the
   * order asked, and reads asked after it wait for it (only those whose targets overlap, when a delegation names
   * `targets`). `read`: delegations to it run side by side, a delegation with targets as a read of them. Default:
   * delegations run side by side, and one that names `targets` is a write of them unless every tool of the agent is
   * a `read` tool.
   */
  role?: 'read' | 'write';
  /**
   * Start with the caller's conversation before the task when delegated to: `true` for all of it, a number for
   * only the last N messages. Default: the sub-agent starts with its task alone.
   */
  shareContext?: boolean | number;
  /**
   * Keep the agent after its task for the next task of the same kind: it goes back to the runtime's pool and a
   * later spawn of this agent reuses it (same id, conversation kept) instead of starting afresh.
   */
  persist?: boolean;
  /**
   * `false` runs this agent's tool calls of a turn one at a time, in the model's order; `true` lets the planner run
   * independent ones side by side. Default: the runtime's `enableParallelExecution` (true unless it says otherwise).
   */
  enableParallelExecution?: boolean;
  /**
   * A resident agent lives on after it answers: it waits for messages and answers them, until it is stopped
   * (`runtime.stop`, its parent, shutdown), calls `finish`, or runs out of turns or budget. Its result is its last
   * answer. Resident agents get 1,000 turns unless `maxTurns` says otherwise.
   */
  resident?: boolean;
  /**
   * Keep at most this many messages of the conversation after the system prompt (older ones are dropped as it grows,
   * never a tool result without its call): bounds the context and memory of a long-lived agent. Default: all.
   */
  historyLimit?: number;
  /** Topics the agent subscribes to from the start, by name (`news`, not `topic:news`; checked when defined). */
  subscribe?: readonly string[];
  /**
   * Tools it must call (each at least once, without an error) before it gives its final answer or calls `finish`,
   * such as `['write_report']`. An answer before then is not taken: the agent is told which are missing and goes on; if
   * its turns run out first it fails with `required_tools`. Each must be one of its `tools`.
   */
  requiredToolCalls?: readonly string[];
  /** Its inbox: how many messages wait at most (default: the runtime's, 256), and what a full one does. */
  inbox?: { capacity?: number; overflow?: 'reject' | 'drop-oldest' };
  /**
   * Whom it may send messages to: agent names, and `topic:<name>` for topics it may publish to (default: anyone).
   * Replies to messages it read, and messages to code (`runtime`), are always allowed; the runtime's `messagePolicy`
   * still decides each of them.
   */
  canMessage?: readonly string[];
}

/** A validated agent definition. */
export type Agent = Readonly<AgentDefinition>;

/** Every field of a definition (the compiler keeps this list and `AgentDefinition` the same). */
const AGENT_FIELDS = Object.keys({
  name: true, description: true, systemPrompt: true, tools: true, mcpServers: true, model: true, temperature: true,
  maxTurns: true, idleTimeoutMs: true, retry: true, restart: true, restartIntensity: true, subagents: true, examples: true,
  role: true, shareContext: true, persist: true, enableParallelExecution: true, resident: true, historyLimit: true,
  subscribe: true, requiredToolCalls: true, inbox: true, canMessage: true,
} satisfies Record<keyof AgentDefinition, true>);

/**
 * Defines an agent and validates it at once: the name must match {@link AGENT_NAME} (and not be `runtime`, the address
 * of code in messages), no field may be unknown (the one most likely meant is named), the description and system
 * prompt must be non-empty, the limits positive, and every other field of its type (topics without `topic:`, the
 * required tools among its `tools`). A bad definition throws {@link InvalidAgentError}.
 */
export function defineAgent(definition: AgentDefinition): Agent {
  if (typeof definition !== 'object' || definition === null) {
    throw new InvalidAgentError('defineAgent takes an agent definition: { name, description, systemPrompt, tools?, … }', String(definition));
  }
  const name = String(definition.name);
  const fail = (message: string): never => {
    throw new InvalidAgentError(`Agent "${name}": ${message}`, name);
  };
  if (!AGENT_NAME.test(name)) fail('the name must match [a-z0-9][a-z0-9_-]{0,63}');
  // A misspelled field (`maxTurn`) would be ignored and its default used without a word.
  const unknown = unknownKeys(definition, AGENT_FIELDS);
  if (unknown.length > 0) fail(describeUnknownKeys(unknown, 'field'));
  if (name === 'runtime') fail('"runtime" is the address of code in messages; pick another name');
  if (typeof definition.description !== 'string' || definition.description.trim() === '') {
    fail('a description is required');
  }
  if (typeof definition.systemPrompt !== 'string' || definition.systemPrompt.trim() === '') {
    fail('a system prompt is required');
  }
  checkLimits(definition, fail);
  const { temperature } = definition;
  if (temperature !== undefined && !(Number.isFinite(temperature) && temperature >= 0 && temperature <= 2)) {
    fail('temperature must be between 0 and 2');
  }
  const model = definition.model;
  if (model !== undefined && typeof model !== 'string' && typeof model?.complete !== 'function') {
    fail('model must be a Model or a model name');
  }
  for (const [field, list] of [
    ['subagents', definition.subagents],
    ['examples', definition.examples],
    ['subscribe', definition.subscribe],
    ['canMessage', definition.canMessage],
    ['requiredToolCalls', definition.requiredToolCalls],
  ] as const) {
    if (list !== undefined && !(Array.isArray(list) && list.every((item) => typeof item === 'string' && item.trim() !== ''))) {
      fail(`${field} must be a list of non-empty strings`);
    }
  }
  if (definition.role !== undefined && definition.role !== 'read' && definition.role !== 'write') {
    fail('role must be "read" or "write"');
  }
  const { shareContext } = definition;
  if (shareContext !== undefined && typeof shareContext !== 'boolean' && !(Number.isInteger(shareContext) && shareContext > 0)) {
    fail('shareContext must be true, false or a positive whole number of messages');
  }
  if (definition.persist !== undefined && typeof definition.persist !== 'boolean') fail('persist must be true or false');
  if (definition.enableParallelExecution !== undefined && typeof definition.enableParallelExecution !== 'boolean') {
    fail('enableParallelExecution must be true or false');
  }
  if (definition.resident !== undefined && typeof definition.resident !== 'boolean') fail('resident must be true or false');
  positiveInteger(definition.historyLimit, 'historyLimit', fail);
  for (const topic of definition.subscribe ?? []) {
    if (!isTopicName(topic)) fail(`subscribe: "${topic}" is not a topic name (give the name, without "${TOPIC_PREFIX}")`);
  }
  const { inbox } = definition;
  if (inbox !== undefined) {
    if (typeof inbox !== 'object' || inbox === null) fail('inbox must be { capacity?, overflow? }');
    const unknown = nestedFieldsProblem(inbox, INBOX_FIELDS, 'inbox');
    if (unknown) fail(unknown);
    positiveInteger(inbox.capacity, 'inbox.capacity', fail);
    if (inbox.overflow !== undefined && inbox.overflow !== 'reject' && inbox.overflow !== 'drop-oldest') {
      fail('inbox.overflow must be "reject" or "drop-oldest"');
    }
  }
  checkTools(definition, fail);
  checkRequired(definition, fail);
  return Object.freeze({
    ...definition,
    tools: definition.tools ? Object.freeze([...definition.tools]) : undefined,
    subagents: definition.subagents ? Object.freeze([...definition.subagents]) : undefined,
    examples: definition.examples ? Object.freeze([...definition.examples]) : undefined,
    subscribe: definition.subscribe ? Object.freeze([...definition.subscribe]) : undefined,
    canMessage: definition.canMessage ? Object.freeze([...definition.canMessage]) : undefined,
    inbox: definition.inbox ? Object.freeze({ ...definition.inbox }) : undefined,
    retry: definition.retry ? Object.freeze({ ...definition.retry }) : undefined,
    restartIntensity: definition.restartIntensity ? Object.freeze({ ...definition.restartIntensity }) : undefined,
  });
}

/** Its tools (each a tool or a name, listed once) and its MCP servers. */
function checkTools(definition: AgentDefinition, fail: (message: string) => never): void {
  if (definition.tools !== undefined && !Array.isArray(definition.tools)) fail('tools must be a list of tools made by defineTool() or tool names');
  const seen = new Set<string>();
  for (const tool of definition.tools ?? []) {
    const toolName = typeof tool === 'string' ? tool : tool?.name;
    if (typeof toolName !== 'string') fail('tools must be tools made by defineTool() or tool names');
    if (seen.has(toolName)) fail(`the tool "${toolName}" is listed twice`);
    seen.add(toolName);
  }
  if (definition.mcpServers !== undefined) {
    const problem = mcpConfigProblem(definition.mcpServers, 'mcpServers', McpServerEntries);
    if (problem !== undefined) fail(problem);
  }
}

/** The turn, time, retry and restart limits of a definition. */
function checkLimits(definition: AgentDefinition, fail: (message: string) => never): void {
  positiveInteger(definition.maxTurns, 'maxTurns', fail);
  // A number, not just something above 0: a string ('1000', from a config file) passed `> 0`, and the clock then added
  // it to the time as text (at 100 ms, '1000' made a timeout due at 1,001,000 ms).
  const idle: unknown = definition.idleTimeoutMs;
  if (idle !== undefined && !(typeof idle === 'number' && idle > 0)) {
    fail('idleTimeoutMs must be a positive number');
  }
  const retry = retryProblem(definition.retry);
  if (retry !== undefined) fail(retry.replace(/\.$/, ''));
  const restart = restartModeProblem(definition.restart) ?? intensityProblem(definition.restartIntensity);
  if (restart !== undefined) fail(restart.replace(/\.$/, ''));
}

function positiveInteger(value: number | undefined, field: string, fail: (message: string) => never): void {
  if (value !== undefined && !(Number.isInteger(value) && value > 0)) fail(`${field} must be a positive integer`);
}

/**
 * Each required tool must be one the agent may call: among its `tools`, where a `server:*` entry covers that server's,
 * as each server of its `mcpServers` does (an agent gets every tool of a server it lists there).
 */
function checkRequired(definition: AgentDefinition, fail: (problem: string) => never): void {
  const { requiredToolCalls: required, tools = [] } = definition;
  if (!required) return;
  const { own, named } = definition.mcpServers === undefined ? { own: new Map(), named: [] } : readMcpEntries(definition.mcpServers);
  const names = [...tools.map((tool) => (typeof tool === 'string' ? tool : tool.name)), ...[...own.keys(), ...named].map((server) => `${server}:*`)];
  const covered = (name: string) => names.some((tool) => tool === name || (tool.endsWith(':*') && name.startsWith(tool.slice(0, -1))));
  const missing = required.filter((name) => !covered(name));
  if (missing.length > 0) fail(`requiredToolCalls names ${missing.join(', ')}, which ${missing.length === 1 ? 'is' : 'are'} not among its tools`);
}
