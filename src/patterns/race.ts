import { checkPattern, groupTask, nothingCompleted, runAll, runGroup, type Pattern, type Step } from './Pattern.js';

/** Options of {@link race}. */
export interface RaceOptions {
  /** The group's name, instead of `race` (a valid agent name). */
  name?: string;
}

/**
 * Runs every step at once in a group of their own (each gets the pattern's input, as in `parallel`); the first to
 * complete wins: the group completes with its output and the others are cancelled. A failed step just does not win;
 * the group fails only if every step failed.
 *
 * @example
 * const fastest = race(['quick-answerer', 'careful-answerer']);
 * const result = await fastest.run(runtime, 'What is the capital of Australia?');
 */
export function race(steps: readonly Step[], options: RaceOptions = {}): Pattern {
  const { name } = checkPattern('race', steps, options, ['name']);
  const list = [...steps];
  return {
    name,
    run: (runtime, input, parent) =>
      runGroup(runtime, name, groupTask('race', list, input), parent, async (group) => {
        const { results, stoppedAt } = await runAll(runtime, group, list, input, (result) => result.status === 'completed');
        // The group's end cancels the losers still running.
        if (stoppedAt !== undefined) return { status: 'completed', output: results[stoppedAt]!.output ?? '' };
        return nothingCompleted(list, results);
      }),
  };
}
