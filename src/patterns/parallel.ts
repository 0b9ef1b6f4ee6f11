import { ConfigurationError } from '../errors.js';
import { checkRestart, type GroupRestart, type RestartIntensity } from '../restart.js';
import {
  checkPattern,
  groupTask,
  labelledOutputs,
  nothingCompleted,
  runAll,
  runGroup,
  stepFailed,
  type Pattern,
  type PatternOptions,
  type Step,
} from './Pattern.js';

/** The options of {@link parallel}. */
export interface ParallelOptions extends PatternOptions {
  /**
   * `one-for-all`: the steps are restarted together. Each agent step restarts on failure (`restart: 'on-failure'`
   * unless its own options say otherwise); when one is restarted, the agent steps still running are cancelled and
   * restarted too, each fresh from its task, and steps that completed keep their answers. The group's
   * `restartIntensity` counts every step's restarts together; past it the failed step's failure is its result, and
   * `onFailure` decides. Nested patterns among the steps are not restarted. Default: each step as its agent says.
   */
  restart?: GroupRestart;
  /** For `one-for-all`: at most `max` restarts of the steps within `withinMs` (default 3 within 60,000 ms). */
  restartIntensity?: RestartIntensity;
}

/**
 * Runs every step at once in a group of their own; each gets the pattern's input (a bare agent name as its task, a
 * nested pattern as its input, a task function as its second argument). The group's output is the completed
 * outputs, each under its step's number and label (`[2] editor`), in step order, separated by blank lines.
 *
 * A failed step fails the group at once (`onFailure: 'stop'`, the default, with an error naming the step) and the
 * steps still running are cancelled; with `'continue'` the others run on and the group fails only if none completed.
 * The steps share the runtime's `maxParallel` slots like any agents. With `restart: 'one-for-all'` a failed step is
 * started again, and the steps still running with it (see {@link ParallelOptions.restart}).
 *
 * @example
 * const reviews = parallel([step('security-auditor', 'Audit src/.'), step('docs-writer', 'Check the README.')], {
 *   onFailure: 'continue',
 * });
 * const result = await reviews.run(runtime);
 */
export function parallel(steps: readonly Step[], options: ParallelOptions = {}): Pattern {
  const { name, onFailure } = checkPattern('parallel', steps, options, ['onFailure', 'name', 'restart', 'restartIntensity']);
  const { restart, restartIntensity } = options;
  if (restart !== undefined && restart !== 'one-for-all') {
    throw new ConfigurationError(`A parallel's restart must be "one-for-all" (got "${String(restart)}").`);
  }
  checkRestart(undefined, restartIntensity);
  const list = [...steps];
  // The group restarts its members together; each member restarts on failure unless its step says otherwise.
  const together = restart === undefined ? undefined : { restart, ...(restartIntensity === undefined ? {} : { restartIntensity }) };
  const defaults = together ? { restart: 'on-failure' as const } : {};
  return {
    name,
    run: (runtime, input, parent) =>
      runGroup(runtime, name, groupTask('parallel', list, input), together ? { ...parent, ...together } : parent, async (group) => {
        const stop = (result: { status: string }) => onFailure === 'stop' && result.status === 'failed';
        const { results, stoppedAt } = await runAll(runtime, group, list, input, stop, defaults);
        if (stoppedAt !== undefined) return stepFailed(list, stoppedAt, results[stoppedAt]!);
        if (!results.some((result) => result?.status === 'completed')) return nothingCompleted(list, results);
        return { status: 'completed', output: labelledOutputs(list, results) };
      }),
  };
}
