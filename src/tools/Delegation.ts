import type { FailureReason, Risk } from '../events/events.js';
import type { ErrorInfo } from '../failure.js';
import type { Figures } from '../events/metrics.js';

/** An agent a caller may hand work to, as `assign_task` lists it. */
export interface AgentSummary {
  /** The agent's name. */
  name: string;
  /** What it is for. */
  description: string;
  /** The tools it has. */
  tools: string[];
  /** Example tasks from its definition. */
  examples: string[];
}

/** One hand-over of work to another agent. */
export interface DelegateRequest {
  /** The name of the agent that should do the work. */
  agent: string;
  /** The whole task, as the sub-agent will read it. */
  task: string;
  /** A short summary of the task, for logs and inspectors. */
  description?: string;
  /** Return at once with the sub-agent's id instead of waiting for its answer. */
  background?: boolean;
  /** The id of an ended sub-agent whose session this continues (same id, whole earlier conversation kept). */
  resume?: string;
  /**
   * What the caller knows that the sub-agent needs: given to it with its task, below the task under the heading
   * `## Context from <caller>` (see {@link taskWithContext}).
   */
  context?: string;
}

/**
 * The task a sub-agent reads when its caller gave it context: the task, then the context under its own heading.
 * An empty or blank context leaves the task as it is.
 *
 * @example
 * taskWithContext('Fix the parser.', 'The tests in test/parse.test.ts fail since a1b2c3.', 'lead');
 * // => 'Fix the parser.\n\n## Context from lead\n\nThe tests in test/parse.test.ts fail since a1b2c3.'
 */
export function taskWithContext(task: string, context: string | undefined, caller: string): string {
  if (context === undefined || context.trim() === '') return task;
  return `${task}\n\n## Context from ${caller}\n\n${context.trim()}`;
}

/** How an ended sub-agent did, as its caller learns it. Plain JSON. */
export interface TaskResult {
  status: 'completed' | 'failed';
  /** The sub-agent's id: pass it as `resume` to continue its session. */
  agentId: string;
  /** The name of its definition. */
  agentName: string;
  /** The final answer of a completed sub-agent. */
  output?: string;
  /** Why a failed sub-agent failed. */
  reason?: FailureReason;
  /** What went wrong, for a failed sub-agent: its code, side and message (see {@link ErrorInfo}). */
  error?: ErrorInfo;
  /** Tool calls it executed. */
  toolCallsExecuted: number;
  /** Figures of its run: its own, and its subtree's (itself and everything it delegated). */
  metrics: { own: Figures; subtree: Figures };
}

/** A sub-agent that has not ended yet. */
export interface TaskRunning {
  status: 'pending' | 'running';
  agentId: string;
  agentName: string;
  /** True when a blocking wait gave up at its timeout. */
  timedOut?: boolean;
}

/** What a caller learns about a sub-agent: still going, or its result. */
export type TaskOutput = TaskRunning | TaskResult;

/** What a waiting delegation returns: the sub-agent's result and how long the caller waited for it. */
export type DelegationResult = TaskResult & {
  /** Time from the hand-over to the answer, on the actor system's clock (queueing included). */
  executionTimeMs: number;
};

/** Options of {@link Delegation.taskOutput}. */
export interface TaskOutputOptions {
  /** Wait until the sub-agent ends (or `timeoutMs` passes). Default false: answer at once. */
  blocking?: boolean;
  /** How long a blocking call waits, on the actor system's clock (default 30 seconds). */
  timeoutMs?: number;
}

/** The options of {@link Delegation.spawnAgent}: an agent made on the spot, outside the catalog, and its task. */
export interface SpawnAgentRequest {
  /** Its name, unique in the runtime. */
  name: string;
  /** The task to run with it now. */
  task: string;
  /** What it is for (shown to callers when it is permanent). */
  description?: string;
  /** Its system prompt. */
  systemPrompt: string;
  /** Its tools: a subset of the caller's own. */
  tools?: string[];
  /** `temporary` (default): removed when its task ends. `permanent`: stays for `assign_task` for the rest of the run. */
  lifecycle?: 'temporary' | 'permanent';
}

/** What a delegation policy is asked. */
export interface DelegationRequest {
  /** The calling agent. */
  caller: { id: string; name: string; depth: number };
  /** The agent that would do the work. */
  agent: string;
  /** The task it would get. */
  task: string;
  /** The depth the sub-agent would have. */
  depth: number;
  /** True for a background delegation. */
  background: boolean;
  /** The id of the session it would continue, when it resumes one. */
  resume?: string;
}

/** A delegation policy's answer. */
export type DelegationDecision =
  | 'allow'
  | { decision: 'allow' }
  | { decision: 'deny'; reason: string }
  | { decision: 'ask'; risk: Risk; reason?: string };

/**
 * Decides every delegation an agent asks for (through `assign_task`, `parallel_tasks` or `spawn_agent`): allow it,
 * deny it with a reason, or ask a person (`runtime.approve` / `runtime.deny`). A policy that throws denies.
 */
export type DelegationPolicy = (request: DelegationRequest) => DelegationDecision | Promise<DelegationDecision>;

/**
 * What a running tool may do with other agents, on behalf of the agent that called it (`context.delegation`).
 * The built-in delegation tools use it; a tool of your own may too. Refusals throw a `DelegationError`, which
 * becomes an error result the model sees. Call its methods on it (`context.delegation.delegate(…)`): they are not
 * bound functions.
 */
export interface Delegation {
  /** The agents the caller may delegate to (none when it is at the depth limit). */
  agents(): AgentSummary[];
  /**
   * Hands a task to an agent as a sub-agent of the caller. Waits for its result, or with `background` returns at
   * once with its id. A denied delegation resolves as a failed result with reason `denied`.
   */
  delegate(request: DelegateRequest): Promise<DelegationResult | TaskRunning>;
  /**
   * Says whether one of the caller's sub-agents still runs, or returns its result; `blocking` waits up to
   * `timeoutMs`, lending the caller's slot meanwhile.
   */
  taskOutput(agentId: string, options?: TaskOutputOptions): Promise<TaskOutput>;
  /**
   * Makes an agent that is not in the catalog, with a subset of the caller's tools, and delegates its task to it
   * (waiting for the answer). If the task cannot be handed over, the agent is not kept.
   */
  spawnAgent(request: SpawnAgentRequest): Promise<DelegationResult | TaskRunning>;
}
