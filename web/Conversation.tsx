import type { TroupeEvent, TroupeEventOf } from '../src/events/events.js';
import { formatEvent, shortId } from '../src/views/formatEvent.js';
import { count, formatCost, formatDuration } from '../src/views/liveFormat.js';
import type { RunModel } from '../src/views/RunModel.js';

/** At most this many of an agent's latest events are drawn (a resident agent can have thousands). */
const SHOWN = 300;

/**
 * An agent's conversation as its events tell it: its task, each turn's reply and tool calls with their results, the
 * messages it sent and got, the plan of a turn's calls, and how it ended.
 */
export function Conversation({ events, model, id }: { events: readonly TroupeEvent[]; model: RunModel; id: string }) {
  const entries = model.entriesOf(id);
  const shown = entries.slice(-SHOWN);
  const calls = callNames(events, shown);
  return (
    <div class="conversation" data-testid="conversation">
      {entries.length > shown.length ? <p class="muted">{count(entries.length - shown.length)} earlier events not shown</p> : null}
      {shown.map((index) => (
        <Entry key={index} event={events[index]!} events={events} model={model} calls={calls} />
      ))}
    </div>
  );
}

/** The tool of each call of the agent, by call id (what a plan names its calls by). */
function callNames(events: readonly TroupeEvent[], entries: readonly number[]): Map<string, string> {
  const names = new Map<string, string>();
  for (const index of entries) {
    const event = events[index]!;
    if (event.type === 'tool.call') names.set(event.callId, event.tool);
  }
  return names;
}

function Entry({ event, events, model, calls }: { event: TroupeEvent; events: readonly TroupeEvent[]; model: RunModel; calls: Map<string, string> }) {
  const label = (id: string) => model.agent(id)?.label ?? shortId(id);
  switch (event.type) {
    case 'agent.spawned':
      return <Block kind="user" title={event.resumed ? 'Task (resumed)' : event.group ? 'Group' : 'Task'} text={event.task} />;
    case 'model.request':
      return <div class="turn">turn {event.turn}</div>;
    case 'model.response':
      return (
        <Block
          kind="assistant"
          title={`Reply · ${count(event.usage.inputTokens + event.usage.outputTokens)} tokens · ${formatCost(event.costUsd)} · ${formatDuration(event.durationMs)}${event.toolCalls > 0 ? ` · ${event.toolCalls} tool call${event.toolCalls === 1 ? '' : 's'}` : ''}`}
          text={event.content ?? ''}
        />
      );
    case 'tool.call':
      return <Block kind="call" title={`→ ${event.tool}`} text={pretty(event.arguments)} />;
    case 'tool.result':
      return (
        <Block
          kind={event.status === 'ok' ? 'result' : 'error'}
          title={`← ${event.tool} ${event.waiting ? 'waiting' : event.status} · ${formatDuration(event.durationMs)}`}
          text={event.error ?? event.content ?? ''}
        />
      );
    case 'tool.wait_ended':
      return (
        <Block
          kind={event.status === 'ok' ? 'result' : 'error'}
          title={`← ${event.tool} ${event.outcome} · waited ${formatDuration(event.durationMs)}`}
          text={event.error ?? `${event.messages} message${event.messages === 1 ? '' : 's'}`}
        />
      );
    case 'message.sent':
      return <Block kind="message" title={`✉ to ${label(event.message.to)}${event.message.topic ? ` (${event.message.topic})` : ''}`} text={event.message.content} />;
    case 'message.delivered': {
      const sent = model.sentIndex(event.messageId);
      const message = sent === undefined ? undefined : events[sent];
      const text = message?.type === 'message.sent' ? message.message.content : '';
      return <Block kind="message" title={`✉ from ${label(event.from)}${event.topic ? ` (${event.topic})` : ''}`} text={text} />;
    }
    case 'agent.completed':
      return <Block kind="answer" title="Answer" text={event.output} />;
    case 'agent.failed':
      return <Block kind="error" title={`Failed (${event.reason}, ${event.error.code})`} text={event.error.message} />;
    case 'tool.plan':
      return <Plan event={event} calls={calls} />;
    default:
      return <div class="note">{formatEvent(event).slice(10).trim()}</div>;
  }
}

/** A turn's plan: each stage's calls (side by side), then why each waiting call waits. */
function Plan({ event, calls }: { event: TroupeEventOf<'tool.plan'>; calls: Map<string, string> }) {
  const name = (id: string) => `${calls.get(id) ?? 'call'} ${id}`;
  return (
    <div class="block plan" data-testid="plan">
      <div class="block-title">Plan of the turn's tool calls</div>
      <ol>
        {event.stages.map((stage, index) => (
          <li key={index}>{stage.map(name).join(' ‖ ')}</li>
        ))}
      </ol>
      {event.waits.map((wait) => (
        <div key={wait.callId} class="note">
          {name(wait.callId)} waits for {wait.after.map(name).join(', ')}: {wait.reason}
        </div>
      ))}
    </div>
  );
}

function Block({ kind, title, text }: { kind: string; title: string; text: string }) {
  return (
    <div class={`block ${kind}`}>
      <div class="block-title">{title}</div>
      {text === '' ? null : <pre>{text.length > 4_000 ? `${text.slice(0, 4_000)}… (${count(text.length)} characters)` : text}</pre>}
    </div>
  );
}

/** Tool arguments as indented JSON when they are JSON, else as the model wrote them. */
function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}
