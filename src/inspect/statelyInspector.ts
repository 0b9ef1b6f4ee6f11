import type { InspectionEvent, Observer } from 'xstate';
import { Redactor } from '../redaction.js';
import { StatelyBridge } from './StatelyBridge.js';
import { startRelay, type Relay } from './StatelyRelay.js';

/** Options of {@link createStatelyInspector}. */
export interface StatelyInspectorOptions {
  /** The interface the relay listens on (default `127.0.0.1`: only this machine can connect). */
  host?: string;
  /** The relay's port (default 0: any free port; `url` says which). */
  port?: number;
  /** The Stately inspector's page, shown in a frame of the relay's page (default `https://stately.ai/inspect`). */
  inspectorUrl?: string;
  /**
   * Replaces secrets in what the page is sent (default: a `Redactor` of the environment's secrets and the key and
   * header patterns). `createRuntime({ inspect: 'stately' })` gives the runtime's own, which knows its `secrets`.
   */
  redactor?: Redactor;
}

/**
 * The Stately inspector for a run: an XState inspection observer and a relay on this machine that a browser page
 * connects to. Open `url`: the page shows the Stately inspector, fed with every actor of the system (the supervisor,
 * `agent:{name}:{key}` agents, groups, each agent's `worker:agent:…`), their states and the events between
 * them. A page opened late (or again) first gets every actor with its latest state, so it never sees an event from an
 * actor it was not told of; agents that ended stay, in their last state, until `close`.
 */
export interface StatelyInspector {
  /** The observer to give XState: `createRuntime({ inspect: inspector.inspect })` or `createActor(logic, { inspect })`. */
  readonly inspect: Observer<InspectionEvent>;
  /** Resolves, once the relay listens, with the page to open, such as `http://127.0.0.1:41234/`. */
  readonly url: Promise<string>;
  /** Resolves with the relay's WebSocket address (what the page connects to), such as `ws://127.0.0.1:41234`. */
  readonly socketUrl: Promise<string>;
  /**
   * Ends every connection and stops listening. Each page first gets the messages queued for it: the relay waits for as
   * long as a page keeps taking them, and cuts off only one that takes nothing for 5 seconds.
   */
  close(): Promise<void>;
}

/** The Stately inspector's own page, which the relay's page frames. */
export const STATELY_INSPECTOR_URL = 'https://stately.ai/inspect';

/**
 * Starts a {@link StatelyInspector}: its relay listens on `127.0.0.1` (any free port unless `port` says) from a moment
 * later; `url` resolves then, or rejects when it cannot listen. What happens before a page connects is kept for it.
 *
 * @example
 * const inspector = createStatelyInspector();
 * const runtime = createRuntime({ model, agents, inspect: inspector.inspect });
 * console.error(`Open ${await inspector.url}`);
 * await runtime.run('lead', 'Review the repository.');
 * await runtime.shutdown();
 * // … the page still shows the run …
 * await inspector.close();
 */
export function createStatelyInspector(options: StatelyInspectorOptions = {}): StatelyInspector {
  const bridge = new StatelyBridge({ redactor: options.redactor ?? new Redactor() });
  const relay: Promise<Relay> = startRelay(bridge, {
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    inspectorUrl: options.inspectorUrl ?? STATELY_INSPECTOR_URL,
  });
  const url = relay.then((listening) => listening.url);
  const socketUrl = relay.then((listening) => listening.socketUrl);
  // A relay that cannot listen is reported through `url`; nobody has to ask.
  for (const promise of [relay, url, socketUrl]) promise.catch(() => {});
  let closing: Promise<void> | undefined;
  return {
    inspect: bridge,
    url,
    socketUrl,
    close: () => (closing ??= relay.then((listening) => listening.close(), () => undefined)),
  };
}

/** True for a {@link StatelyInspector} (what `createRuntime({ inspect })` takes besides `'stately'` and observers). */
export function isStatelyInspector(value: unknown): value is StatelyInspector {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<StatelyInspector>;
  return typeof candidate.close === 'function' && typeof candidate.inspect?.next === 'function' && candidate.url instanceof Promise;
}
