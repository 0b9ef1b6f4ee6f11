import type { AgentResult } from '../runtime/AgentResults.js';
import {
  checkPattern,
  groupTask,
  nothingCompleted,
  runGroup,
  runStep,
  stepFailed,
  type Pattern,
  type PatternOptions,
  type Step,
} from './Pattern.js';

/**
 * Steps run one after another in a group of their own: what `sequence` and `pipeline` share. With `passOutput`, each
 * completed step's output becomes the next step's input (a pipeline); without, every step gets the group's input (a
 * sequence). Each step's task function gets the previous step's result. The group's output is the last completed
 * step's output; a failed step stops the group (`onFailure: 'stop'`) or is passed over (`'continue'`).
 */
export function inTurn(kind: 'sequence' | 'pipeline', steps: readonly Step[], options: PatternOptions, passOutput: boolean): Pattern {
  const { name, onFailure } = checkPattern(kind, steps, options);
  const list = [...steps];
  return {
    name,
    run: (runtime, input, parent) =>
      runGroup(runtime, name, groupTask(kind, list, input), parent, async (group) => {
        const results: (AgentResult | undefined)[] = list.map(() => undefined);
        let text = input;
        let previous: AgentResult | undefined;
        let last: AgentResult | undefined;
        for (const [index, value] of list.entries()) {
          if (!group.open) break; // cancelled or stopped with its subtree: start nothing more
          const result = await runStep(runtime, group, value, previous, text);
          results[index] = previous = result;
          if (result.status === 'completed') {
            last = result;
            if (passOutput) text = result.output ?? '';
          } else if (onFailure === 'stop') {
            return stepFailed(list, index, result);
          }
        }
        return last ? { status: 'completed', output: last.output ?? '' } : nothingCompleted(list, results);
      }),
  };
}
