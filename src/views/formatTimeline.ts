import type { TodoItem, TroupeEvent } from '../events/events.js';
import { shortId, TODO_MARKS, todoSummary } from './formatEvent.js';
import { firstLine } from './liveFormat.js';

/** Options of {@link formatTimeline}. */
export interface TimelineOptions {
  /** Characters for the whole time span (default 60). */
  width?: number;
}

/**
 * A text timeline of agents from their events: one row an agent, `█` while it ran (from `agent.started` to its
 * last end), `·` while it waited to start, so agents that ran side by side are easy to see; a restarted agent's row
 * spans its attempts and says how often it was restarted. An agent that keeps a todo list (`todo_write`) has its
 * last list under its row, an item a line.
 *
 * @example
 * lead:x1Ab      ████████████████····························████████  ok
 *                todo 1/2 done
 *                [x] plan: Split the review
 *                [ ] merge: Merge the findings
 * auditor:Q2cd               ██████████████████████████████████        ok
 */
export function formatTimeline(events: readonly TroupeEvent[], options: TimelineOptions = {}): string {
  const width = Math.max(10, Math.floor(options.width ?? 60));
  const rows = new Map<string, { spawned: number; started?: number; ended?: number; status?: string; restarts?: number; todos?: TodoItem[] }>();
  let first = Infinity;
  let last = -Infinity;
  for (const event of events) {
    first = Math.min(first, event.at);
    last = Math.max(last, event.at);
    const row = rows.get(event.agentId) ?? { spawned: event.at };
    if (event.type === 'agent.started') row.started ??= event.at;
    if (event.type === 'agent.completed' || event.type === 'agent.failed') {
      row.ended = event.at;
      row.status = event.type === 'agent.completed' ? 'ok' : event.reason;
    }
    if (event.type === 'agent.restarted') row.restarts = (row.restarts ?? 0) + 1;
    if (event.type === 'todo.updated') row.todos = event.items;
    rows.set(event.agentId, row);
  }
  if (rows.size === 0) return '(no agents)';
  const span = Math.max(last - first, 1);
  const column = (at: number) => Math.min(width - 1, Math.floor(((at - first) / span) * width));
  const label = Math.max(...[...rows.keys()].map((id) => shortId(id).length));
  const lines = [...rows].map(([id, row]) => {
    const cells = Array.from({ length: width }, () => ' ');
    const end = column(row.ended ?? last);
    const start = row.started === undefined ? end + 1 : column(row.started);
    for (let at = column(row.spawned); at < Math.min(start, width); at++) cells[at] = '·';
    for (let at = start; at <= end; at++) cells[at] = '█';
    const line = `${shortId(id).padEnd(label)}  ${cells.join('')}  ${row.status ?? 'running'}${row.restarts ? ` (restarted ${row.restarts}×)` : ''}`;
    return row.todos === undefined ? line : [line, ...todoLines(row.todos, ''.padEnd(label + 2), width)].join('\n');
  });
  lines.push(`${''.padEnd(label)}  ${'0 ms'.padEnd(width - 8)}${`${Math.round(span)} ms`.padStart(8)}`);
  return lines.join('\n');
}

/** An agent's todo list under its row: a summary, then an item a line, each cut to the timeline's width (at least 60). */
function todoLines(items: readonly TodoItem[], indent: string, width: number): string[] {
  return [todoSummary(items), ...items.map((item) => `${TODO_MARKS[item.status]} ${item.id}: ${item.content}`)].map(
    (text) => `${indent}${firstLine(text, Math.max(width, 60))}`,
  );
}
