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

/**
 * Runs every step at once in a group of their own; each gets the pattern's input (a bare agent name as its task, a
 * nested pattern as its input, a task function as its second argument). The group's output is the completed
 * outputs, each under its step's number and label (`[2] editor`), in step order, separated by blank lines.
 *
 * A failed step fails the group at once (`onFailure: 'stop'`, the default, with an error naming the step) and the
 * steps still running are cancelled; with `'continue'` the others run on and the group fails only if none completed.
 * The steps share the runtime's `maxParallel` slots like any agents.
 *
 * @example
 * const reviews = parallel([step('security-auditor', 'Audit src/.'), step('docs-writer', 'Check the README.')], {
 *   onFailure: 'continue',
 * });
 * const result = await reviews.run(runtime);
 */
export function parallel(steps: readonly Step[], options: PatternOptions = {}): Pattern {
  const { name, onFailure } = checkPattern('parallel', steps, options);
  const list = [...steps];
  return {
    name,
    run: (runtime, input, parent) =>
      runGroup(runtime, name, groupTask('parallel', list, input), parent, async (group) => {
        const stop = (result: { status: string }) => onFailure === 'stop' && result.status === 'failed';
        const { results, stoppedAt } = await runAll(runtime, group, list, input, stop);
        if (stoppedAt !== undefined) return stepFailed(list, stoppedAt, results[stoppedAt]!);
        if (!results.some((result) => result?.status === 'completed')) return nothingCompleted(list, results);
        return { status: 'completed', output: labelledOutputs(list, results) };
      }),
  };
}
