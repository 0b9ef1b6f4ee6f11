import type { TroupeEvent } from '../src/events/events.js';
import type { MachineGraph } from '../src/inspect/machineGraph.js';
import { RunModel } from '../src/views/RunModel.js';

/** How the page knows the run: from the server's stream, with the model folded up to the moment shown. */
export interface Store {
  /** The run's name and whether it is live or a saved run. */
  title: string;
  mode: 'live' | 'replay';
  /** The server the events came from: another one (a new run on the same port) starts the page afresh. */
  instance: string | null;
  /** True while the stream is open. */
  connected: boolean;
  /** True once the run has ended (the page keeps showing it). */
  ended: boolean;
  /** Every event received, in order (a new array when the page starts afresh on another server's run). */
  events: TroupeEvent[];
  /** The run as it was at `shown` events. */
  model: RunModel;
  /** The moment shown, as a count of events; null follows the run as it goes (live). */
  cursor: number | null;
  /** The agent whose details are shown. */
  selected: string | null;
  /** The machines to draw, by kind (`agent`, `group`). */
  machines: Record<string, MachineGraph>;
  /** Rises with every change, for the views. */
  version: number;
}

/** The store, and what changes it. Views call `subscribe` and read `store`. */
export function createStore() {
  const store: Store = {
    title: 'troupe',
    mode: 'live',
    instance: null,
    connected: false,
    ended: false,
    events: [],
    model: new RunModel(),
    cursor: null,
    selected: null,
    machines: {},
    version: 0,
  };
  const listeners = new Set<() => void>();
  let scheduled = false;
  /** Views redraw at most every 100 ms: a run of 10,000 events a second folds at once and draws ten times. */
  const changed = () => {
    store.version += 1;
    if (scheduled) return;
    scheduled = true;
    setTimeout(() => {
      scheduled = false;
      for (const listener of listeners) listener();
    }, 100);
  };
  const foldTo = (count: number) => {
    if (count < store.model.count) store.model = new RunModel();
    const { model, events } = store;
    for (let index = model.count; index < count; index += 1) model.apply(events[index]!);
  };
  return {
    store,
    subscribe(listener: () => void): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    /** Shows the run at `count` events, or live (null). */
    seek(count: number | null): void {
      store.cursor = count === null || count >= store.events.length ? null : Math.max(0, count);
      foldTo(store.cursor ?? store.events.length);
      changed();
    },
    select(id: string | null): void {
      store.selected = id;
      changed();
    },
    /** Connects to the server: the machines, then the stream of events. */
    connect(): void {
      fetch('/api/machines')
        .then((response) => response.json())
        .then((machines: Record<string, MachineGraph>) => {
          store.machines = machines;
          changed();
        })
        .catch(() => {});
      const source = new EventSource('/api/events');
      source.addEventListener('hello', (message) => {
        const hello = JSON.parse((message as MessageEvent<string>).data) as { title: string; mode: 'live' | 'replay'; instance: string };
        // Reconnected to another server (the run it showed stopped, and another started on the same port): that server
        // sends its run from the start, which must not be added to the events of the one shown so far.
        if (store.instance !== null && store.instance !== hello.instance) {
          store.events = [];
          store.model = new RunModel();
          store.cursor = null;
          store.selected = null;
          store.ended = false;
        }
        store.instance = hello.instance;
        store.title = hello.title;
        store.mode = hello.mode;
        store.connected = true;
        document.title = `${hello.title} · troupe`;
        changed();
      });
      source.addEventListener('message', (message) => {
        for (const event of JSON.parse(message.data as string) as TroupeEvent[]) store.events.push(event);
        if (store.cursor === null) foldTo(store.events.length);
        changed();
      });
      source.addEventListener('end', () => {
        store.ended = true;
        store.connected = false;
        source.close();
        changed();
      });
      source.addEventListener('error', () => {
        store.connected = false;
        changed();
      });
    },
  };
}

/** The store's actions, as `createStore` returns them. */
export type StoreActions = ReturnType<typeof createStore>;
