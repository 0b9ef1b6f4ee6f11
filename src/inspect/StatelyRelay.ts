import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import { escapeHtml, listen, urlHost } from './http.js';
import type { WebSocket } from 'ws';
import type { StatelyBridge } from './StatelyBridge.js';

/** Where the relay listens, and the inspector its page shows. */
export interface RelayOptions {
  /** The interface to listen on (default `127.0.0.1`: this machine only). */
  host: string;
  /** The port (0: any free port). */
  port: number;
  /** The Stately inspector's page, shown in a frame of the relay's page. */
  inspectorUrl: string;
}

/** A listening relay. */
export interface Relay {
  /** The page to open: the inspector in a frame, fed by the relay. */
  readonly url: string;
  /** Where the page (or any client) connects its WebSocket. */
  readonly socketUrl: string;
  /** Clients connected now. */
  readonly clients: number;
  /** Ends every connection (after what was queued for it, while its client takes it) and stops listening. */
  close(): Promise<void>;
}

/**
 * How long `close` waits for a client that takes none of its last messages before it cuts it off. A client that is
 * still taking them (a page behind a slow link, or busy drawing a large run) is waited for as long as it does.
 */
const CLOSE_STALL_MS = 5_000;

/**
 * Starts the relay between a run and the Stately inspector: an HTTP server on `host:port` whose page holds the
 * inspector in a frame, and a WebSocket server on the same port. Each client that connects gets the bridge's actors
 * first, then every message as it happens; what clients send is ignored. A browser page of another origin may not
 * connect (a client that is not a page sends no origin, and may). (The relay of `@statelyai/inspect/server`
 * listens on every interface, does not say which port it got, and replays only its last 200 messages to a client that
 * connects late, so such a client sees events of actors it was never told of.)
 */
export async function startRelay(bridge: StatelyBridge, options: RelayOptions): Promise<Relay> {
  const { WebSocketServer } = await import('ws');
  let socketUrl = '';
  const origins = new Set<string>();
  const server = createServer((request, response) => answer(request, response, socketUrl, options.inspectorUrl));
  // A page of another site in the same browser could open a socket to 127.0.0.1 too: only the relay's own page (and
  // clients that are not pages, which send no origin) may connect.
  const sockets = new WebSocketServer({ server, verifyClient: ({ origin }) => origin === undefined || origins.has(origin) });
  sockets.on('connection', (socket) => {
    const unsubscribe = bridge.subscribe((message) => socket.send(message));
    socket.on('close', unsubscribe);
    socket.on('error', unsubscribe);
  });
  sockets.on('error', () => {}); // the server's errors are the HTTP server's: listen reports them
  const { port } = await listen(server, options.port, options.host);
  const host = urlHost(options.host);
  socketUrl = `ws://${host}:${port}`;
  for (const name of [host, 'localhost']) origins.add(`http://${name}:${port}`);
  return {
    url: `http://${host}:${port}/`,
    socketUrl,
    get clients() {
      return sockets.clients.size;
    },
    close: async () => {
      const clients = [...sockets.clients];
      const closed = Promise.all(clients.map((client) => new Promise((resolve) => client.once('close', resolve))));
      for (const client of clients) client.close(1001, 'The run is over.');
      await whileTaking(clients, closed);
      for (const client of sockets.clients) client.terminate();
      await new Promise((resolve) => sockets.close(resolve));
      server.closeAllConnections();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

/**
 * Waits until `closed` settles while the clients still take what was queued for them: it gives up once
 * {@link CLOSE_STALL_MS} pass without the bytes left to send going down. (Cutting them off after a fixed grace lost the
 * tail of a large run: a page connected in the same process took 23,005 messages in 1.6 s, and got 8,000 to 20,000 of
 * them in a second.)
 */
async function whileTaking(clients: readonly WebSocket[], closed: Promise<unknown>): Promise<void> {
  const left = () => clients.reduce((sum, client) => sum + client.bufferedAmount, 0);
  let before = left();
  for (;;) {
    let timer: NodeJS.Timeout | undefined;
    const stalled = new Promise<false>((resolve) => {
      timer = setTimeout(() => resolve(false), CLOSE_STALL_MS);
    });
    const done = await Promise.race([closed.then(() => true), stalled]);
    clearTimeout(timer);
    const now = left();
    if (done || now >= before) return;
    before = now;
  }
}

/** The relay's one page at `/`; anything else is not found. */
function answer(request: IncomingMessage, response: ServerResponse, socketUrl: string, inspectorUrl: string): void {
  if (request.method !== 'GET' || (request.url ?? '/').split('?')[0] !== '/') {
    response.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' }).end('Not found: open / for the inspector.\n');
    return;
  }
  response.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'cache-control': 'no-store' }).end(page(socketUrl, inspectorUrl));
}

/**
 * The page: the inspector in a frame, and a script that hands it each message from the relay's socket. The inspector
 * says `@statelyai.connected` when it can take messages; until then they wait in a list.
 */
function page(socketUrl: string, inspectorUrl: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>troupe: Stately inspector</title>
<style>html, body, iframe { margin: 0; width: 100%; height: 100%; border: 0; display: block; }</style>
</head>
<body>
<iframe id="inspector" src="${escapeHtml(inspectorUrl)}" title="Stately inspector"></iframe>
<script>
const frame = document.getElementById('inspector');
const waiting = [];
let ready = false;
window.addEventListener('message', (event) => {
  if (event.source !== frame.contentWindow || !event.data || event.data.type !== '@statelyai.connected') return;
  ready = true;
  for (const message of waiting.splice(0)) frame.contentWindow.postMessage(message, '*');
});
const socket = new WebSocket(${JSON.stringify(socketUrl)});
socket.addEventListener('message', (event) => {
  const message = JSON.parse(event.data);
  if (ready) frame.contentWindow.postMessage(message, '*');
  else waiting.push(message);
});
</script>
</body>
</html>
`;
}
