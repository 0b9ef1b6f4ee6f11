import { createWriteStream } from 'node:fs';
import type { Observable } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';

/** A JSONL recording in progress. */
export interface EventRecording {
  /** Stops recording and resolves once every line is on disk. */
  close(): Promise<void>;
}

/**
 * Writes every event of a stream to a file, one JSON object a line, in the order they happen (the file is made anew).
 * Events carry clock time and ids from the runtime's random source, so a seeded run in simulated time writes the
 * same bytes every time.
 */
export function recordEvents(events$: Observable<TroupeEvent>, path: string): EventRecording {
  const out = createWriteStream(path, { flags: 'w', encoding: 'utf8' });
  let failure: Error | undefined;
  out.on('error', (error) => (failure ??= error));
  const subscription = events$.subscribe({ next: (event) => out.write(`${JSON.stringify(event)}\n`) });
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        subscription.unsubscribe();
        if (failure) return reject(failure);
        out.end(() => (failure ? reject(failure) : resolve()));
      });
      return closing;
    },
  };
}
