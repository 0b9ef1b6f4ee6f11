import { AGENT_NAME } from '../catalog/defineAgent.js';
import { ConfigurationError, DelegationError } from '../errors.js';
import { describeUnknownKeys, unknownKeys } from '../unknownKeys.js';
import { emptyFigures } from '../events/metrics.js';
import { ending, errorInfo, type ErrorInfo } from '../failure.js';
import type { FailureReason } from '../events/events.js';
import type { AgentResult } from '../runtime/AgentResults.js';
import type { GroupHandle, GroupOptions, Runtime, SpawnOptions } from '../runtime/Runtime.js';

/**
 * Makes a step's task: from the result of the step before it (in a `sequence` or `pipeline`; undefined for the first
 * step and in `parallel`, `fanIn` and `race`) and the step's input (the pattern's input, or in a `pipeline` the text
 * passed along).
 */
export type TaskFrom = (previous: AgentResult | undefined, input: string | undefined) => string;

/** One agent run as a step of a pattern. */
export interface AgentStep {
  /** The agent's name. */
  agent: string;
  /** Its task, or a function that makes it when the step starts. */
  task: string | TaskFrom;
  /** Spawn options (its `parentId` is always the pattern's group). */
  options?: SpawnOptions;
}

/**
 * A way to compose agents without a lead model: `sequence`, `parallel`, `fanIn`, `pipeline`, `race`. Plain data
 * plus a `run` function; a pattern can be a step of another one.
 */
export interface Pattern {
  /** The name of its group (`sequence`, `parallel`, … or the name given in its options). */
  readonly name: string;
  /**
   * Runs the pattern in a group of its own (`group:<name>:<key>`) under `parent.parentId` (a top-level group if none),
   * and resolves with the group's result: the combined output, or the failure. It never rejects for a failed step
   * (nor for a step a run limit refuses: that step fails with reason `budget`, and no id, as `onFailure` says);
   * misuse (an unknown agent, a bare agent name without an input, a task function that throws, a nested pattern of
   * one's own whose run resolves with no result) fails the group and rejects with the error.
   */
  run(runtime: Runtime, input?: string, parent?: GroupOptions): Promise<AgentResult>;
}

/**
 * A step of a pattern: an {@link AgentStep}, a nested {@link Pattern}, or a bare agent name, which gets the step's
 * input (the pattern's input, or the text a `pipeline` passes along) as its task.
 */
export type Step = string | AgentStep | Pattern;

/** What a pattern does when a step fails: `stop` fails the group at once (the default); `continue` goes on. */
export type OnFailure = 'stop' | 'continue';

/** Options every pattern takes. */
export interface PatternOptions {
  /**
   * `stop` (default): the first failed step fails the group with reason `error` and an error naming the step (steps
   * still running are cancelled). `continue`: the other steps go on; the group fails only if no step completed.
   */
  onFailure?: OnFailure;
  /** The group's name, instead of the pattern's kind (a valid agent name). */
  name?: string;
}

/** A step that runs `agent` on `task` (a string, or a function of the step before it and the input). */
export function step(agent: string, task: string | TaskFrom, options?: SpawnOptions): AgentStep {
  return options === undefined ? { agent, task } : { agent, task, options };
}

/** How a pattern's body ends its group. */
export type Ending = { status: 'completed'; output: string } | { status: 'failed'; error: ErrorInfo; reason?: FailureReason };

/** True for a nested pattern. */
export function isPattern(value: Step): value is Pattern {
  return typeof value === 'object' && value !== null && typeof (value as Partial<Pattern>).run === 'function';
}

/** A step's label in outputs and errors: its agent's name, or the nested pattern's name. */
export function labelOf(value: Step): string {
  return typeof value === 'string' ? value : isPattern(value) ? value.name : value.agent;
}

/** The options every pattern but `race` reads. */
const PATTERN_OPTIONS: readonly string[] = ['onFailure', 'name'];

/**
 * Checks a pattern's steps and options when it is defined; returns its name and failure rule. An option it does not
 * read (`known`) is refused, naming the one most likely meant: a misspelled `onFailure` would leave `stop` in force.
 */
export function checkPattern(
  kind: string,
  steps: readonly Step[],
  options: PatternOptions = {},
  known: readonly string[] = PATTERN_OPTIONS,
): { name: string; onFailure: OnFailure } {
  if (!Array.isArray(steps) || steps.length === 0) throw new ConfigurationError(`A ${kind} needs at least one step.`);
  steps.forEach((value, index) => checkStep(kind, value, index));
  if (typeof options !== 'object' || options === null) throw new ConfigurationError(`A ${kind}'s options must be an object.`);
  const unknown = unknownKeys(options, known);
  if (unknown.length > 0) throw new ConfigurationError(`${kind}: ${describeUnknownKeys(unknown, 'option')}.`);
  const { onFailure = 'stop', name = kind } = options;
  if (onFailure !== 'stop' && onFailure !== 'continue') {
    throw new ConfigurationError(`onFailure must be "stop" or "continue" (got "${String(onFailure)}").`);
  }
  if (!AGENT_NAME.test(name)) throw new ConfigurationError(`A ${kind}'s name must match ${AGENT_NAME} (got "${name}").`);
  return { name, onFailure };
}

function checkStep(kind: string, value: Step, index: number): void {
  const where = `Step ${index + 1} of the ${kind}`;
  if (typeof value === 'string') {
    if (value.trim() === '') throw new ConfigurationError(`${where} is an empty agent name.`);
    return;
  }
  if (isPattern(value)) return;
  if (typeof value !== 'object' || value === null || typeof value.agent !== 'string' || value.agent.trim() === '') {
    throw new ConfigurationError(`${where} must be an agent name, a step ({ agent, task }) or a pattern.`);
  }
  if (typeof value.task !== 'string' && typeof value.task !== 'function') {
    throw new ConfigurationError(`${where} (${value.agent}) needs a task: a string or a function.`);
  }
}

/**
 * Runs a pattern's body in a new group and ends the group as the body says; resolves with the group's result. A body
 * that throws (misuse) fails the group, then the error is thrown on.
 */
export async function runGroup(
  runtime: Runtime,
  name: string,
  task: string,
  parent: GroupOptions | undefined,
  body: (group: GroupHandle) => Promise<Ending>,
): Promise<AgentResult> {
  const group = runtime.group(name, task, parent);
  try {
    const end = await body(group);
    if (end.status === 'completed') group.complete(end.output);
    else group.fail(end.error, end.reason);
  } catch (error) {
    group.fail(errorInfo(error, 'user'));
    await group.result;
    throw error;
  }
  return group.result;
}

/**
 * Runs one step under the group: an agent (its task made now) or a nested pattern; `input` is the step's input.
 * `defaults` are spawn options of agent steps that the step's own options may override.
 */
export async function runStep(
  runtime: Runtime,
  group: GroupHandle,
  value: Step,
  previous: AgentResult | undefined,
  input: string | undefined,
  defaults: SpawnOptions = {},
): Promise<AgentResult> {
  if (isPattern(value)) return resultOf(value, await value.run(runtime, input, { parentId: group.id }));
  if (typeof value === 'string') {
    if (input === undefined) {
      throw new ConfigurationError(`The step "${value}" is a bare agent name, so its task is the input: give the pattern an input.`);
    }
    return runAgent(runtime, value, input, { ...defaults, parentId: group.id });
  }
  const task = typeof value.task === 'function' ? value.task(previous, input) : value.task;
  return runAgent(runtime, value.agent, task, { ...defaults, ...value.options, parentId: group.id });
}

/**
 * Runs an agent step. A step a run limit refuses (`maxAgents`, a spent budget: a `DelegationError` of reason `budget`)
 * is not misuse but a step that could not run: it is a failed result with reason `budget` and no id (`''`), which the
 * pattern's `onFailure` handles like any failed step.
 */
async function runAgent(runtime: Runtime, agent: string, task: string, options: SpawnOptions): Promise<AgentResult> {
  try {
    return await runtime.run(agent, task, options);
  } catch (error) {
    if (!(error instanceof DelegationError) || error.reason !== 'budget') throw error;
    const none = { own: emptyFigures(), subtree: emptyFigures() };
    return { id: '', agent, status: 'failed', reason: 'budget', error: errorInfo(error, 'user'), turns: 0, toolCallsExecuted: 0, metrics: none };
  }
}

/** A nested pattern's result, checked: a pattern of one's own that resolves with anything else is misuse. */
function resultOf(pattern: Pattern, result: AgentResult): AgentResult {
  const status = (result as Partial<AgentResult> | null | undefined)?.status;
  if (status === 'completed' || status === 'failed') return result;
  throw new ConfigurationError(
    `The step "${pattern.name}" is a pattern whose run resolved with no result; a pattern's run resolves with an AgentResult.`,
  );
}

/**
 * Runs every step at once under the group. Resolves with their results in step order once all have ended, or, as
 * soon as `until` holds for one, with the index of that one (the others are then left for the group's end to cancel).
 */
export function runAll(
  runtime: Runtime,
  group: GroupHandle,
  steps: readonly Step[],
  input: string | undefined,
  until: (result: AgentResult) => boolean,
  defaults: SpawnOptions = {},
): Promise<{ results: (AgentResult | undefined)[]; stoppedAt?: number }> {
  return new Promise((resolve, reject) => {
    const results: (AgentResult | undefined)[] = steps.map(() => undefined);
    let left = steps.length;
    steps.forEach((value, index) => {
      runStep(runtime, group, value, undefined, input, defaults).then((result) => {
        results[index] = result;
        left -= 1;
        if (until(result)) resolve({ results, stoppedAt: index });
        else if (left === 0) resolve({ results });
      }, reject);
    });
  });
}

/** The error of a group that stops at a failed step, naming the step. */
export function stepFailed(steps: readonly Step[], index: number, result: AgentResult): Ending {
  const label = labelOf(steps[index]!);
  const message = `Step ${index + 1} (${label}) failed (${result.reason ?? 'error'}): ${result.error?.message ?? ''}`;
  return { status: 'failed', error: causedBy(result, message) };
}

/** The error of a group none of whose steps completed, listing why each ended. */
export function nothingCompleted(steps: readonly Step[], results: readonly (AgentResult | undefined)[]): Ending {
  const reasons = results.flatMap((result, index) =>
    result ? [`step ${index + 1} (${labelOf(steps[index]!)}) ${result.reason ?? 'failed'}: ${result.error?.message ?? ''}`] : [],
  );
  const message = `No step completed${reasons.length > 0 ? `: ${reasons.join('; ')}` : '.'}`;
  return { status: 'failed', error: causedBy(results.find((result) => result?.error !== undefined), message) };
}

/** A group's error that keeps the identity (code, side, status) of the step result that caused it, with its own message. */
export function causedBy(result: AgentResult | undefined, message: string): ErrorInfo {
  return result?.error ? { ...result.error, message } : ending('step_failed', message, 'user');
}

/** The completed outputs, each under its step's number and label, separated by blank lines. */
export function labelledOutputs(steps: readonly Step[], results: readonly (AgentResult | undefined)[]): string {
  const outputs = results.flatMap((result, index) =>
    result?.status === 'completed' ? [`[${index + 1}] ${labelOf(steps[index]!)}\n${result.output ?? ''}`] : [],
  );
  return outputs.join('\n\n');
}

/** What a group works on, for its events: its input, or what its steps are. */
export function groupTask(kind: string, steps: readonly Step[], input: string | undefined): string {
  return input ?? `${kind} of ${steps.map(labelOf).join(', ')}`;
}
