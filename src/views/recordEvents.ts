import { createWriteStream, openSync } from 'node:fs';
import type { Observable } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';
import { ConfigurationError, errorMessage } from '../errors.js';
import { RECORDING_SCHEMA_VERSION } from '../schemaVersion.js';
import { checkRecordingTarget } from './recordingTarget.js';

/**
 * The first line of a recording: what it is, its format's version ({@link RECORDING_SCHEMA_VERSION}) and the run it
 * records. Plain JSON, like the events after it.
 */
export interface RecordingHeader {
  /** Marks the header line; no event has this type. */
  type: 'recording';
  /** The version of the file's format. */
  schemaVersion: number;
  /** The run's id (the `runId` of its events), or null when the recorder was not told it. */
  runId: string | null;
}

/** The header line's value for a recording of this run (today's format). */
export function recordingHeader(runId: string | undefined): RecordingHeader {
  return { type: 'recording', schemaVersion: RECORDING_SCHEMA_VERSION, runId: runId ?? null };
}

/** About how many characters of lines a recording gathers before it hands them to its file's stream (64 K). */
const CHUNK_CHARS = 64 * 1024;

/** A JSONL recording in progress. */
export interface EventRecording {
  /** Stops recording and resolves once every line is on disk. */
  close(): Promise<void>;
}

/**
 * Writes every event of a stream to a file, one JSON object a line, in the order they happen (the file is made anew),
 * after a {@link RecordingHeader} line. A file there that holds something else than a recording is refused with a
 * `ConfigurationError` and left as it is, and so is a file that cannot be opened (its folder missing, a folder in
 * its place): at once, not when the run ends and its events are written. Events carry clock time and ids from the
 * runtime's random source, so a seeded run in simulated time writes the same bytes every time. `readRecording` reads
 * the file back.
 *
 * The lines are buffered: gathered into chunks of about 64 K characters (or what came before the event loop turns),
 * written by the file's stream in the background, and all handed to the operating system once `close` resolves (no
 * fsync). A process that crashes may lose what was not yet written; `traceEvents` (the `trace` option) writes each
 * line before the next event instead.
 */
export function recordEvents(events$: Observable<TroupeEvent>, path: string, options: { runId?: string } = {}): EventRecording {
  checkRecordingTarget(path, 'record');
  let fd: number;
  try {
    fd = openSync(path, 'w');
  } catch (error) {
    throw new ConfigurationError(`The record file ${path} cannot be written: ${errorMessage(error)}.`);
  }
  const out = createWriteStream(path, { fd, encoding: 'utf8' });
  let failure: Error | undefined;
  out.on('error', (error) => (failure ??= error));
  out.write(`${JSON.stringify(recordingHeader(options.runId))}\n`);
  // Lines are gathered into chunks, handed to the stream when one is full or once the event loop turns, whichever
  // comes first: a stream write per event cost 80 simulated minutes of a thousand-trader market 3–7 % more time. The
  // chunk's size bounds what waits here; `runUntilIdle` turns the loop at every simulated instant, so a simulation's
  // lines go out as it runs (a run that never lets the loop turn writes them a chunk at a time).
  let pending = '';
  let scheduled = false;
  let closed = false;
  const flush = () => {
    if (closed || pending === '') return;
    out.write(pending);
    pending = '';
  };
  // One turn's flush waits at a time: a chunk written when full leaves it in place.
  const onTurn = () => {
    scheduled = false;
    flush();
  };
  const subscription = events$.subscribe({
    next: (event) => {
      pending += `${JSON.stringify(event)}\n`;
      if (pending.length >= CHUNK_CHARS) flush();
      else if (!scheduled) {
        scheduled = true;
        setImmediate(onTurn);
      }
    },
  });
  let closing: Promise<void> | undefined;
  return {
    close() {
      closing ??= new Promise<void>((resolve, reject) => {
        subscription.unsubscribe();
        flush();
        closed = true;
        if (failure) return reject(failure);
        // A file that fails to open after the last event (a quick run) fails here: the callback gets its error.
        out.end((error?: Error | null) => {
          const problem = failure ?? error;
          if (problem) reject(problem);
          else resolve();
        });
      });
      return closing;
    },
  };
}
