import { emptyFigures, type Figures } from '../events/metrics.js';

/** The baseline of a first run: shared, never mutated. */
const ZERO: Figures = Object.freeze(emptyFigures());
import type { FailureReason } from '../events/events.js';
import { ending, type ErrorInfo } from '../failure.js';
import type { AgentOutcome } from '../machines/agentTypes.js';

/**
 * An agent's figures: its own, and its subtree's (itself plus every agent it spawned, recursively), as they were when it
 * ended. A background sub-agent still running then goes on adding to the metrics (`runtime.metrics().agents[id]
 * .subtree`), not to this result.
 */
export interface ResultMetrics {
  own: Figures;
  subtree: Figures;
}

/** How an agent ended. Plain JSON. */
export interface AgentResult {
  /** The agent's id. */
  id: string;
  /** The name of its definition. */
  agent: string;
  /** `completed` with an `output`, or `failed` with a `reason` and an `error`. */
  status: 'completed' | 'failed';
  /** The final answer of a completed agent. */
  output?: string;
  /** Why a failed agent failed. */
  reason?: FailureReason;
  /**
   * What went wrong, for a failed agent, as plain JSON: `code` keeps the identity of the cause (`model_error`,
   * `aborted`, `max_turns`, …) to `switch` on, with its side (`fault`) and, for a model error, `status` and `retryable`.
   */
  error?: ErrorInfo;
  /** Model turns taken in this run (a resumed agent counts its new turns). */
  turns: number;
  /** Tool calls executed in this run (error results included). */
  toolCallsExecuted: number;
  /** Tokens, cost, calls and time of this run. */
  metrics: ResultMetrics;
}

interface Entry {
  /** Resolves with the result of the current run (dropped once the run has ended and its result is kept). */
  promise: Promise<AgentResult> | null;
  resolve: ((result: AgentResult) => void) | null;
  /** The result of the latest run, once it has ended. */
  result: AgentResult | null;
  /** The agent's subtree figures when this run began (zero unless it was resumed), so a result counts one run. */
  baseline: Figures;
  /** The agent's own figures in the metrics when this run began (zero unless it was resumed): its messages are read there. */
  ownBaseline: Figures;
}

/**
 * What the runtime knows of every agent's runs: a promise of the current run's result, and the result each agent
 * ended with (kept for `taskOutput`). Conversations are kept by the session store.
 */
export class AgentResults {
  private readonly entries = new Map<string, Entry>();

  /**
   * Begins a run of agent `id` (a new agent, or an ended one resumed); returns the promise of its result. A resumed
   * agent's `baseline` and `ownBaseline` are its subtree and own figures in the metrics as the run begins.
   */
  begin(id: string, baseline: Figures = ZERO, ownBaseline: Figures = ZERO): Promise<AgentResult> {
    let resolve!: (result: AgentResult) => void;
    const promise = new Promise<AgentResult>((done) => (resolve = done));
    this.entries.set(id, { promise, resolve, result: null, baseline, ownBaseline });
    return promise;
  }

  /** The subtree figures the current run of `id` started from. */
  baseline(id: string): Figures {
    return this.entries.get(id)?.baseline ?? ZERO;
  }

  /** The own figures (in the metrics) the current run of `id` started from. */
  ownBaseline(id: string): Figures {
    return this.entries.get(id)?.ownBaseline ?? ZERO;
  }

  /** Ends the current run of an agent with its result. */
  settle(result: AgentResult): void {
    const entry = this.entries.get(result.id);
    if (!entry) return;
    entry.result = result;
    entry.baseline = ZERO;
    entry.ownBaseline = ZERO;
    entry.promise = null;
    const resolve = entry.resolve;
    entry.resolve = null;
    resolve?.(result);
  }

  /** Forgets the result of an ended agent (a run still going is kept). */
  forget(id: string): void {
    if (this.entries.get(id)?.result) this.entries.delete(id);
  }

  /** True while a run of `id` has begun and not ended. */
  running(id: string): boolean {
    const entry = this.entries.get(id);
    return entry !== undefined && entry.result === null;
  }

  /** The promise of the current (or last) run's result, or undefined for an unknown id. */
  wait(id: string): Promise<AgentResult> | undefined {
    const entry = this.entries.get(id);
    if (!entry) return undefined;
    return entry.promise ?? Promise.resolve(entry.result!);
  }

  /** The result of an agent whose latest run has ended, or undefined while it runs (or for an unknown id). */
  ended(id: string): AgentResult | undefined {
    return this.entries.get(id)?.result ?? undefined;
  }

}

/** An agent's outcome as its result: its own figures, and its subtree's for this run (`subtree` since `baseline`). */
export function resultOf(outcome: AgentOutcome, subtree: Figures | undefined, baseline: Figures): AgentResult {
  return {
    id: outcome.id,
    agent: outcome.agent,
    status: outcome.status,
    ...(outcome.output === undefined ? {} : { output: outcome.output }),
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason, error: outcome.error ?? ending('unexpected', 'The agent failed without saying why.', 'system') }),
    turns: outcome.turns,
    toolCallsExecuted: outcome.toolCallsExecuted,
    // `own` is the ended agent's own object (nothing changes it any more); `subtree` is copied from the live metrics.
    metrics: { own: outcome.own, subtree: subtree ? difference(subtree, baseline) : { ...outcome.own } },
  };
}

function difference(now: Figures, before: Figures): Figures {
  return {
    inputTokens: now.inputTokens - before.inputTokens,
    outputTokens: now.outputTokens - before.outputTokens,
    costUsd: Math.round((now.costUsd - before.costUsd) * 1e12) / 1e12,
    modelCalls: now.modelCalls - before.modelCalls,
    toolCalls: now.toolCalls - before.toolCalls,
    toolErrors: now.toolErrors - before.toolErrors,
    messagesOut: now.messagesOut - before.messagesOut,
    messagesIn: now.messagesIn - before.messagesIn,
    durationMs: now.durationMs - before.durationMs,
  };
}
