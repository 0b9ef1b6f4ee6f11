import { basename } from 'node:path';
import type { Observable, Subscription } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';
import { agentMachine } from '../machines/agentMachine.js';
import { groupMachine } from '../machines/groupMachine.js';
import { readRecording } from '../views/readRecording.js';
import { EventFeed } from './EventFeed.js';
import { machineGraph, type MachineGraph } from './machineGraph.js';
import { loadWebAssets } from './webAssets.js';
import { startWebServer, type WebServer } from './webServer.js';

/** Options of {@link createWebInspector} and {@link openWebReplay}. */
export interface WebInspectorOptions {
  /** The interface to listen on (default `127.0.0.1`: only this machine can connect). */
  host?: string;
  /** The port (default 0: any free port; `url` says which). */
  port?: number;
  /** The page's title (default `troupe run`, or the file's name for a replay). */
  title?: string;
}

/**
 * troupe's own inspector, a page served on this machine that needs no internet: the live agent tree, each agent's
 * statechart (its current state lit), conversation and figures, the event log with filters, the messages between
 * agents, charts over time, and a slider to go back to any moment of the run. Feed it a runtime's events (`watch`),
 * or events one by one (`push`); the page keeps the whole run, also after it ended.
 */
export interface WebInspector {
  /** Resolves, once the server listens, with the page to open, such as `http://127.0.0.1:41234/`; rejects when it cannot. */
  readonly url: Promise<string>;
  /** Pages connected now. */
  readonly clients: number;
  /** Shows every event of `events` (a runtime's `events$`); when it completes, the page shows the run ended. */
  watch(events: Observable<TroupeEvent>): Subscription;
  /** Shows one event. */
  push(event: TroupeEvent): void;
  /** Says the run is over: pages show it ended, and keep showing it. */
  end(): void;
  /** Sends pages what they have not seen, ends their streams and stops listening. Pages keep what they show. */
  close(): Promise<void>;
}

let graphs: Record<string, MachineGraph> | undefined;

/** The machines a page draws: an agent's and a group's, read from the machines the runtime runs. */
function machines(): Record<string, MachineGraph> {
  return (graphs ??= { agent: machineGraph(agentMachine), group: machineGraph(groupMachine) });
}

/**
 * Starts a {@link WebInspector}: its server listens on `127.0.0.1` (any free port unless `port` says) from a moment
 * later. Events pushed before a page connects are kept for it.
 *
 * @example
 * const inspector = createWebInspector({ title: 'review' });
 * const runtime = createRuntime({ model, agents });
 * inspector.watch(runtime.events$);
 * console.error(`Open ${await inspector.url}`);
 * await runtime.run('lead', 'Review the repository.');
 * await runtime.shutdown(); // the page shows the run ended
 * // … later: await inspector.close();
 */
export function createWebInspector(options: WebInspectorOptions = {}): WebInspector {
  return inspectorOver(new EventFeed(), 'live', options.title ?? 'troupe run', options);
}

/**
 * Serves a saved run (what `createRuntime({ record })` or `trace` wrote, or `troupe run --trace`;
 * `examples/web-inspector.ts --record`) in the web inspector, ended, to scrub through with its slider: what
 * `troupe ui run.jsonl` does. Rejects, like `readRecording`, a file that is corrupt or of a newer format; a last line a
 * crash cut short is left out.
 */
export async function openWebReplay(path: string, options: WebInspectorOptions = {}): Promise<WebReplay> {
  const recording = await readRecording(path, { dropTornLine: true });
  const feed = new EventFeed();
  feed.pushLines(recording.events.map((event) => JSON.stringify(event)));
  feed.end();
  const inspector: WebReplay = inspectorOver(feed, 'replay', options.title ?? basename(path), options);
  await inspector.url;
  if (recording.tornLine !== undefined) return Object.assign(inspector, { tornLine: recording.tornLine });
  return inspector;
}

/** A saved run served by {@link openWebReplay}. */
export interface WebReplay extends WebInspector {
  /** The number of the file's last line, left out because a crash cut it short; absent when none was. */
  readonly tornLine?: number;
}

function inspectorOver(feed: EventFeed, mode: 'live' | 'replay', title: string, options: WebInspectorOptions): WebInspector {
  const server: Promise<WebServer> = startWebServer({
    host: options.host ?? '127.0.0.1',
    port: options.port ?? 0,
    title,
    mode,
    feed,
    machines: machines(),
    assets: loadWebAssets,
  });
  server.catch(() => {}); // reported through `url`
  let listening: WebServer | undefined;
  server.then((started) => (listening = started), () => undefined);
  // The page's bundle is made (or read) while the server starts, so the first page load does not wait for it.
  loadWebAssets().catch(() => {});
  let closing: Promise<void> | undefined;
  const url = server.then((started) => started.url);
  url.catch(() => {}); // nobody has to ask
  return {
    url,
    get clients() {
      return listening?.clients ?? 0;
    },
    watch: (events) => events.subscribe({ next: (event) => feed.push(event), complete: () => feed.end() }),
    push: (event) => feed.push(event),
    end: () => feed.end(),
    close: () => (closing ??= server.then((started) => started.close(), () => undefined)),
  };
}

/** True for a {@link WebInspector} (what `createRuntime({ ui })` takes besides `true` and options). */
export function isWebInspector(value: unknown): value is WebInspector {
  if (typeof value !== 'object' || value === null) return false;
  const candidate = value as Partial<WebInspector>;
  return typeof candidate.watch === 'function' && typeof candidate.close === 'function' && candidate.url instanceof Promise;
}
