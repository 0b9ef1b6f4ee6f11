// The steps of a ScriptedModel's script, as a test writes them: tool calls, replies that ask for them, plain answers.
import type { ModelReply, ToolCall } from '../models/Model.js';

/**
 * One tool call as a model would send it: `args` is turned into the JSON text of `arguments` (a string is kept as
 * it is, so a test can send arguments that are not valid JSON). The id defaults to `call_<name>`; give calls of the
 * same tool in one reply ids of their own, and give a test an id it can find the answer by.
 *
 * @example
 * toolCall('read_file', { path: 'a.txt' })          // { id: 'call_read_file', name: 'read_file', arguments: '{"path":"a.txt"}' }
 * toolCall('read_file', '{not json', 'bad')          // a malformed call, to see the model get an error result
 */
export function toolCall(name: string, args: unknown, id = `call_${name}`): ToolCall {
  // No arguments (`undefined`) are an empty object, as a call without parameters sends them.
  return { id, name, arguments: typeof args === 'string' ? args : args === undefined ? '{}' : JSON.stringify(args) };
}

/**
 * A model reply that asks for these tool calls (and says nothing else): the agent runs them, in one batch, and the
 * model gets a tool message for each on its next turn. Spread it to add text or usage:
 * `{ ...callTools(toolCall('echo', {})), content: 'Let me check.' }`.
 *
 * @example
 * new ScriptedModel([callTools(toolCall('echo', { text: 'hi' })), textReply('All done.')])
 */
export function callTools(...calls: ToolCall[]): ModelReply {
  return { content: '', toolCalls: calls };
}

/**
 * A model reply with this text and no tool calls: a final answer (a plain string step means the same; this is for
 * scripts that read better spelled out, and for step functions that must return a {@link ModelReply}).
 */
export function textReply(text: string): ModelReply {
  return { content: text };
}

/** The options of {@link assignCall}, besides the agent and the task. */
export interface AssignCallOptions {
  /** The call's id (default `call_<agent>`). */
  id?: string;
  /** The short summary `assign_task` asks for (default `work for <agent>`). */
  description?: string;
  /** Return at once with the sub-agent's id instead of waiting for its answer (`run_in_background`). */
  background?: boolean;
  /** The id of an ended sub-agent whose session to continue. */
  resume?: string;
  /** The files, directories, globs or keys the task touches, for the planner (`targets`). */
  targets?: string[];
  /** What the sub-agent is given with its task (`context`). */
  context?: string;
}

/**
 * An `assign_task` call as a model would send it: hand `task` to `agent`. Put it in {@link callTools}.
 *
 * @example
 * ScriptedModel.perAgent({
 *   lead: [callTools(assignCall('researcher', 'Find three sources.')), 'Here is the summary.'],
 *   researcher: ['Three sources: …'],
 * })
 */
export function assignCall(agent: string, task: string, options: AssignCallOptions = {}): ToolCall {
  return toolCall(
    'assign_task',
    {
      description: options.description ?? `work for ${agent}`,
      agent,
      task,
      ...(options.background === undefined ? {} : { run_in_background: options.background }),
      ...(options.resume === undefined ? {} : { resume: options.resume }),
      ...(options.targets === undefined ? {} : { targets: options.targets }),
      ...(options.context === undefined ? {} : { context: options.context }),
    },
    options.id ?? `call_${agent}`,
  );
}
