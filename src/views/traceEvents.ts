import { closeSync, fsyncSync, openSync, writeSync } from 'node:fs';
import type { Observable } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';
import { ConfigurationError, errorMessage } from '../errors.js';
import { recordingHeader, type EventRecording } from './recordEvents.js';
import { checkRecordingTarget } from './recordingTarget.js';

/**
 * Writes every event of a stream to a file as it happens: a trace. The format is a recording's (a
 * {@link RecordingHeader} line, then one event a line; `readRecording` reads it), but where `recordEvents` buffers,
 * this hands each line to the operating system with a synchronous write before the next event is handled. A crash of
 * the process (an uncaught error, `kill -9`) therefore loses at most the event being written; the file is fsync'd
 * once, on `close` (an fsync per event would guard against a crash of the machine too, at a disk's latency per event).
 *
 * Each line goes out in one `write` call. A process killed in the middle of one (possible for a line of several pages)
 * may leave the last line cut short: `readRecording(path, { dropTornLine: true })` reads such a file, without its
 * last line. A write that fails (a full disk) stops the trace; `close` rejects with that error. A file that cannot be
 * opened (its folder missing, a folder in its place), or that holds something else than a recording, is a
 * `ConfigurationError` at once, and is left as it is.
 */
export function traceEvents(events$: Observable<TroupeEvent>, path: string, options: { runId?: string } = {}): EventRecording {
  checkRecordingTarget(path, 'trace');
  let fd: number;
  try {
    fd = openSync(path, 'w');
  } catch (error) {
    throw new ConfigurationError(`The trace file ${path} cannot be written: ${errorMessage(error)}.`);
  }
  let failure: Error | undefined;
  const write = (value: unknown) => {
    if (failure) return;
    try {
      writeLine(fd, `${JSON.stringify(value)}\n`);
    } catch (error) {
      failure = error instanceof Error ? error : new Error(errorMessage(error));
    }
  };
  write(recordingHeader(options.runId));
  const subscription = events$.subscribe({ next: write });
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        subscription.unsubscribe();
        try {
          if (!failure) fsyncSync(fd);
        } catch (error) {
          failure = error instanceof Error ? error : new Error(errorMessage(error));
        } finally {
          closeSync(fd);
        }
        if (failure) reject(failure);
        else resolve();
      });
      return closing;
    },
  };
}

/** Writes one line with one `write` call; a short write (rare, for a regular file) is finished with more. */
function writeLine(fd: number, line: string): void {
  const bytes = Buffer.from(line, 'utf8');
  let written = writeSync(fd, bytes);
  while (written < bytes.length) written += writeSync(fd, bytes, written);
}
