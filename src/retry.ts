import { ConfigurationError, ModelError } from './errors.js';
import { nestedFieldsProblem } from './unknownKeys.js';

/**
 * How a failed model call is tried again: on the runtime (`createRuntime({ retry })`), an agent's definition
 * (`defineAgent({ retry })`, an agent file's `retry:`) or a spawn (`runtime.spawn(name, task, { retry })`). Each field
 * is taken from the spawn, else the definition, else the runtime, else the default ({@link DEFAULT_RETRY}).
 *
 * Only a failure that says another try may succeed is tried again: a {@link ModelError} with `retryable` (no answer,
 * a time-out, HTTP 408, 409, 429, 5xx). The wait before try n + 1 is drawn at random from [0, min(maxMs, baseMs ×
 * 2^(n−1))) ("full jitter", from the agent's seeded random stream, so a seeded run repeats), or is the server's
 * `retry-after` when the error carries one (`ModelError.retryAfterMs`), capped at `maxMs` too. Each retry is a
 * `model.retry` event; when the tries run out, the agent fails with reason `error` and the last try's error.
 */
export interface RetryOptions {
  /** Tries in all, the first one included: a whole number ≥ 1 (1: no retries). Default 3. */
  attempts?: number;
  /** The ceiling of the first wait, in ms; each retry doubles it. Default 500. */
  baseMs?: number;
  /** The longest wait between two tries, in ms, a server's `retry-after` included. Default 30,000. */
  maxMs?: number;
}

/** {@link RetryOptions} with every field filled in: what an agent's input carries (plain JSON). */
export type RetryPolicy = Required<RetryOptions>;

/** The retries of a model call when nothing says otherwise: three tries in all, waits from 0.5 s doubling up to 30 s. */
export const DEFAULT_RETRY: Readonly<RetryPolicy> = Object.freeze({ attempts: 3, baseMs: 500, maxMs: 30_000 });

/** The fields of {@link RetryOptions}. */
export const RETRY_FIELDS: readonly (keyof RetryOptions)[] = ['attempts', 'baseMs', 'maxMs'];

/**
 * Checks retry options (`field` names them in the message): no field but `attempts`, `baseMs` and `maxMs` (a
 * misspelled one, `maxAttempts`, would leave the default in force without a word), `attempts` a whole number ≥ 1,
 * `baseMs` and `maxMs` finite numbers ≥ 0. Returns them, or throws a {@link ConfigurationError}; `undefined` passes.
 */
export function checkRetry(options: RetryOptions | undefined, field = 'retry'): RetryOptions | undefined {
  const problem = retryProblem(options, field);
  if (problem !== undefined) throw new ConfigurationError(problem);
  return options;
}

/** What is wrong with retry options, in words, or undefined when nothing is. */
export function retryProblem(options: RetryOptions | undefined, field = 'retry'): string | undefined {
  if (options === undefined) return undefined;
  if (typeof options !== 'object' || options === null) return `${field} must be an object with attempts, baseMs or maxMs.`;
  const unknown = nestedFieldsProblem(options, RETRY_FIELDS, field);
  if (unknown) return unknown;
  const { attempts, baseMs, maxMs } = options;
  if (attempts !== undefined && !(Number.isInteger(attempts) && attempts >= 1)) {
    return `${field}.attempts must be a whole number ≥ 1 (1: no retries).`;
  }
  for (const [name, value] of [
    ['baseMs', baseMs],
    ['maxMs', maxMs],
  ] as const) {
    if (value !== undefined && !(typeof value === 'number' && Number.isFinite(value) && value >= 0)) {
      return `${field}.${name} must be a number of milliseconds ≥ 0.`;
    }
  }
  return undefined;
}

/** The retry policy of one agent: each field from the first of `layers` that gives it (spawn, definition, runtime), else the default. */
export function retryPolicy(...layers: readonly (RetryOptions | undefined)[]): RetryPolicy {
  const pick = <K extends keyof RetryOptions>(key: K): number => {
    for (const layer of layers) {
      const value = layer?.[key];
      if (value !== undefined) return value;
    }
    return DEFAULT_RETRY[key];
  };
  return { attempts: pick('attempts'), baseMs: pick('baseMs'), maxMs: pick('maxMs') };
}

/** Whether a model call that threw `error` may be tried again: a {@link ModelError} that says so. */
export function isRetryable(error: unknown): error is ModelError {
  return error instanceof ModelError && error.retryable;
}

/**
 * The wait before the try after `attempt` (1 for the wait after the first try), in whole ms: the server's
 * `retryAfterMs` when it gave one, else a draw of `random` (a number in [0, 1)) over [0, min(maxMs, baseMs ×
 * 2^(attempt−1))); either way at most `maxMs`.
 */
export function retryDelay(policy: RetryPolicy, attempt: number, random: () => number, retryAfterMs?: number): number {
  if (retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0) {
    return Math.ceil(Math.min(retryAfterMs, policy.maxMs));
  }
  // The doubling stops at 2^1023: past it 2^n is Infinity, and a baseMs of 0 would make the ceiling 0 × Infinity, NaN.
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(1_023, Math.max(0, attempt - 1)));
  return Math.floor(random() * ceiling);
}
