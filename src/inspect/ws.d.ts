// The parts of the `ws` package (the WebSocket server and client the Stately relay is built on) that troupe and its
// tests use: `ws` ships no types, and @types/ws is not a dependency. Nothing in troupe's public types refers to these.
declare module 'ws' {
  import type { EventEmitter } from 'node:events';
  import type { Server } from 'node:http';

  /** One WebSocket connection (a client the server accepted, or a client of a server). */
  export class WebSocket extends EventEmitter {
    constructor(address: string, options?: { origin?: string });
    static readonly CONNECTING: 0;
    static readonly OPEN: 1;
    static readonly CLOSING: 2;
    static readonly CLOSED: 3;
    readonly readyState: 0 | 1 | 2 | 3;
    /** Bytes queued to send. */
    readonly bufferedAmount: number;
    send(data: string, callback?: (error?: Error) => void): void;
    close(code?: number, reason?: string): void;
    terminate(): void;
    /** Stops reading from the connection (what arrives waits in the network's buffers) until `resume`. */
    pause(): void;
    resume(): void;
  }

  /** A WebSocket server on an HTTP server: upgrades its requests to connections. */
  export class WebSocketServer extends EventEmitter {
    constructor(options: { server: Server; verifyClient?: (info: { origin?: string }) => boolean });
    readonly clients: Set<WebSocket>;
    close(callback?: (error?: Error) => void): void;
  }

  export default WebSocket;
}
