import { ConfigurationError } from '../errors.js';
import { ending } from '../failure.js';
import { unknownFields } from '../unknownKeys.js';
import type { AgentResult } from '../runtime/AgentResults.js';
import type { SpawnOptions } from '../runtime/Runtime.js';
import {
  causedBy,
  checkPattern,
  groupTask,
  labelledOutputs,
  nothingCompleted,
  runAll,
  runGroup,
  runStep,
  stepFailed,
  type Pattern,
  type PatternOptions,
  type Step,
} from './Pattern.js';

/**
 * How a `fanIn` combines its steps' results (every step's, in step order, failed ones included under
 * `onFailure: 'continue'`): a function, or an agent that aggregates them.
 */
export type FanInCombine =
  | {
      /** Makes the group's output from the results (a reduce that throws or returns no string fails the group and rejects). */
      reduce: (results: AgentResult[]) => string;
    }
  | {
      /** The aggregating agent's name; it runs in the group after the others, and its answer is the group's output. */
      agent: string;
      /** Its task (default: the pattern's input, if any, then the completed outputs, each under its step's label). */
      task?: (results: AgentResult[], input: string | undefined) => string;
      /** Spawn options of the aggregator. */
      options?: SpawnOptions;
    };

/**
 * Fans out, then in: runs every step at once in a group of their own (as `parallel` does, with the same failure
 * handling), then combines their results with a `reduce` function or an aggregating agent, whose output is the
 * group's. A failed aggregator fails the group.
 *
 * @example
 * const survey = fanIn(
 *   [step('optimist', 'Judge the plan.'), step('pessimist', 'Judge the plan.')],
 *   { agent: 'judge' },
 *   { onFailure: 'continue' },
 * );
 * const result = await survey.run(runtime, 'Should we move the office to Mars?');
 */
export function fanIn(steps: readonly Step[], combine: FanInCombine, options: PatternOptions = {}): Pattern {
  const { name, onFailure } = checkPattern('fanIn', steps, { ...options, name: options.name ?? 'fan-in' });
  checkCombine(combine);
  const list = [...steps];
  return {
    name,
    run: (runtime, input, parent) =>
      runGroup(runtime, name, groupTask('fan-in', list, input), parent, async (group) => {
        const stop = (result: AgentResult) => onFailure === 'stop' && result.status === 'failed';
        const { results, stoppedAt } = await runAll(runtime, group, list, input, stop);
        if (stoppedAt !== undefined) return stepFailed(list, stoppedAt, results[stoppedAt]!);
        if (!results.some((result) => result?.status === 'completed')) return nothingCompleted(list, results);
        const all = results as AgentResult[]; // every step has ended
        if ('reduce' in combine) return { status: 'completed', output: reduced(combine.reduce(all)) };
        if (!group.open) return { status: 'failed', error: ending('cancelled', 'The group ended before its aggregator started.', 'user') };
        const task = combine.task ? combine.task(all, input) : aggregatorTask(labelledOutputs(list, all), input);
        const aggregator = { agent: combine.agent, task, ...(combine.options ? { options: combine.options } : {}) };
        const aggregated = await runStep(runtime, group, aggregator, undefined, input);
        if (aggregated.status === 'completed') return { status: 'completed', output: aggregated.output ?? '' };
        const why = `${aggregated.reason ?? 'error'}): ${aggregated.error?.message ?? ''}`;
        return { status: 'failed', error: causedBy(aggregated, `The aggregator (${combine.agent}) failed (${why}`) };
      }),
  };
}

/** What a `reduce` returned, checked: the group's output is text, so anything else is misuse named as the reducer's. */
function reduced(output: unknown): string {
  if (typeof output === 'string') return output;
  const got = output === null ? 'null' : typeof output;
  throw new ConfigurationError(`A fanIn's reduce must return a string (the group's output), not ${got}.`);
}

/** The aggregator's default task. */
function aggregatorTask(outputs: string, input: string | undefined): string {
  return `${input === undefined ? '' : `The task: ${input}\n\n`}Combine these results into one answer:\n\n${outputs}`;
}

function checkCombine(combine: FanInCombine): void {
  if (typeof combine !== 'object' || combine === null) throw new ConfigurationError('A fanIn needs { reduce } or { agent }.');
  // A misspelled field (`taks`) would leave the default in force, and a reduce beside an agent would leave the agent unused.
  if ('reduce' in combine && 'agent' in combine) {
    throw new ConfigurationError('A fanIn combines with { reduce } or with { agent, task?, options? }, not both.');
  }
  const unknown = unknownFields(combine, 'reduce' in combine ? ['reduce'] : ['agent', 'task', 'options']);
  if (unknown !== undefined) throw new ConfigurationError(`A fanIn's combine: ${unknown}.`);
  if ('reduce' in combine) {
    if (typeof combine.reduce !== 'function') throw new ConfigurationError("A fanIn's reduce must be a function.");
    return;
  }
  if (typeof combine.agent !== 'string' || combine.agent.trim() === '') {
    throw new ConfigurationError('A fanIn needs { reduce } or { agent }.');
  }
  if (combine.task !== undefined && typeof combine.task !== 'function') {
    throw new ConfigurationError("A fanIn's aggregator task must be a function.");
  }
}
