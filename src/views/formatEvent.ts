import type { TodoItem, TroupeEvent, TroupeEventOf } from '../events/events.js';

/** Shortens `agent:researcher:V1StGXR8ab` to `researcher:V1St`, enough to tell agents apart in a log. */
export function shortId(id: string): string {
  const [, name, key] = id.split(':');
  return name !== undefined && key !== undefined ? `${name}:${key.slice(0, 4)}` : id;
}

/** One readable log line for an event, such as `  researcher:V1St  → read_file {"path":"a.md"}`. */
export function formatEvent(event: TroupeEvent): string {
  const who = shortId(event.agentId).padEnd(18);
  const time = `${(event.at / 1000).toFixed(3).padStart(8)}s`;
  const line = (text: string) => `${time}  ${who} ${text}`;
  switch (event.type) {
    case 'agent.spawned':
      return line(
        `${event.resumed ? 'resumed' : event.attempt ? `restarted (attempt ${event.attempt})` : 'spawned'}${event.parentId ? ` by ${shortId(event.parentId)}` : ''}` +
          `${event.background ? ' in the background' : ''}: ${clip(event.description ?? event.task, 60)}`,
      );
    case 'agent.started':
      return line('started');
    case 'model.request':
      return line(`thinking (turn ${event.turn})`);
    case 'model.response':
      return line(
        `model replied: ${event.usage.inputTokens}+${event.usage.outputTokens} tokens` +
          (event.toolCalls > 0 ? `, ${event.toolCalls} tool call(s)` : ''),
      );
    case 'model.retry':
      return line(`model call failed (try ${event.attempt}, ${event.error.code}${event.error.status ? ` ${event.error.status}` : ''}); again in ${event.delayMs} ms`);
    case 'tool.call':
      return line(`→ ${event.tool} ${clip(event.arguments, 50)}`);
    case 'tool.result':
      return line(`← ${event.tool} ${event.waiting ? 'waiting' : event.status}${event.error ? `: ${clip(event.error, 50)}` : ''}`);
    case 'tool.wait_ended':
      return line(`← ${event.tool} ${waitLine(event)}`);
    case 'tool.denied':
      return line(`✗ ${event.tool} denied (${event.reason})`);
    case 'tool.plan':
      return line(planLine(event));
    case 'approval.requested':
      return line(`awaits approval ${event.requestId}${event.tool ? ` to call ${event.tool}` : ''} (${event.risk} risk)${event.reason ? `: ${clip(event.reason, 50)}` : ''}`);
    case 'approval.granted':
      return line(`approved (${event.requestId})`);
    case 'approval.denied':
      return line(`denied: ${clip(event.reason, 60)}`);
    case 'agent.completed':
      return line(`completed: ${clip(event.output, 60)}`);
    case 'agent.failed':
      return line(`failed (${event.reason}, ${event.error.code}): ${clip(event.error.message, 60)}`);
    case 'agent.restarted':
      return line(
        `↻ restarting (attempt ${event.attempt}) after ${event.reason}` +
          (event.by ? ` of ${shortId(event.by)} (one-for-all)` : `: ${clip(event.error.message, 50)}`),
      );
    case 'agent.escalated':
      return line(
        `⇑ escalated (${event.reason}): ${event.refused ? clip(event.refused, 50) : `${event.restarts} restarts within ${event.withinMs} ms, at most ${event.max}`}`,
      );
    case 'agent.waiting':
      return line(event.reason === 'idle' ? 'waits for messages' : 'waits for a message or reply');
    case 'message.sent':
      return line(`✉ ${event.message.id} → ${shortId(event.message.to)}: ${clip(event.message.content, 50)}`);
    case 'message.delivered':
      return line(`✉ ${event.messageId} from ${shortId(event.from)}${event.topic ? ` (${event.topic})` : ''}`);
    case 'message.dropped':
      return line(`✉ ${event.messageId} from ${shortId(event.from)} dropped (${event.reason})`);
    case 'message.dead_letter':
      return line(`✉ ${event.message.id} → ${shortId(event.message.to)} undeliverable (${event.reason})`);
    case 'blackboard.changed':
      return line(event.deleted ? `blackboard: ${event.key} deleted` : `blackboard: ${event.key} = ${clip(JSON.stringify(event.value) ?? '', 50)}`);
    case 'todo.updated':
      return line(todoSummary(event.items));
  }
}

/** How a wait ended, in a few words: `2 messages after 1.500 s`, `timeout after 5.000 s: no reply to msg:3 came…`. */
function waitLine(event: TroupeEventOf<'tool.wait_ended'>): string {
  const after = `after ${(event.durationMs / 1000).toFixed(3)} s`;
  if (event.status === 'error') return `${event.outcome} ${after}${event.error ? `: ${clip(event.error, 50)}` : ''}`;
  const what = event.outcome === 'reply' ? 'reply' : `${event.messages} message${event.messages === 1 ? '' : 's'}`;
  return `${what} ${after}`;
}

/** A todo list in a few words: `todo 1/3 done, now: Write the parser` (or `todo list cleared`). */
export function todoSummary(items: readonly TodoItem[]): string {
  if (items.length === 0) return 'todo list cleared';
  const done = items.filter((item) => item.status === 'done').length;
  const now = items.find((item) => item.status === 'in_progress');
  return `todo ${done}/${items.length} done${now ? `, now: ${clip(now.content, 40)}` : ''}`;
}

/** How each status of a todo item is marked: `[x]` done, `[>]` in progress, `[ ]` pending. */
const STATUS_MARKS: Readonly<Record<TodoItem['status'], string>> = { done: '[x]', in_progress: '[>]', pending: '[ ]' };

/** One todo item as a line, as the todo tools and the views show it: `[>] spec: Read the spec`. */
export function todoItemLine(item: TodoItem): string {
  return `${STATUS_MARKS[item.status]} ${item.id}: ${item.content}`;
}

/** `plans 4 calls in 3 stages; 2 wait (c2 writes src/a.ts that c1 reads, …)`. */
function planLine(event: TroupeEventOf<'tool.plan'>): string {
  const calls = event.stages.reduce((sum, stage) => sum + stage.length, 0);
  const head = `plans ${calls} calls in ${event.stages.length} stage${event.stages.length === 1 ? '' : 's'}`;
  const [first] = event.waits;
  if (!first) return head;
  return `${head}; ${event.waits.length} wait (${clip(`${first.callId} ${first.reason}`, 50)}${event.waits.length > 1 ? ', …' : ''})`;
}

function clip(text: string, length: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > length ? `${flat.slice(0, length - 1)}…` : flat;
}
