import { inTurn } from './inTurn.js';
import type { Pattern, PatternOptions, Step } from './Pattern.js';

/**
 * Passes text through the steps in turn, in a group of their own: the first step gets the pipeline's input, and each
 * completed step's output becomes the next step's input. A bare agent name takes that input as its task, a nested
 * pattern as its input, and a step's task function gets it (with the previous step's result). The group's output
 * is the last completed step's output.
 *
 * A failed step fails the group at once (`onFailure: 'stop'`, the default, with an error naming the step), or the
 * pipeline passes the last good text on to the next step (`'continue'`) and fails only if no step completed.
 *
 * @example
 * const publish = pipeline(['writer', 'editor', step('translator', (_, text) => `Translate into French:\n${text}`)]);
 * const result = await publish.run(runtime, 'A short note on otters.');
 */
export function pipeline(steps: readonly Step[], options: PatternOptions = {}): Pattern {
  return inTurn('pipeline', steps, options, true);
}
