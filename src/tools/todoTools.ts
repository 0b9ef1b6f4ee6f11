import { z } from 'zod';
import { TodoItem } from '../events/events.js';
import type { ChatMessage } from '../models/Model.js';
import { todoItemLine } from '../views/formatEvent.js';
import { defineTool, type Tool } from './defineTool.js';
import { toolReply } from './toolReply.js';

/**
 * An agent's todo list as `todo_write` takes it: at most 100 items, each id once, and at most one item `in_progress`
 * (the one the agent works on now). A list that breaks a rule is an error result the model sees, naming the rule.
 */
export const TodoList = z
  .array(TodoItem)
  .max(100)
  .superRefine((items, context) => {
    const seen = new Set<string>();
    items.forEach((item, index) => {
      if (seen.has(item.id)) {
        context.addIssue({ code: 'custom', path: [index, 'id'], message: `The id "${item.id}" is used by more than one item; give each item its own id.` });
      }
      seen.add(item.id);
    });
    const working = items.filter((item) => item.status === 'in_progress').map((item) => `"${item.id}"`);
    if (working.length > 1) {
      context.addIssue({
        code: 'custom',
        message: `At most one item may be in_progress (found ${working.length}: ${working.join(', ')}); finish one, or set the others back to pending.`,
      });
    }
  });
/** An agent's todo list: items with unique ids, at most one in progress. */
export type TodoList = z.infer<typeof TodoList>;

/** What a list's calls share in the planner: a read of the list waits for a write of it made before in the same turn. */
const LIST_TARGET = 'todo-list';

/** The key of the list on a tool message's metadata (todo_write and todo_read both put it there). */
const METADATA_KEY = 'todos';

/**
 * Lists written in the current turn, by the conversation the turn's calls share (one array per batch): a `todo_read`
 * after a `todo_write` of the same turn finds it before the write's tool message is in the conversation.
 */
const writtenThisTurn = new WeakMap<readonly ChatMessage[], TodoItem[]>();

/** `todo_write`: replaces the agent's whole todo list (as Claude Code's TodoWrite does) and announces `todo.updated`. */
export const todoWrite = defineTool({
  name: 'todo_write',
  description:
    'Replaces your todo list with these items (the whole list: an item left out is removed). Use it to plan work of ' +
    'several steps and to show your progress: set an item in_progress when you start it (one at a time) and done when ' +
    'it is finished. Ids must be unique.',
  parameters: z.object({ items: TodoList.describe('The whole list, in the order you mean to work.') }),
  kind: 'write',
  targets: () => [LIST_TARGET],
  idempotent: true,
  execute: ({ items }, { messages, toolCallId, announce }) => {
    writtenThisTurn.set(messages, items);
    announce({ type: 'todo.updated', callId: toolCallId, items });
    return toolReply({ content: `Todo list saved. ${formatTodos(items)}`, metadata: { [METADATA_KEY]: items } });
  },
});

/** `todo_read`: the agent's todo list as it last wrote it (kept in its conversation, so it outlives a resume). */
export const todoRead = defineTool({
  name: 'todo_read',
  description: 'Shows your todo list as you last wrote it with todo_write.',
  parameters: z.object({}),
  kind: 'read',
  targets: () => [LIST_TARGET],
  idempotent: true,
  execute: (_args, { messages }) => {
    const items = writtenThisTurn.get(messages) ?? todosOf(messages);
    return toolReply({ content: formatTodos(items), metadata: { [METADATA_KEY]: items } });
  },
});

/** The built-in todo tools. */
export const todoTools: readonly Tool[] = Object.freeze([todoWrite, todoRead] as Tool[]);

/**
 * An agent's todo list, read from its conversation: the list of its last successful `todo_write` (or `todo_read`)
 * call, empty when there is none. The list lives in the conversation the session store keeps, so it survives
 * `runtime.resume` and can be read from a stored session by another process:
 * `todosOf(await runtime.sessions.conversation(id) ?? [])`. (With a `historyLimit`, a list older than the window is
 * gone; `todo_read` puts it back into the conversation.)
 */
export function todosOf(messages: readonly ChatMessage[]): TodoItem[] {
  const callNames = new Map<string, string>();
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!;
    if (message.role !== 'tool' || message.isError === true || message.metadata?.[METADATA_KEY] === undefined) continue;
    const parsed = TodoList.safeParse(message.metadata[METADATA_KEY]);
    if (!parsed.success) continue;
    const name = callNames.get(message.toolCallId) ?? nameOfCall(messages, index, message.toolCallId, callNames);
    if (name === todoWrite.name || name === todoRead.name) return parsed.data;
  }
  return [];
}

/** The tool name of a call, from the assistant message before `index` that made it (names read on the way are kept). */
function nameOfCall(messages: readonly ChatMessage[], index: number, callId: string, names: Map<string, string>): string | undefined {
  for (let at = index - 1; at >= 0; at--) {
    const message = messages[at]!;
    if (message.role !== 'assistant' || message.toolCalls === undefined) continue;
    for (const call of message.toolCalls) names.set(call.id, call.name);
    if (names.has(callId)) return names.get(callId);
  }
  return undefined;
}

/**
 * A todo list as text, a count then one line an item: `[x]` done, `[>]` in progress, `[ ]` pending.
 *
 * @example
 * formatTodos([{ id: 'spec', content: 'Read the spec', status: 'done' }])
 * // '1 item: 1 done, 0 in progress, 0 pending.\n[x] spec: Read the spec'
 */
export function formatTodos(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'Your todo list is empty.';
  const count = (status: TodoItem['status']) => items.filter((item) => item.status === status).length;
  const head = `${items.length} ${items.length === 1 ? 'item' : 'items'}: ${count('done')} done, ${count('in_progress')} in progress, ${count('pending')} pending.`;
  return [head, ...items.map(todoItemLine)].join('\n');
}
