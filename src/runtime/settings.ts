import { toolPolicyProblem } from '../tools/toolApproval.js';
import { resolve } from 'node:path';
import { ConfigurationError } from '../errors.js';
import type { Clock } from '../clock.js';
import { JsonFileMemory } from '../memory/JsonFileMemory.js';
import { isStatelyInspector } from '../inspect/statelyInspector.js';
import type { AgentBudget } from '../machines/agentTypes.js';
import { checkRetry, retryPolicy, type RetryPolicy } from '../retry.js';
import { McpServerConfigs, mcpConfigProblem, type McpServerConfig } from '../tools/mcp/McpServerConfig.js';
import { BUDGET_FIELDS, INBOX_FIELDS, describeUnknownKeys, nestedFieldsProblem, unknownKeys } from '../unknownKeys.js';
import { checkRecordingTarget } from '../views/recordingTarget.js';
import type { GroupOptions, RuntimeOptions, SpawnOptions } from './Runtime.js';

/** The runtime's limits, with defaults filled in. */
export interface Settings {
  maxParallel: number;
  maxTurns: number;
  idleTimeoutMs: number;
  maxToolConcurrency: number;
  maxDepth: number;
  /** Agents one run (a top-level agent and everything under it) may start. */
  maxAgents: number;
  /** Agents started by agents that may wait for a slot at once. */
  maxPending: number;
  /** The budget of every run (a top-level agent's subtree), if any. */
  budget: AgentBudget | undefined;
  /** Finished agents kept in memory (records, results, metrics entries) before the oldest finished runs go. */
  retainFinished: number;
  /** Every agent's inbox, unless its definition or spawn says otherwise. */
  inbox: { capacity: number; overflow: 'reject' | 'drop-oldest' };
  /** How every agent's failed model calls are tried again, field by field unless its definition or spawn says otherwise. */
  retry: RetryPolicy;
  /** The MCP servers agents may use, by name (none unless given). */
  mcpServers: ReadonlyMap<string, McpServerConfig>;
}

const DEFAULTS: Settings = {
  maxParallel: 5,
  maxTurns: 10,
  idleTimeoutMs: 5 * 60_000,
  maxToolConcurrency: 3,
  maxDepth: 3,
  maxAgents: 1_000,
  maxPending: 10_000,
  budget: undefined,
  retainFinished: 10_000,
  inbox: { capacity: 256, overflow: 'reject' },
  retry: retryPolicy(),
  mcpServers: new Map(),
};

/** Every option `createRuntime` reads (the compiler keeps this list and `RuntimeOptions` the same). */
const RUNTIME_OPTIONS = Object.keys({
  model: true, agents: true, agentDirs: true, projectAgentDir: true, tools: true, workspace: true, strictAgentFiles: true,
  mcpServers: true, store: true, pool: true, maxParallel: true, maxTurns: true, idleTimeoutMs: true, maxToolConcurrency: true,
  enableParallelExecution: true, maxDepth: true, maxAgents: true, maxPending: true, budget: true, retainFinished: true,
  retry: true, delegationPolicy: true, toolPolicy: true, clock: true, inspect: true, ui: true, prices: true, runId: true,
  seed: true, record: true, trace: true, secrets: true, inbox: true, messagePolicy: true,
} satisfies Record<keyof RuntimeOptions, true>);

/** Every option a spawn from code reads (`spawn`, `run`, `resume`). */
const SPAWN_OPTIONS = Object.keys({
  parentId: true, toolCallId: true, priority: true, maxTurns: true, idleTimeoutMs: true, retry: true, restart: true,
  restartIntensity: true, budget: true, history: true, description: true, background: true, persist: true,
  conversationKey: true, historyLimit: true, resident: true, subscribe: true, inbox: true,
} satisfies Record<keyof SpawnOptions, true>);

/**
 * Refuses options nobody reads, with the one most likely meant: a misspelled limit (`maxParalel`) would otherwise be
 * ignored and its default used without a word. `call` names the function in the error (`createRuntime`).
 */
export function checkOptionNames(options: object, known: readonly string[], call: string): void {
  const unknown = unknownKeys(options, known);
  if (unknown.length > 0) throw new ConfigurationError(`${call}: ${describeUnknownKeys(unknown, 'option')}.`);
}

/** Refuses a spawn option nobody reads (see {@link checkOptionNames}). */
export function checkSpawnOptions(options: SpawnOptions, call: string): void {
  if (options === null || typeof options !== 'object') throw new ConfigurationError(`${call}: the options must be an object.`);
  checkOptionNames(options, SPAWN_OPTIONS, call);
}

/**
 * Refuses the options of a call from code (`taskOutput`, `send`, `request`, `publish`, `runUntilIdle`) that are not an
 * object, or that name an option the call does not read (`timeout_ms`, the tools' spelling, for `timeoutMs`): it would
 * be ignored and the default used without a word.
 */
export function checkCallOptions(options: unknown, known: readonly string[], call: string): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new ConfigurationError(`${call}: the options must be an object.`);
  }
  checkOptionNames(options, known, call);
}

/** Every option `runtime.group` reads. */
const GROUP_OPTIONS = Object.keys({
  parentId: true, toolCallId: true, restart: true, restartIntensity: true,
} satisfies Record<keyof GroupOptions, true>);

/** Refuses a group option nobody reads (`runtime.group`, and the parent options a pattern's `run` passes on). */
export function checkGroupOptions(options: GroupOptions): void {
  if (options === null || typeof options !== 'object') throw new ConfigurationError('group: the options must be an object.');
  checkOptionNames(options, GROUP_OPTIONS, 'group');
}

/**
 * Refuses a `trace` or `record` file that holds something else, that is the store's file (not made yet, it would pass
 * the first check, and the events would make the store unreadable), or that is the other one's.
 */
function checkRecordingFiles(options: RuntimeOptions): void {
  const storeFile = options.store instanceof JsonFileMemory ? options.store.file : undefined;
  for (const option of ['trace', 'record'] as const) {
    const path = options[option];
    if (path === undefined) continue;
    if (typeof path === 'string' && resolve(path) === storeFile) {
      throw new ConfigurationError(`The ${option} file ${path} is the store's file; give the ${option} a file of its own.`);
    }
    // Checked before any part starts (its folder too: a web inspector's server would be left open by a later refusal).
    checkRecordingTarget(path, option);
  }
  const { trace, record } = options;
  if (typeof trace === 'string' && typeof record === 'string' && resolve(trace) === resolve(record)) {
    throw new ConfigurationError(`The trace and the record file are one file (${trace}); give each a file of its own.`);
  }
}

/** Checks the runtime's options and fills in the defaults; a bad option is a `ConfigurationError`. */
export function readSettings(options: RuntimeOptions): Settings {
  if (!options || typeof options !== 'object') throw new ConfigurationError('createRuntime needs an options object.');
  checkOptionNames(options, RUNTIME_OPTIONS, 'createRuntime');
  // Before anything starts: a trace or recording written over another file would destroy it.
  checkRecordingFiles(options);
  if (options.agents !== undefined && !Array.isArray(options.agents)) {
    throw new ConfigurationError('`agents` must be a list of agents made with defineAgent().');
  }
  const { maxDepth } = options;
  if (maxDepth !== undefined && !(Number.isInteger(maxDepth) && maxDepth >= 0)) {
    throw new ConfigurationError('maxDepth must be a whole number ≥ 0 (0: no agent may delegate).');
  }
  const { clock } = options as { clock?: unknown };
  // A scenario's options come from JavaScript unchecked: the class itself (`SimulatedClock`) failed deep inside XState.
  if (clock !== undefined && (clock === null || typeof clock !== 'object' || typeof (clock as Clock).setTimeout !== 'function' || typeof (clock as Clock).clearTimeout !== 'function')) {
    throw new ConfigurationError('clock must be a clock (an object with setTimeout and clearTimeout), such as new SimulatedClock() from xstate.');
  }
  if (options.delegationPolicy !== undefined && typeof options.delegationPolicy !== 'function') {
    throw new ConfigurationError('delegationPolicy must be a function of the delegation request.');
  }
  const inboxFields = options.inbox === undefined || options.inbox === null ? undefined : nestedFieldsProblem(options.inbox, INBOX_FIELDS, 'inbox');
  if (inboxFields) throw new ConfigurationError(inboxFields);
  const overflow = options.inbox?.overflow ?? DEFAULTS.inbox.overflow;
  if (overflow !== 'reject' && overflow !== 'drop-oldest') throw new ConfigurationError('inbox.overflow must be "reject" or "drop-oldest".');
  const capacity = positive(options.inbox?.capacity, 'inbox.capacity') ?? DEFAULTS.inbox.capacity;
  if (!Number.isInteger(capacity)) throw new ConfigurationError('inbox.capacity must be a whole number.');
  if (options.seed !== undefined && !Number.isInteger(options.seed)) throw new ConfigurationError('seed must be a whole number.');
  if (options.enableParallelExecution !== undefined && typeof options.enableParallelExecution !== 'boolean') {
    throw new ConfigurationError('enableParallelExecution must be true or false.');
  }
  checkInspect(options.inspect);
  checkPrices(options.prices);
  const policyProblem = toolPolicyProblem(options.toolPolicy);
  if (policyProblem) throw new ConfigurationError(policyProblem);
  return {
    inbox: { capacity, overflow },
    maxParallel: positive(options.maxParallel, 'maxParallel') ?? DEFAULTS.maxParallel,
    maxTurns: positive(options.maxTurns, 'maxTurns') ?? DEFAULTS.maxTurns,
    idleTimeoutMs: positive(options.idleTimeoutMs, 'idleTimeoutMs') ?? DEFAULTS.idleTimeoutMs,
    maxToolConcurrency: atLeastOne(options.maxToolConcurrency, 'maxToolConcurrency') ?? DEFAULTS.maxToolConcurrency,
    maxDepth: maxDepth ?? DEFAULTS.maxDepth,
    maxAgents: whole(options.maxAgents, 'maxAgents') ?? DEFAULTS.maxAgents,
    maxPending: whole(options.maxPending, 'maxPending') ?? DEFAULTS.maxPending,
    budget: checkBudget(options.budget, 'budget'),
    retainFinished: options.retainFinished === Infinity ? Infinity : (whole(options.retainFinished, 'retainFinished') ?? DEFAULTS.retainFinished),
    retry: retryPolicy(checkRetry(options.retry, 'retry')),
    mcpServers: mcpServersOf(options.mcpServers),
  };
}

/**
 * The price table, checked: each entry `{ input, output }`, USD per million tokens, finite numbers ≥ 0. A price missing
 * a field or holding text would make every cost `NaN` (or negative), and the run's figures with it.
 */
function checkPrices(prices: RuntimeOptions['prices']): void {
  if (prices === undefined) return;
  if (typeof prices !== 'object' || prices === null || Array.isArray(prices)) {
    throw new ConfigurationError('prices must be an object of model names to { input, output } (USD per million tokens).');
  }
  const fine = (value: unknown) => typeof value === 'number' && Number.isFinite(value) && value >= 0;
  for (const [model, price] of Object.entries(prices as Record<string, unknown>)) {
    const { input, output } = (typeof price === 'object' && price !== null ? price : {}) as { input?: unknown; output?: unknown };
    if (!fine(input) || !fine(output)) {
      throw new ConfigurationError(
        `prices["${model}"] must be { input, output }: USD per million tokens, numbers ≥ 0 (got ${JSON.stringify(price) ?? String(price)}).`,
      );
    }
  }
}

/** `mcpServers` checked (a `ConfigurationError` naming the field at fault), by name. */
function mcpServersOf(given: RuntimeOptions['mcpServers']): ReadonlyMap<string, McpServerConfig> {
  if (given === undefined) return DEFAULTS.mcpServers;
  const problem = mcpConfigProblem(given, 'mcpServers');
  if (problem !== undefined) throw new ConfigurationError(`${problem}.`);
  return new Map(Object.entries(McpServerConfigs.parse(given)));
}

/** A positive number, or undefined when not given; anything else is a `ConfigurationError` naming the field. */
export function positive(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && value > 0)) throw new ConfigurationError(`${field} must be a positive number.`);
  return value;
}

/**
 * A number ≥ 1 (a fraction counts as its whole part, `Infinity` as no limit), or undefined when not given; anything
 * else is a `ConfigurationError` naming the field. For a count of things at once: below 1 nothing could ever run.
 */
function atLeastOne(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && value >= 1)) throw new ConfigurationError(`${field} must be a number ≥ 1.`);
  return value;
}

/** A whole number ≥ 1, or undefined when not given; anything else is a `ConfigurationError` naming the field. */
function whole(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(Number.isInteger(value) && value >= 1)) throw new ConfigurationError(`${field} must be a whole number ≥ 1.`);
  return value;
}

/** A budget whose limits are positive numbers (`maxTurns` whole), or undefined; anything else is a `ConfigurationError`. */
export function checkBudget(budget: AgentBudget | undefined, field: string): AgentBudget | undefined {
  if (budget === undefined) return undefined;
  if (typeof budget !== 'object' || budget === null) throw new ConfigurationError(`${field} must be an object with maxTurns, maxTokens or maxCostUsd.`);
  const unknown = nestedFieldsProblem(budget, BUDGET_FIELDS, field);
  if (unknown) throw new ConfigurationError(unknown);
  whole(budget.maxTurns, `${field}.maxTurns`);
  positive(budget.maxTokens, `${field}.maxTokens`);
  positive(budget.maxCostUsd, `${field}.maxCostUsd`);
  return budget;
}

/** `inspect` is `'stately'`, a Stately inspector, or an XState inspection observer (a function, or an object with `next`). */
function checkInspect(inspect: RuntimeOptions['inspect']): void {
  if (inspect === undefined || inspect === 'stately' || typeof inspect === 'function' || isStatelyInspector(inspect)) return;
  if (typeof inspect === 'object' && inspect !== null && typeof (inspect as { next?: unknown }).next === 'function') return;
  throw new ConfigurationError(
    "inspect must be 'stately', a Stately inspector (createStatelyInspector()) or an XState inspection observer (a function, or an object with next).",
  );
}
