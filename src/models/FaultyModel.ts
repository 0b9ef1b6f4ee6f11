import { sleep } from '../clock.js';
import { ConfigurationError, ModelError } from '../errors.js';
import { RandomSource } from '../random.js';
import { describeUnknownKeys, unknownKeys } from '../unknownKeys.js';
import type { Model, ModelReply, ModelRequest } from './Model.js';

/** The faults a {@link FaultyModel} injects, in the order their rates are laid out on [0, 1). */
export const FAULT_KINDS = ['rateLimit', 'serverError', 'timeout', 'disconnect', 'malformedToolCall', 'empty'] as const;

/**
 * A fault a {@link FaultyModel} injects: `rateLimit` (HTTP 429 with a `retry-after`), `serverError` (HTTP 500),
 * `timeout` (the call timed out, no status), `disconnect` (the connection dropped, no status), `malformedToolCall` (a
 * reply whose tool call's arguments are cut-off JSON) or `empty` (a reply with no text and no tool calls).
 */
export type FaultKind = (typeof FAULT_KINDS)[number];

/** The chance of each fault on one call, each in [0, 1]; together at most 1. A fault left out never happens. */
export type FaultRates = Partial<Record<FaultKind, number>>;

/** Options of {@link FaultyModel}. */
export interface FaultyModelOptions {
  /** The seed of the faults: a whole number. The same seed gives the same faults to the same calls. */
  seed: number;
  /** How often each fault happens (see {@link FaultRates}). */
  rates: FaultRates;
  /** The `retry-after` a rate limit (429) carries, in ms (default 1,000). */
  retryAfterMs?: number;
  /** How long a call that times out waits on the request's clock before it fails (default 0: at once). */
  timeoutMs?: number;
  /** A readable name (default `faulty(<the inner model's name>)`). */
  name?: string;
}

/** Every option of a {@link FaultyModel} (the compiler keeps this list and the interface the same). */
const FAULTY_OPTIONS = Object.keys({ seed: true, rates: true, retryAfterMs: true, timeoutMs: true, name: true } satisfies Record<keyof FaultyModelOptions, true>);

/**
 * A model that wraps another and injects faults at seeded rates, for testing how agents and the runtime bear them
 * (`troupe/testing`). Each call draws one number from a stream of its agent's own, seeded by `seed` and the agent's id
 * (so an agent's faults do not depend on how other agents' calls interleave), and either passes the call to the inner
 * model or, in its place (the inner model is not asked, so a scripted model's next step is kept for the next call):
 *
 * - throws a {@link ModelError} shaped like `OpenAIModel`'s: a rate limit (status 429, `retryable`, `retryAfterMs`), a
 *   server error (status 500, `retryable`), a time-out or a dropped connection (no status, `retryable`), which the
 *   runtime's retries try again;
 * - or answers with a tool call whose arguments are malformed JSON (the agent sees an error result for it and thinks
 *   again: a turn, not a failed call), or with an empty reply (the agent fails with `empty_answer`).
 *
 * `injected` counts the faults by kind and `calls` the calls.
 *
 * @example
 * const model = new FaultyModel(new ScriptedModel(() => 'Done.'), { seed: 7, rates: { rateLimit: 0.1, serverError: 0.1 } });
 */
export class FaultyModel implements Model {
  /** A readable name. */
  readonly name: string;
  /** How many faults of each kind it injected so far. */
  readonly injected: Record<FaultKind, number> = { rateLimit: 0, serverError: 0, timeout: 0, disconnect: 0, malformedToolCall: 0, empty: 0 };
  /** How many calls it was given (faulty or passed on). */
  calls = 0;
  private readonly seeds: RandomSource;
  private readonly streams = new Map<string, RandomSource>();
  private readonly rates: readonly (readonly [FaultKind, number])[];
  private readonly retryAfterMs: number;
  private readonly timeoutMs: number;

  constructor(
    /** The model that answers the calls that get no fault. */
    readonly inner: Model,
    options: FaultyModelOptions,
  ) {
    if (typeof inner?.complete !== 'function') throw new ConfigurationError('FaultyModel wraps a Model: give it one.');
    if (!Number.isInteger(options?.seed)) throw new ConfigurationError('FaultyModel needs a whole-number seed.');
    const unknown = unknownKeys(options, FAULTY_OPTIONS);
    if (unknown.length > 0) throw new ConfigurationError(`FaultyModel: ${describeUnknownKeys(unknown, 'option')}.`);
    this.rates = checkRates(options.rates);
    this.retryAfterMs = nonNegative(options.retryAfterMs, 'retryAfterMs') ?? 1_000;
    this.timeoutMs = nonNegative(options.timeoutMs, 'timeoutMs') ?? 0;
    this.seeds = new RandomSource(options.seed);
    this.name = options.name ?? `faulty(${inner.name})`;
  }

  /** Answers one turn: a fault drawn for it, or the inner model's reply. */
  async complete(request: ModelRequest): Promise<ModelReply> {
    this.calls += 1;
    const random = this.streamOf(request.agentId);
    const fault = this.draw(random.next());
    if (fault === undefined) return this.inner.complete(request);
    this.injected[fault] += 1;
    const model = request.model ?? this.inner.name;
    switch (fault) {
      case 'rateLimit':
        throw new ModelError(`The call to model "${model}" failed with HTTP 429: Rate limit reached (injected).`, {
          status: 429,
          retryAfterMs: this.retryAfterMs,
        });
      case 'serverError':
        throw new ModelError(`The call to model "${model}" failed with HTTP 500: The server had an error (injected).`, { status: 500 });
      case 'timeout':
        if (this.timeoutMs > 0) await sleep(request.clock, this.timeoutMs, request.signal);
        throw new ModelError(`The call to model "${model}" timed out (injected).`, { retryable: true });
      case 'disconnect':
        throw new ModelError(`Could not reach the server for model "${model}": Connection error (injected: socket hang up).`, { retryable: true });
      case 'malformedToolCall': {
        const tool = request.tools.length > 0 ? request.tools[random.int(request.tools.length)]!.name : 'unknown_tool';
        return { content: '', toolCalls: [{ id: `call_faulty_${random.key(8)}`, name: tool, arguments: '{"input": "cut off' }], model };
      }
      case 'empty':
        return { content: '', model };
    }
  }

  /** The fault a draw in [0, 1) lands on, or undefined for none. */
  private draw(value: number): FaultKind | undefined {
    let edge = 0;
    for (const [kind, rate] of this.rates) {
      edge += rate;
      if (value < edge) return kind;
    }
    return undefined;
  }

  /** The agent's own stream of draws (made on its first call). */
  private streamOf(agentId: string): RandomSource {
    let stream = this.streams.get(agentId);
    if (!stream) this.streams.set(agentId, (stream = this.seeds.fork(agentId)));
    return stream;
  }
}

/** The rates, checked: known kinds, each in [0, 1], together at most 1; a `ConfigurationError` otherwise. */
function checkRates(rates: FaultRates | undefined): (readonly [FaultKind, number])[] {
  if (typeof rates !== 'object' || rates === null) throw new ConfigurationError(`FaultyModel needs rates: { ${FAULT_KINDS.join('?, ')}? }.`);
  for (const key of Object.keys(rates)) {
    if (!(FAULT_KINDS as readonly string[]).includes(key)) {
      throw new ConfigurationError(`FaultyModel has no fault "${key}"; the faults are ${FAULT_KINDS.join(', ')}.`);
    }
  }
  const checked = FAULT_KINDS.map((kind) => [kind, rates[kind] ?? 0] as const);
  for (const [kind, rate] of checked) {
    if (!(typeof rate === 'number' && rate >= 0 && rate <= 1)) throw new ConfigurationError(`FaultyModel rates.${kind} must be a number from 0 to 1.`);
  }
  const sum = checked.reduce((total, [, rate]) => total + rate, 0);
  if (sum > 1 + 1e-9) throw new ConfigurationError(`FaultyModel's rates add up to ${sum}; together they may be at most 1.`);
  return checked.filter(([, rate]) => rate > 0);
}

function nonNegative(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && Number.isFinite(value) && value >= 0)) throw new ConfigurationError(`FaultyModel ${field} must be a number ≥ 0.`);
  return value;
}
