import { emptyFigures, type Figures } from '../events/metrics.js';

/** The baseline of a first run: shared, never mutated. */
const ZERO: Figures = Object.freeze(emptyFigures());
import type { FailureReason } from '../events/events.js';
import type { ChatMessage } from '../models/Model.js';

/** An agent's figures: its own, and its subtree's (itself plus every agent it spawned, recursively). */
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
  /** What went wrong, for a failed agent. */
  error?: string;
  /** Model turns taken in this run (a resumed agent counts its new turns). */
  turns: number;
  /** Tool calls executed in this run (error results included). */
  toolCallsExecuted: number;
  /** Tokens, cost, calls and time of this run. */
  metrics: ResultMetrics;
}

interface Entry {
  /** Resolves with the result of the current run. */
  promise: Promise<AgentResult>;
  resolve: ((result: AgentResult) => void) | null;
  /** The result of the latest run, once it has ended. */
  result: AgentResult | null;
  /** The conversation the latest run ended with (kept so the agent can be resumed). */
  messages: readonly ChatMessage[] | null;
  /** The agent's subtree figures when this run began (zero unless it was resumed), so a result counts one run. */
  baseline: Figures;
}

/**
 * What the runtime knows of every agent's runs: a promise of the current run's result, and the result and
 * conversation each agent ended with (kept for `taskOutput` and to resume it).
 */
export class AgentResults {
  private readonly entries = new Map<string, Entry>();

  /** Begins a run of agent `id` (a new agent, or an ended one resumed); returns the promise of its result. */
  begin(id: string, baseline: Figures = ZERO): Promise<AgentResult> {
    let resolve!: (result: AgentResult) => void;
    const promise = new Promise<AgentResult>((done) => (resolve = done));
    const known = this.entries.get(id);
    this.entries.set(id, { promise, resolve, result: null, messages: known?.messages ?? null, baseline });
    return promise;
  }

  /** The subtree figures the current run of `id` started from. */
  baseline(id: string): Figures {
    return this.entries.get(id)?.baseline ?? ZERO;
  }

  /** Ends the current run of an agent with its result and final conversation. */
  settle(result: AgentResult, messages: readonly ChatMessage[]): void {
    const entry = this.entries.get(result.id);
    if (!entry) return;
    entry.result = result;
    // The system prompt is left out: a resumed agent gets its prompt anew from its definition.
    if (messages.length > 0) entry.messages = messages[0]?.role === 'system' ? messages.slice(1) : messages;
    entry.baseline = ZERO;
    const resolve = entry.resolve;
    entry.resolve = null;
    resolve?.(result);
  }

  /** The promise of the current (or last) run's result, or undefined for an unknown id. */
  wait(id: string): Promise<AgentResult> | undefined {
    return this.entries.get(id)?.promise;
  }

  /** The result of an agent whose latest run has ended, or undefined while it runs (or for an unknown id). */
  ended(id: string): AgentResult | undefined {
    return this.entries.get(id)?.result ?? undefined;
  }

  /** The conversation an ended agent left, to resume it. */
  conversation(id: string): readonly ChatMessage[] | undefined {
    return this.entries.get(id)?.messages ?? undefined;
  }
}
