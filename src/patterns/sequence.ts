import { inTurn } from './inTurn.js';
import type { Pattern, PatternOptions, Step } from './Pattern.js';

/**
 * Runs the steps one after another in a group of their own. Each step's task function gets the result of the step
 * before it; a bare agent name and a nested pattern get the sequence's input. The group's output is the last
 * completed step's output.
 *
 * A failed step fails the group at once (`onFailure: 'stop'`, the default, with an error naming the step), or the
 * sequence goes on to the next step (`'continue'`) and fails only if no step completed.
 *
 * @example
 * const draft = sequence([
 *   step('researcher', 'Find three facts about otters.'),
 *   step('writer', (facts) => `Write a paragraph from these facts:\n${facts?.output}`),
 * ]);
 * const result = await draft.run(runtime);
 */
export function sequence(steps: readonly Step[], options: PatternOptions = {}): Pattern {
  return inTurn('sequence', steps, options, false);
}
