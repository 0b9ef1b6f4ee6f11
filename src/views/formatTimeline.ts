import type { TodoItem, TroupeEvent, TroupeEventOf } from '../events/events.js';
import { RUNTIME_ADDRESS } from '../messaging/Message.js';
import { shortId, todoItemLine, todoSummary } from './formatEvent.js';
import { firstLine } from './liveFormat.js';

/** Options of {@link formatTimeline}. */
export interface TimelineOptions {
  /** Characters for the whole time span (default 60). */
  width?: number;
  /** Show each planned turn (`tool.plan`) below the bars: its stages and why calls wait (default true). */
  plans?: boolean;
}

/** Calls shown per stage, and waits per plan, before the rest is counted. */
const SHOWN = 8;

/**
 * A text timeline of agents from their events: one row an agent (none for `runtime`, whose events are code's messages
 * and blackboard writes), `█` while it ran (from each `agent.started` to the end of that run: a resumed agent's row is
 * blank between its runs), `·` while it waited to start, so agents that ran side by side are easy to see; a restarted
 * agent's row spans its attempts and says how often it was restarted. An agent that keeps a todo list (`todo_write`) has its last list under its row, an item a line. Below,
 * each turn of several tool calls as it was planned (`tool.plan`): its stages, the calls of each (by id and tool), and
 * why each waiting call waits.
 *
 * @example
 * lead:x1Ab      ████████████████····························████████  ok
 *                todo 1/2 done
 *                [x] plan: Split the review
 *                [ ] merge: Merge the findings
 * auditor:Q2cd               ██████████████████████████████████        ok
 *
 * plans
 * lead:x1Ab at 0 ms: 3 calls in 2 stages
 *   stage 1  c1 write_file, c3 read_file
 *   stage 2  c2 write_file
 *   c2 waits for c1: writes src/**\/*.ts, which overlaps src/a.ts that c1 writes
 */
export function formatTimeline(events: readonly TroupeEvent[], options: TimelineOptions = {}): string {
  const width = Math.max(10, Math.floor(options.width ?? 60));
  // `runs`: when each run (an attempt, or a resumed run) started and ended: a resumed agent's bar has a gap between.
  type Row = { spawned: number; runs: { start: number; end?: number }[]; ended?: number; status?: string; restarts?: number; todos?: TodoItem[] };
  const rows = new Map<string, Row>();
  let first = Infinity;
  let last = -Infinity;
  for (const event of events) {
    first = Math.min(first, event.at);
    last = Math.max(last, event.at);
    if (event.agentId === RUNTIME_ADDRESS) continue; // code that sent a message or wrote the blackboard: no agent
    const row = rows.get(event.agentId) ?? { spawned: event.at, runs: [] };
    const run = row.runs.at(-1);
    if (event.type === 'agent.started' && (run === undefined || run.end !== undefined)) row.runs.push({ start: event.at });
    if (event.type === 'agent.completed' || event.type === 'agent.failed') {
      if (run !== undefined && run.end === undefined) run.end = event.at;
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
    const start = row.runs.length === 0 ? end + 1 : column(row.runs[0]!.start);
    for (let at = column(row.spawned); at < Math.min(start, width); at++) cells[at] = '·';
    for (const { start: from, end: to } of row.runs) {
      for (let at = column(from); at <= column(to ?? last); at++) cells[at] = '█';
    }
    const line = `${shortId(id).padEnd(label)}  ${cells.join('')}  ${row.status ?? 'running'}${row.restarts ? ` (restarted ${row.restarts}×)` : ''}`;
    return row.todos === undefined ? line : [line, ...todoLines(row.todos, ''.padEnd(label + 2), width)].join('\n');
  });
  lines.push(`${''.padEnd(label)}  ${'0 ms'.padEnd(width - 8)}${`${Math.round(span)} ms`.padStart(8)}`);
  if (options.plans !== false) lines.push(...formatPlans(events, first));
  return lines.join('\n');
}

/** An agent's todo list under its row: a summary, then an item a line, each cut to the timeline's width (at least 60). */
function todoLines(items: readonly TodoItem[], indent: string, width: number): string[] {
  return [todoSummary(items), ...items.map(todoItemLine)].map(
    (text) => `${indent}${firstLine(text, Math.max(width, 60))}`,
  );
}

/** The lines of every planned turn, after an empty line and a title; none when no turn was planned. */
function formatPlans(events: readonly TroupeEvent[], first: number): string[] {
  const tools = new Map<string, string>();
  const plans: TroupeEventOf<'tool.plan'>[] = [];
  for (const event of events) {
    if (event.type === 'tool.call') tools.set(`${event.agentId} ${event.callId}`, event.tool);
    if (event.type === 'tool.plan') plans.push(event);
  }
  if (plans.length === 0) return [];
  const lines = ['', 'plans'];
  for (const plan of plans) {
    const name = (callId: string) => {
      const tool = tools.get(`${plan.agentId} ${callId}`);
      return tool === undefined ? callId : `${callId} ${tool}`;
    };
    const calls = plan.stages.reduce((sum, stage) => sum + stage.length, 0);
    const cap = plan.maxConcurrency === undefined ? '' : `, at most ${plan.maxConcurrency} at a time`;
    lines.push(`${shortId(plan.agentId)} at ${Math.round(plan.at - first)} ms: ${calls} calls in ${plan.stages.length} stage${plan.stages.length === 1 ? '' : 's'}${cap}`);
    plan.stages.forEach((stage, index) => lines.push(`  stage ${index + 1}  ${listed(stage, name)}`));
    for (const wait of plan.waits.slice(0, SHOWN)) lines.push(`  ${wait.callId} waits for ${listed(wait.after)}: ${wait.reason}`);
    if (plan.waits.length > SHOWN) lines.push(`  … and ${plan.waits.length - SHOWN} more waiting`);
  }
  return lines;
}

/** Up to {@link SHOWN} items (each as `show` writes it), then how many more. */
function listed(items: readonly string[], show: (item: string) => string = (item) => item): string {
  const shown = items.slice(0, SHOWN).map(show).join(', ');
  return items.length > SHOWN ? `${shown}, +${items.length - SHOWN} more` : shown;
}
