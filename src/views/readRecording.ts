import { createReadStream } from 'node:fs';
import { open } from 'node:fs/promises';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { CorruptRecordingError, errorMessage, UnsupportedSchemaError } from '../errors.js';
import { TroupeEvent } from '../events/events.js';
import { errorFromText } from '../failure.js';
import { checkSchemaVersion, RECORDING_SCHEMA_VERSION } from '../schemaVersion.js';

/** The type of every event. */
const EVENT_TYPES: ReadonlySet<string> = new Set(TroupeEvent.options.map((option) => option.shape.type.value));

/** A recording read back: its format's version, its run and its events in order. */
export interface Recording {
  /** The version of the file's format; 1 for a file written before recordings had a header. */
  schemaVersion: number;
  /** The run it recorded: from its header, or from its first event when it has none; null when neither says. */
  runId: string | null;
  /** Every event, in the order it happened. */
  events: TroupeEvent[];
  /** The number of the last line, left out because a crash cut it short (`dropTornLine`); absent when none was. */
  tornLine?: number;
}

/** Options of {@link readRecording}. */
export interface ReadRecordingOptions {
  /**
   * Read a file whose last line a crash cut short (it is not JSON and no newline follows it) without that line,
   * instead of refusing the file. A torn line anywhere else is still refused, and so is a file left with neither a
   * header nor an event (empty, or one line of something else): a trace's header is on disk before anything else.
   * `troupe trace summary` reads so.
   */
  dropTornLine?: boolean;
}

/**
 * Reads a recording that `createRuntime({ record })`, `createRuntime({ trace })`, `recordEvents` or `traceEvents`
 * wrote: the header line, then one event a line (a file without the header, written before it existed, is events
 * only, version 1). Refuses, and never touches, a recording of a newer `schemaVersion` ({@link UnsupportedSchemaError})
 * and one with a line that is not JSON or not an event ({@link CorruptRecordingError}), such as a last line cut short
 * by a crash unless `dropTornLine` is set.
 */
export async function readRecording(path: string, options: ReadRecordingOptions = {}): Promise<Recording> {
  const file = resolve(path);
  const recording: Recording = { schemaVersion: 1, runId: null, events: [] };
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  // Each line is read once the next one has come, so the last one is known as last.
  let previous: string | undefined;
  let number = 0;
  for await (const line of lines) {
    if (previous !== undefined) readLine(file, recording, number, previous);
    previous = line;
    number += 1;
  }
  if (previous !== undefined) {
    if (options.dropTornLine && (await torn(file, previous))) recording.tornLine = number;
    else readLine(file, recording, number, previous);
  }
  // A trace begins with its header, written before anything else: read as one, a file with neither header nor event
  // (empty, or one line of something else) is not a trace, and reading it as an empty run would say it is.
  if (options.dropTornLine && recording.events.length === 0 && !(await hasHeader(file))) {
    throw new CorruptRecordingError(file, 1, 'it holds no recording header and no event: it is not a troupe trace');
  }
  recording.runId ??= recording.events[0]?.runId ?? null;
  return recording;
}

/** Adds one line to the recording: the header (line 1, when it is one) or an event. */
function readLine(file: string, recording: Recording, number: number, line: string): void {
  const value = parseLine(file, number, line);
  if (number === 1 && isHeader(value)) Object.assign(recording, readHeader(file, value));
  else recording.events.push(parseEvent(file, number, recording.schemaVersion === 1 ? fromVersion1(value) : value));
}

/** Whether the file's first line is a recording header. */
async function hasHeader(file: string): Promise<boolean> {
  const lines = createInterface({ input: createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
  for await (const line of lines) {
    lines.close();
    try {
      return isHeader(JSON.parse(line));
    } catch {
      return false;
    }
  }
  return false;
}

/** Whether the file's last line was cut short: no newline ends the file, and the line is not JSON. */
async function torn(file: string, last: string): Promise<boolean> {
  const handle = await open(file, 'r');
  try {
    const { size } = await handle.stat();
    const { buffer } = await handle.read(Buffer.alloc(1), 0, 1, Math.max(0, size - 1));
    if (size === 0 || buffer[0] === 0x0a) return false;
  } finally {
    await handle.close();
  }
  try {
    JSON.parse(last);
    return false;
  } catch {
    return true;
  }
}

function parseLine(file: string, number: number, line: string): unknown {
  try {
    return JSON.parse(line);
  } catch (error) {
    throw new CorruptRecordingError(file, number, `it is not JSON: ${errorMessage(error)}`);
  }
}

function isHeader(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && (value as { type?: unknown }).type === 'recording';
}

/** The version and run of a header line; its version is checked first, since a newer header may look different. */
function readHeader(file: string, header: Record<string, unknown>): Pick<Recording, 'schemaVersion' | 'runId'> {
  const version = checkSchemaVersion(header.schemaVersion ?? null, RECORDING_SCHEMA_VERSION);
  if (version.status === 'invalid') {
    throw new CorruptRecordingError(file, 1, `its schemaVersion ${JSON.stringify(version.found)} is not a whole number from 1 up`);
  }
  if (version.status === 'newer') throw new UnsupportedSchemaError('recording', file, version.version, RECORDING_SCHEMA_VERSION);
  const { runId } = header;
  if (runId !== null && typeof runId !== 'string') throw new CorruptRecordingError(file, 1, 'its runId is not a string or null');
  return { schemaVersion: version.version, runId };
}

/** A version-1 event in today's shape: an `agent.failed` event's text error becomes an `ErrorInfo`. */
function fromVersion1(value: unknown): unknown {
  const event = value as { type?: unknown; reason?: unknown; error?: unknown } | null;
  if (event?.type !== 'agent.failed' || typeof event.error !== 'string') return value;
  return { ...event, error: errorFromText(event.error, typeof event.reason === 'string' ? event.reason : undefined) };
}

function parseEvent(file: string, number: number, value: unknown): TroupeEvent {
  const parsed = TroupeEvent.safeParse(value);
  if (parsed.success) return parsed.data;
  const type = (value as { type?: unknown } | null)?.type;
  // What `troupe run --json` prints last: its output is every event, but it is not a recording.
  if (type === 'result') {
    throw new CorruptRecordingError(file, number, 'it is the result line that `troupe run --json` ends with, not an event: save a run with --trace FILE (or createRuntime({ record })) to read it back');
  }
  if (typeof type === 'string' && !EVENT_TYPES.has(type)) throw new CorruptRecordingError(file, number, `it is not an event (no event has the type ${JSON.stringify(type)})`);
  // A first line without a type is another file's JSON (a session store, a package.json), not a trace.
  if (number === 1 && type === undefined) {
    throw new CorruptRecordingError(file, number, 'it is neither a recording header nor an event (it has no type): it is not a troupe trace');
  }
  const issue = parsed.error.issues[0];
  throw new CorruptRecordingError(file, number, `it is not an event (${issue?.path.join('.') || 'type'}: ${issue?.message ?? 'invalid'})`);
}
