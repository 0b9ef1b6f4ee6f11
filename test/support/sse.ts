// A small reader of server-sent events over node:http, for the web inspector's tests (Node 20 has no EventSource).
import { get, type IncomingMessage } from 'node:http';

/** One server-sent event: its `event` name (`message` when none), its `id` if it had one, and its data. */
export interface SentEvent {
  readonly event: string;
  readonly id?: string;
  readonly data: string;
}

/** A stream of server-sent events being read: the events so far, a way to wait for one, and its end. */
export interface EventReader {
  readonly events: SentEvent[];
  /** Resolves when an event matching `test` has come (at once if one has). */
  until(test: (event: SentEvent) => boolean): Promise<SentEvent>;
  readonly response: IncomingMessage;
  close(): void;
}

/** Opens `url` as an event stream, optionally saying the last event id seen (as a reconnecting browser does). */
export function readEvents(url: string, lastEventId?: string): Promise<EventReader> {
  return new Promise((resolve, reject) => {
    const headers = lastEventId === undefined ? {} : { 'last-event-id': lastEventId };
    const request = get(url, { headers }, (response) => {
      const events: SentEvent[] = [];
      const waiters: Array<{ test: (event: SentEvent) => boolean; resolve: (event: SentEvent) => void }> = [];
      let buffer = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        buffer += chunk;
        let end: number;
        while ((end = buffer.indexOf('\n\n')) >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = parse(block);
          if (!event) continue;
          events.push(event);
          for (const waiter of [...waiters]) {
            if (!waiter.test(event)) continue;
            waiters.splice(waiters.indexOf(waiter), 1);
            waiter.resolve(event);
          }
        }
      });
      resolve({
        events,
        response,
        until: (test) => {
          const seen = events.find(test);
          return seen ? Promise.resolve(seen) : new Promise((found) => waiters.push({ test, resolve: found }));
        },
        close: () => request.destroy(),
      });
    });
    request.on('error', reject);
  });
}

function parse(block: string): SentEvent | undefined {
  let event = 'message';
  let id: string | undefined;
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':') || line === '') continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'event') event = value;
    else if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  if (data.length === 0) return undefined;
  return { event, data: data.join('\n'), ...(id === undefined ? {} : { id }) };
}
