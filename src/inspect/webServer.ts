import { randomUUID } from 'node:crypto';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { EventFeed } from './EventFeed.js';
import { escapeHtml, listen, urlHost } from './http.js';
import type { MachineGraph } from './machineGraph.js';
import type { WebAssets } from './webAssets.js';

/** What the web inspector's server serves. */
export interface WebServerOptions {
  host: string;
  port: number;
  /** The page's title (the run's name). */
  title: string;
  /** `live`: a run going on; `replay`: a saved run read from a file. */
  mode: 'live' | 'replay';
  feed: EventFeed;
  machines: Record<string, MachineGraph>;
  assets: () => Promise<WebAssets>;
}

/** A listening web inspector server. */
export interface WebServer {
  readonly url: string;
  /** Pages connected now. */
  readonly clients: number;
  /** Sends what is left to every page, ends their streams and stops listening. */
  close(): Promise<void>;
}

/** How often a page gets the events that came since its last batch. Batches keep a fast run from flooding the page. */
const BATCH_MS = 100;
/** At most this many events a message, so a page that connects late to a long run gets it in parts. */
const BATCH_EVENTS = 5_000;
/** When the server closes, a page that takes none of what is left for this long is cut off. */
const STALL_MS = 5_000;
/** A comment now and then keeps proxies and browsers from closing a quiet stream. */
const KEEP_ALIVE_MS = 15_000;

/**
 * Starts the web inspector's server: the page at `/`, its script and style under `/assets/`, the machines it draws
 * at `/api/machines`, and the run's events as server-sent events at `/api/events`: `hello` (title, mode, and this
 * server's `instance`), then the events in batches (each message a JSON array, its `id` `<instance>.<count of events
 * sent so far>`, so a page that reconnects says where it was), then `end` once the run is over. A page that reconnects
 * with the id of another server (one started on the same port after the first stopped) gets the run from its start.
 * Only requests addressed to this host are answered (a page of another site cannot reach the server by a name it made
 * resolve to 127.0.0.1).
 */
export async function startWebServer(options: WebServerOptions): Promise<WebServer> {
  const streams = new Set<EventStream>();
  const instance = randomUUID();
  let hosts = new Set<string>();
  const server = createServer((request, response) => {
    if (!hosts.has(request.headers.host ?? '')) {
      response.writeHead(403, { 'content-type': 'text/plain; charset=utf-8' }).end('Forbidden: open the address troupe printed.\n');
      return;
    }
    route(request, response, options, instance, streams).catch((error: unknown) => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'text/plain; charset=utf-8' });
      response.end(`${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
  const { port } = await listen(server, options.port, options.host);
  const host = urlHost(options.host);
  hosts = new Set([`${host}:${port}`, `localhost:${port}`]);
  return {
    url: `http://${host}:${port}/`,
    get clients() {
      return streams.size;
    },
    close: async () => {
      // Each page takes what is left (a socket's buffer may hold megabytes of a long run) before its socket is cut.
      await Promise.all([...streams].map((stream) => stream.close()));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

async function route(request: IncomingMessage, response: ServerResponse, options: WebServerOptions, instance: string, streams: Set<EventStream>): Promise<void> {
  const path = (request.url ?? '/').split('?')[0];
  if (request.method !== 'GET') return void response.writeHead(405, { allow: 'GET' }).end();
  switch (path) {
    case '/':
      return send(response, 'text/html', page(options.title));
    case '/assets/app.js':
      return send(response, 'text/javascript', (await options.assets()).script);
    case '/assets/app.css':
      return send(response, 'text/css', (await options.assets()).style);
    case '/favicon.ico':
      return void response.writeHead(204).end();
    case '/api/machines':
      return send(response, 'application/json', JSON.stringify(options.machines));
    case '/api/events': {
      const stream = new EventStream(response, options, instance, seenBefore(request.headers['last-event-id'], instance), () => streams.delete(stream));
      streams.add(stream);
      return;
    }
    default:
      response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: open / for the inspector.\n');
  }
}

/**
 * How many events a reconnecting page has: the count in its `Last-Event-ID` when this server gave that id, else 0 (a
 * page that saw another run, served before on the same port, must not be sent this one from that run's count on).
 */
function seenBefore(lastEventId: string | string[] | undefined, instance: string): number {
  const [from, count] = String(lastEventId ?? '').split('.');
  const seen = Number(count);
  return from === instance && Number.isSafeInteger(seen) && seen > 0 ? seen : 0;
}

function send(response: ServerResponse, type: string, body: string): void {
  response.writeHead(200, { 'content-type': `${type}; charset=utf-8`, 'cache-control': 'no-store' }).end(body);
}

/**
 * One page's stream of events: it sends what the page has not seen, in batches at most every {@link BATCH_MS}, and
 * waits for the socket to drain before the next, so a slow page slows only itself.
 */
class EventStream {
  #sent: number;
  #timer: NodeJS.Timeout | undefined;
  #draining = false;
  #closed = false;
  #endSent = false;
  readonly #stopListening: () => void;
  readonly #keepAlive: NodeJS.Timeout;

  constructor(
    private readonly response: ServerResponse,
    private readonly options: WebServerOptions,
    private readonly instance: string,
    from: number,
    private readonly onClose: () => void,
  ) {
    this.#sent = Math.min(from, options.feed.length);
    response.writeHead(200, { 'content-type': 'text/event-stream; charset=utf-8', 'cache-control': 'no-store', connection: 'keep-alive' });
    response.write(`retry: 1000\nevent: hello\ndata: ${JSON.stringify({ title: options.title, mode: options.mode, instance })}\n\n`);
    this.#stopListening = options.feed.listen(() => this.#schedule());
    this.#keepAlive = setInterval(() => response.write(': keep-alive\n\n'), KEEP_ALIVE_MS).unref();
    response.on('close', () => this.close());
    response.on('drain', () => {
      this.#draining = false;
      this.#flush();
    });
    this.#flush();
  }

  #finished: Promise<void> | undefined;

  /**
   * Stops the stream (the page went away, or the server closes): what the page has not seen is written, then the
   * stream ends. Resolves once the page has taken all of it (or went away, or took none of it for {@link STALL_MS}).
   */
  close(): Promise<void> {
    if (this.#closed) return this.#finished ?? Promise.resolve();
    this.#flush(true); // the socket's buffer takes the rest, past its limit; \`end\` sends it
    this.#closed = true;
    clearTimeout(this.#timer);
    clearInterval(this.#keepAlive);
    this.#stopListening();
    this.response.end();
    this.onClose();
    this.#finished = this.#taken();
    return this.#finished;
  }

  /** Resolves when the response's last byte went to the system, or its socket closed; cuts off a page that stalls. */
  #taken(): Promise<void> {
    const { response } = this;
    const socket = response.socket;
    if (response.writableFinished || !socket || socket.destroyed) return Promise.resolve();
    return new Promise((resolve) => {
      let left = socket.writableLength;
      let since = Date.now();
      const watch = setInterval(() => {
        if (socket.writableLength < left) [left, since] = [socket.writableLength, Date.now()];
        else if (Date.now() - since >= STALL_MS) socket.destroy();
      }, 500).unref();
      const done = () => {
        clearInterval(watch);
        resolve();
      };
      response.once('finish', done);
      response.once('close', done);
    });
  }

  #schedule(): void {
    if (this.#timer === undefined && !this.#closed) this.#timer = setTimeout(() => this.#flush(), BATCH_MS);
  }

  /** Writes what the page has not seen; `all` writes past a full socket buffer (when closing). */
  #flush(all = false): void {
    this.#timer = undefined;
    const { feed } = this.options;
    while (!this.#closed && (all || !this.#draining) && this.#sent < feed.length) {
      const to = Math.min(feed.length, this.#sent + BATCH_EVENTS);
      const written = this.response.write(`id: ${this.instance}.${to}\ndata: ${feed.slice(this.#sent, to)}\n\n`);
      this.#sent = to;
      if (!written) this.#draining = true;
    }
    if (!this.#closed && (all || !this.#draining) && feed.ended && this.#sent === feed.length && !this.#endSent) {
      this.#endSent = true;
      this.response.write('event: end\ndata: {}\n\n');
    }
  }
}

/** The page: a root for the app, its style and script (served beside it). */
function page(title: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} · troupe</title>
<link rel="stylesheet" href="/assets/app.css">
</head>
<body>
<div id="app"></div>
<script type="module" src="/assets/app.js"></script>
</body>
</html>
`;
}
