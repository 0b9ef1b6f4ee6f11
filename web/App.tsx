import { useEffect, useReducer, useState } from 'preact/hooks';
import { count, counted, formatCost, formatDuration } from '../src/views/liveFormat.js';
import { AgentPanel } from './AgentPanel.js';
import { Charts } from './Charts.js';
import { EventLog, MessageList } from './EventLog.js';
import type { StoreActions } from './store.js';
import { Tree } from './Tree.js';

/** The whole page: the run's header and time slider, charts, the agent tree, the selected agent, the log. */
export function App({ actions }: { actions: StoreActions }) {
  const { store } = actions;
  const [, redraw] = useReducer((n: number) => n + 1, 0);
  useEffect(() => actions.subscribe(() => redraw(undefined as never)), []);
  const [closed, setClosed] = useState<Set<string>>(() => new Set());
  const [tab, setTab] = useState<'events' | 'messages'>('events');
  const toggle = (id: string) => {
    const next = new Set(closed);
    if (!next.delete(id)) next.add(id);
    setClosed(next);
  };
  return (
    <div class="app">
      <Header actions={actions} />
      <Charts series={store.model.series} version={store.version} />
      <main class="main">
        <Tree store={store} actions={actions} closed={closed} toggle={toggle} />
        <AgentPanel store={store} />
      </main>
      <section class="panel bottom" aria-label="Log">
        <div class="tabs" role="tablist">
          <button role="tab" aria-selected={tab === 'events'} onClick={() => setTab('events')}>
            Events
          </button>
          <button role="tab" aria-selected={tab === 'messages'} onClick={() => setTab('messages')}>
            Messages ({count(store.model.messages.length)})
          </button>
        </div>
        {tab === 'events' ? (
          <EventLog events={store.events} model={store.model} actions={actions} />
        ) : (
          <MessageList events={store.events} model={store.model} actions={actions} />
        )}
      </section>
    </div>
  );
}

/** The run's name and status, its totals, and the slider that goes back to any moment (replay). */
function Header({ actions }: { actions: StoreActions }) {
  const { store } = actions;
  const { model, events } = store;
  const totals = model.tree.totals;
  const status = store.ended ? 'ended' : store.connected ? (store.mode === 'replay' ? 'saved run' : 'live') : 'connecting…';
  const shown = store.cursor ?? events.length;
  const startedAt = model.startedAt ?? 0;
  const [playing, setPlaying] = useState(false);
  useEffect(() => {
    if (!playing) return;
    const step = Math.max(1, Math.round(events.length / 300));
    const timer = setInterval(() => {
      const next = (store.cursor ?? events.length) + step;
      actions.seek(next >= events.length ? null : next);
      if (next >= events.length) setPlaying(false);
    }, 50);
    return () => clearInterval(timer);
  }, [playing]);
  return (
    <header class="top">
      <div class="title">
        <strong>troupe</strong> <span data-testid="title">{store.title}</span>{' '}
        <span class={`badge ${status.replace(/[^a-z]/g, '')}`} data-testid="status">
          {status}
        </span>
      </div>
      <div class="totals muted" data-testid="run-totals">
        {counted(totals.agents, 'agent')} · {counted(totals.tokens, 'token')} · {formatCost(totals.costUsd)} · {counted(totals.toolCalls, 'tool call')} ·{' '}
        {formatDuration(model.lastAt - startedAt)}
      </div>
      <div class="replay">
        <button aria-label={playing ? 'pause' : 'play'} onClick={() => (playing ? setPlaying(false) : (store.cursor === null && actions.seek(0), setPlaying(true)))}>
          {playing ? '❚❚' : '▶'}
        </button>
        <input
          type="range"
          aria-label="time"
          data-testid="slider"
          min={0}
          max={events.length}
          value={shown}
          onInput={(event) => actions.seek(Number((event.currentTarget as HTMLInputElement).value))}
        />
        <span class="muted mono" data-testid="position">
          {count(shown)} / {count(events.length)} events
        </span>
        <button disabled={store.cursor === null} onClick={() => actions.seek(null)}>
          {store.mode === 'live' && !store.ended ? 'live' : 'end'}
        </button>
      </div>
    </header>
  );
}
