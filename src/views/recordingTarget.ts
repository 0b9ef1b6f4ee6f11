import { closeSync, openSync, readSync, statSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { ConfigurationError, errorMessage } from '../errors.js';

/** Bytes read from the start of an existing file to tell a recording from anything else: a header line is far shorter, an event of an old recording shorter too. */
const FIRST_BYTES = 65_536;

/**
 * Refuses a file a recording or trace would be written over when it holds something else: a trace is made anew each
 * run, so a slip of the path (`--trace store.json`, `record: 'package.json'`) would destroy the file. A missing or
 * empty file, or an earlier recording (its first line a recording header, or an event of a recording written before
 * headers existed), may be written over. `option` names the option in the error (`trace`, `record`).
 */
export function checkRecordingTarget(path: string, option: string): void {
  // Its folder first: a file that cannot be made is refused before anything runs, not when the first event is written.
  if (!isFolder(dirname(resolve(path)))) {
    throw new ConfigurationError(`The ${option} file ${path} cannot be written: its folder ${dirname(path)} does not exist or is not a folder.`);
  }
  let stats;
  try {
    stats = statSync(path);
  } catch {
    return; // no file there: opening it for writing says what is wrong, if anything
  }
  if (stats.isDirectory()) throw new ConfigurationError(`The ${option} file ${path} cannot be written: it is a folder.`);
  // A device or a pipe is not written over either: opening it for writing says so.
  if (!stats.isFile() || stats.size === 0 || startsLikeRecording(path)) return;
  throw new ConfigurationError(
    `The ${option} file ${path} holds something else than a troupe recording; it was left as it is. Give another file, or remove this one first.`,
  );
}

/** True when `path` is a folder. */
function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

/** True when the file's first line is a recording header, or an event as recordings wrote them before headers. */
function startsLikeRecording(path: string): boolean {
  let text: string;
  try {
    const fd = openSync(path, 'r');
    try {
      const buffer = Buffer.alloc(FIRST_BYTES);
      text = buffer.subarray(0, readSync(fd, buffer, 0, FIRST_BYTES, 0)).toString('utf8');
    } finally {
      closeSync(fd);
    }
  } catch (error) {
    throw new ConfigurationError(`The file ${path} cannot be read to check what it holds: ${errorMessage(error)}.`);
  }
  const newline = text.indexOf('\n');
  if (newline === -1) return false; // a first line longer than any header, or a file of one line without its end
  let first: unknown;
  try {
    first = JSON.parse(text.slice(0, newline));
  } catch {
    return false;
  }
  if (first === null || typeof first !== 'object' || Array.isArray(first)) return false;
  const { type, runId } = first as { type?: unknown; runId?: unknown };
  return type === 'recording' || (typeof type === 'string' && typeof runId === 'string');
}
