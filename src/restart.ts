import { ConfigurationError } from './errors.js';
import { nestedFieldsProblem } from './unknownKeys.js';

/**
 * Whether a failed agent is started again: `never` (the default: its failure goes to its caller as it is) or
 * `on-failure` (a failure with a reason in {@link RESTARTABLE_REASONS} starts it again under the same id, fresh from
 * the input it was launched with, within its {@link RestartIntensity}). Set on an agent's definition
 * (`defineAgent({ restart })`, an agent file's `restart:`) or a spawn (`runtime.spawn(name, task, { restart })`), the
 * spawn's over the definition's.
 */
export type RestartMode = 'never' | 'on-failure';

/**
 * How many restarts an agent may have in a while: at most `max` restarts within `withinMs` on the runtime's clock.
 * A failure that would be restart `max + 1` within the window escalates: the caller gets the failure as it is, and an
 * `agent.escalated` event says so. Restarts further apart than `withinMs` go on without end (a failure now and then
 * is mended each time; a storm of them is not).
 */
export interface RestartIntensity {
  /** Restarts allowed within the window: a whole number ≥ 0 (0: never restarted). Default 3. */
  max?: number;
  /** The window, in ms on the runtime's clock: a number > 0. Default 60,000. */
  withinMs?: number;
}

/** {@link RestartIntensity} with both fields filled in. */
export type RestartLimit = Required<RestartIntensity>;

/** Three restarts within a minute, as Erlang/OTP supervisors default to few restarts in a short time. */
export const DEFAULT_RESTART_INTENSITY: Readonly<RestartLimit> = Object.freeze({ max: 3, withinMs: 60_000 });

/**
 * The failure reasons a restart may mend: `error` (a model call that failed past its retries, a tool batch that
 * crashed, an empty answer, an actor that crashed) and `timeout` (no progress for `idleTimeoutMs`). Not `cancelled`
 * (someone wanted it stopped), `denied` (the policy or a person said no), `budget` (a limit the user set: a restart
 * would spend more of the same budget), `max_turns` (the agent used every turn it was given; started afresh it
 * would most likely loop the same way and spend another `maxTurns` turns, so it is a limit like a budget) nor
 * `required_tools` (its turns ran out before it called its `requiredToolCalls`: a `max_turns` of its own).
 */
export const RESTARTABLE_REASONS: ReadonlySet<string> = new Set(['error', 'timeout']);

/** A group's restart rule: `one-for-all` restarts the members still running when one member is restarted. */
export type GroupRestart = 'one-for-all';

/** What is wrong with a restart mode, in words, or undefined when nothing is. */
export function restartModeProblem(mode: unknown, field = 'restart'): string | undefined {
  if (mode === undefined || mode === 'never' || mode === 'on-failure') return undefined;
  return `${field} must be "never" or "on-failure".`;
}

/** The fields of a restart intensity. */
export const INTENSITY_FIELDS: readonly string[] = ['max', 'withinMs'];

/**
 * What is wrong with a restart intensity, in words, or undefined when nothing is: a field but `max` and `withinMs` (a
 * misspelled one would leave the default in force without a word), or a value out of range.
 */
export function intensityProblem(intensity: RestartIntensity | undefined, field = 'restartIntensity'): string | undefined {
  if (intensity === undefined) return undefined;
  if (typeof intensity !== 'object' || intensity === null) return `${field} must be an object with max or withinMs.`;
  const unknown = nestedFieldsProblem(intensity, INTENSITY_FIELDS, field);
  if (unknown) return unknown;
  const { max, withinMs } = intensity;
  if (max !== undefined && !(Number.isInteger(max) && max >= 0)) return `${field}.max must be a whole number ≥ 0.`;
  if (withinMs !== undefined && !(typeof withinMs === 'number' && Number.isFinite(withinMs) && withinMs > 0)) {
    return `${field}.withinMs must be a number of milliseconds > 0.`;
  }
  return undefined;
}

/** Checks a restart mode and intensity (throws a {@link ConfigurationError}); `undefined` passes. */
export function checkRestart(mode: unknown, intensity: RestartIntensity | undefined): void {
  const problem = restartModeProblem(mode) ?? intensityProblem(intensity);
  if (problem !== undefined) throw new ConfigurationError(problem);
}

/** An intensity with each field from the first layer that gives it (spawn, definition), else the default. */
export function restartLimit(...layers: readonly (RestartIntensity | undefined)[]): RestartLimit {
  const max = layers.find((layer) => layer?.max !== undefined)?.max ?? DEFAULT_RESTART_INTENSITY.max;
  const withinMs = layers.find((layer) => layer?.withinMs !== undefined)?.withinMs ?? DEFAULT_RESTART_INTENSITY.withinMs;
  return { max, withinMs };
}

/**
 * The restarts of one agent (or one `one-for-all` group) in the last `withinMs`: a sliding window of their times on the
 * runtime's clock. {@link RestartWindow.admit} counts a restart when one more fits, and says no when it does not.
 */
export class RestartWindow {
  private readonly times: number[] = [];

  constructor(readonly limit: RestartLimit) {}

  /** Restarts within the window that ends at `now`. */
  within(now: number): number {
    while (this.times.length > 0 && this.times[0]! <= now - this.limit.withinMs) this.times.shift();
    return this.times.length;
  }

  /** True (and the restart counted) when fewer than `max` restarts fall within the window ending at `now`. */
  admit(now: number): boolean {
    if (this.within(now) >= this.limit.max) return false;
    this.times.push(now);
    return true;
  }
}
