import { useRef, useState } from 'preact/hooks';
import type { TroupeEvent } from '../src/events/events.js';
import { formatEvent, shortId } from '../src/views/formatEvent.js';
import { count } from '../src/views/liveFormat.js';
import type { RunModel } from '../src/views/RunModel.js';
import type { StoreActions } from './store.js';
import { useVirtualRows } from './virtual.js';

const ROW = 20;

/** What the log shows: events of an agent (by label, name or id), of a type, with a text. Empty shows all. */
export interface LogFilter {
  readonly agent: string;
  readonly type: string;
  readonly text: string;
}

/**
 * The indices of the events a filter lets through, kept up to date as events are folded (each event looked at once)
 * and cut back when the page goes back in time; lines are formatted once an event.
 */
class LogIndex {
  readonly matches: number[] = [];
  #scanned = 0;
  #key = '';
  readonly #lines: string[] = [];
  #events: readonly TroupeEvent[] | undefined;

  line(events: readonly TroupeEvent[], index: number): string {
    return (this.#lines[index] ??= formatEvent(events[index]!));
  }

  update(events: readonly TroupeEvent[], model: RunModel, filter: LogFilter): number[] {
    const key = JSON.stringify(filter);
    if (events !== this.#events) {
      // Another run's events (the page started afresh on another server): no line or match of the old one holds.
      this.#events = events;
      this.#lines.length = 0;
      this.#key = '';
    }
    if (key !== this.#key) {
      this.#key = key;
      this.matches.length = 0;
      this.#scanned = 0;
    }
    const upTo = model.count;
    if (upTo < this.#scanned) {
      while (this.matches.length > 0 && this.matches[this.matches.length - 1]! >= upTo) this.matches.pop();
      this.#scanned = upTo;
    }
    const agent = filter.agent.trim().toLowerCase();
    const text = filter.text.trim().toLowerCase();
    for (let index = this.#scanned; index < upTo; index += 1) {
      const event = events[index]!;
      if (filter.type !== '' && event.type !== filter.type) continue;
      if (agent !== '' && !matchesAgent(model, event.agentId, agent)) continue;
      if (text !== '' && !this.line(events, index).toLowerCase().includes(text)) continue;
      this.matches.push(index);
    }
    this.#scanned = upTo;
    return this.matches;
  }
}

function matchesAgent(model: RunModel, id: string, wanted: string): boolean {
  const label = model.agent(id)?.label ?? '';
  return label.toLowerCase() === wanted || id.toLowerCase().includes(wanted) || label.toLowerCase().startsWith(wanted);
}

/**
 * The event log, with filters by agent, type and text, as a virtual list that follows the run while it is scrolled to
 * the end. A click on a line selects its agent.
 */
export function EventLog({ events, model, actions }: { events: readonly TroupeEvent[]; model: RunModel; actions: StoreActions }) {
  const [filter, setFilter] = useState<LogFilter>({ agent: '', type: '', text: '' });
  const index = useRef(new LogIndex()).current;
  const matches = index.update(events, model, filter);
  const list = useVirtualRows(matches.length, ROW, true);
  const set = (field: keyof LogFilter) => (event: Event) => setFilter({ ...filter, [field]: (event.currentTarget as HTMLInputElement).value });
  return (
    <div class="log">
      <div class="filters" role="search">
        <input placeholder="agent" aria-label="filter by agent" value={filter.agent} onInput={set('agent')} />
        <select aria-label="filter by type" value={filter.type} onChange={set('type')}>
          <option value="">every type</option>
          {[...model.types].sort().map((type) => (
            <option key={type} value={type}>
              {type}
            </option>
          ))}
        </select>
        <input placeholder="text" aria-label="filter by text" value={filter.text} onInput={set('text')} />
        <span class="muted" data-testid="log-count">
          {count(matches.length)} of {count(model.count)} events
        </span>
      </div>
      <div class="scroll mono" ref={list.scrollRef} data-testid="event-log">
        <div style={{ height: `${list.total}px`, position: 'relative' }}>
          {list.items.map((item) => {
            const position = matches[item.index]!;
            const event = events[position]!;
            return (
              <div
                key={position}
                class={`row log-row ${event.type.replace('.', '-')}`}
                data-type={event.type}
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW}px` }}
                onClick={() => actions.select(event.agentId)}
              >
                {index.line(events, position)}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}

/** The messages between agents: who sent what to whom (an agent, a name or a topic), in order. */
export function MessageList({ events, model, actions }: { events: readonly TroupeEvent[]; model: RunModel; actions: StoreActions }) {
  const { messages } = model;
  const list = useVirtualRows(messages.length, ROW, true);
  const label = (id: string) => model.agent(id)?.label ?? shortId(id);
  return (
    <div class="log">
      <div class="filters">
        <span class="muted" data-testid="message-count">
          {count(messages.length)} messages
        </span>
      </div>
      <div class="scroll mono" ref={list.scrollRef} data-testid="message-list">
        <div style={{ height: `${list.total}px`, position: 'relative' }}>
          {list.items.map((item) => {
            const event = events[messages[item.index]!]!;
            if (event.type !== 'message.sent') return null;
            const { message } = event;
            return (
              <div
                key={message.id}
                class="row log-row message"
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW}px` }}
                onClick={() => actions.select(event.agentId)}
              >
                {`${(event.at / 1000).toFixed(3).padStart(9)}s  ${label(message.from)} → ${label(message.to)}: ${message.content.replace(/\s+/g, ' ')}`}
              </div>
            );
          })}
        </div>
      </div>
    </div>
  );
}
