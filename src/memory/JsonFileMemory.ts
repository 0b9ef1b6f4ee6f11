import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { access, open, readFile, readdir, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { ConfigurationError, CorruptStoreError, errorMessage, UnsupportedSchemaError } from '../errors.js';
import { checkSchemaVersion, STORE_SCHEMA_VERSION } from '../schemaVersion.js';
import { isRunning, withFileLock, type FileLockOptions } from './fileLock.js';
import type { MemoryPort } from './MemoryPort.js';

/** Options of {@link JsonFileMemory}. */
export interface JsonFileMemoryOptions extends FileLockOptions {
  /**
   * Fault injection, for tests of crash safety: called after the new content is written and synced to the
   * temporary file, before it is renamed over the store.
   */
  faults?: { afterTempWrite?: () => void | Promise<void> };
}

type Data = Record<string, unknown>;

/** The top-level field of the file that holds its format's version; not a key of the store. */
const VERSION_FIELD = 'schemaVersion';

interface Op {
  apply(data: Data): unknown;
  resolve(value: unknown): void;
  reject(error: unknown): void;
}

/**
 * A {@link MemoryPort} kept in one JSON file (say `history.json`) holding every key.
 *
 * - Writes are atomic: the new content goes to a temporary file, which is synced, renamed over the store, and the
 *   folder synced; a crash at any point leaves either the old file or the new one, whole. The new file keeps the
 *   old one's permissions.
 * - Writes from one store object are queued and applied together; writers take turns through a lock (`<file>.lock`,
 *   a folder made by proper-lockfile: see {@link FileLockOptions}), store objects of one process on one file first
 *   in that process's queue for it, and each applies its changes to the file as it is on disk at that moment, so no
 *   writer loses another's writes. A writer killed while holding the lock leaves it, taken over after `staleMs`.
 * - The file carries its format's version, `schemaVersion` ({@link STORE_SCHEMA_VERSION}), at its top level beside the
 *   keys; `schemaVersion` is therefore not a key a caller may use. A file without it (written before it existed) is
 *   read as version 1 and gets the field at its next write.
 * - A file that does not parse (or is not a JSON object, or has a `schemaVersion` that is not a whole number from 1
 *   up) is refused with {@link CorruptStoreError}; one with a newer `schemaVersion` than this code knows is refused
 *   with {@link UnsupportedSchemaError}. Either is left as it is: it is never overwritten.
 * - A file without write permission (`chmod a-w`) is read, never written: a write fails with
 *   {@link ConfigurationError} and leaves it as it is.
 * - A write to a file whose folder does not exist fails with {@link ConfigurationError} naming the folder; no folder
 *   is made (a read gives an empty store). A path that is a folder is refused with {@link CorruptStoreError}, one
 *   under a file with {@link ConfigurationError}, by reads and writes alike.
 */
export class JsonFileMemory<T = unknown> implements MemoryPort<T> {
  /** The store file (absolute). */
  readonly file: string;
  private readonly lockFile: string;
  private readonly options: JsonFileMemoryOptions;
  private queue: Op[] = [];
  private flushing: Promise<void> | null = null;
  private cached: { stamp: string; data: Data } | null = null;

  constructor(file: string, options: JsonFileMemoryOptions = {}) {
    if (typeof file !== 'string' || file.trim() === '') throw new ConfigurationError('JsonFileMemory needs a file path.');
    this.file = resolve(file);
    this.lockFile = `${this.file}.lock`;
    checkWaits(options);
    this.options = options;
  }

  async get(key: string): Promise<T | undefined> {
    const data = await this.read();
    return structuredClone(own(data, key)) as T | undefined;
  }

  async keys(prefix = ''): Promise<string[]> {
    return Object.keys(await this.read()).filter((key) => key.startsWith(prefix));
  }

  async set(key: string, value: T): Promise<void> {
    const json = toJson(value, usable(key));
    await this.write((data) => {
      put(data, key, json);
    });
  }

  async append(key: string, item: unknown): Promise<number> {
    const json = toJson(item, usable(key));
    return (await this.write((data) => {
      const list = own(data, key) ?? [];
      if (!Array.isArray(list)) throw new ConfigurationError(`The value at "${key}" is not a list; append needs one.`);
      list.push(json);
      put(data, key, list);
      return list.length;
    })) as number;
  }

  async update(key: string, change: (current: T | undefined) => T): Promise<T> {
    usable(key);
    return this.write((data) => {
      const next = toJson(change(structuredClone(own(data, key)) as T | undefined), key);
      put(data, key, next);
      return structuredClone(next);
    }) as Promise<T>;
  }

  async delete(key: string): Promise<boolean> {
    usable(key);
    return this.write((data) => {
      const had = Object.hasOwn(data, key);
      delete data[key];
      return had;
    }) as Promise<boolean>;
  }

  clear(): Promise<void> {
    return this.write((data) => {
      for (const key of Object.keys(data)) delete data[key];
    }) as Promise<void>;
  }

  /** Queues a change; changes queued together are written in one locked read-change-write of the file. */
  private write(apply: (data: Data) => unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      this.queue.push({ apply, resolve, reject });
      // Started after this tick's other changes are queued: they go to the file in one rewrite, not the first alone.
      this.flushing ??= Promise.resolve().then(() => this.flush());
    });
  }

  private async flush(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const ops = this.queue;
        this.queue = [];
        try {
          const results = await withFileLock(this.lockFile, (lost) => this.commit(ops, lost), this.options).catch((error: unknown) => {
            throw this.pathProblem(error) ?? error;
          });
          ops.forEach((op, index) => {
            const result = results[index]!;
            if (result.ok) op.resolve(result.value);
            else op.reject(result.error);
          });
        } catch (error) {
          for (const op of ops) op.reject(error);
        }
      }
    } finally {
      this.flushing = null;
    }
  }

  /**
   * A clear error for a store path that cannot hold a file: the path is a folder (`CorruptStoreError`, as
   * {@link readStoreFile} says it), or its folder does not exist or is a file (`ConfigurationError`, for a write; a read
   * of a missing folder is an empty store). Node's own errors name a syscall and, for a write, the lock folder, which
   * the caller never asked for. Undefined for any other error.
   */
  private pathProblem(error: unknown): CorruptStoreError | ConfigurationError | undefined {
    const code = (error as NodeJS.ErrnoException | null)?.code;
    let problem: CorruptStoreError | ConfigurationError;
    if (code === 'EISDIR') problem = new CorruptStoreError(this.file, 'it is a folder, not a file');
    else if (code === 'ENOENT' || code === 'ENOTDIR') {
      const folder = dirname(this.file);
      let kind: 'folder' | 'other' | 'none';
      try {
        kind = statSync(folder).isDirectory() ? 'folder' : 'other';
      } catch {
        kind = 'none';
      }
      if (kind === 'folder') return undefined;
      const why = kind === 'other' ? `its folder ${folder} is not a folder` : `its folder ${folder} does not exist; make it first`;
      problem = new ConfigurationError(`The store ${this.file} cannot be used: ${why}.`);
    } else return undefined;
    problem.cause = error;
    return problem;
  }

  /** Under the lock: reads the file as it is now, applies the changes, writes it back atomically. */
  private async commit(ops: Op[], lost: AbortSignal): Promise<({ ok: true; value: unknown } | { ok: false; error: unknown })[]> {
    await this.removeLeftovers();
    const data = await this.read(true);
    const results = ops.map((op) => {
      try {
        return { ok: true as const, value: op.apply(data) };
      } catch (error) {
        return { ok: false as const, error };
      }
    });
    if (results.some((result) => result.ok)) await this.replace(data, lost);
    return results;
  }

  /** Removes the temporary files of writes whose process died before renaming them (under the lock). */
  private async removeLeftovers(): Promise<void> {
    const prefix = `${basename(this.file)}.`;
    const names = await readdir(dirname(this.file)).catch(() => [] as string[]);
    for (const name of names) {
      if (!name.startsWith(prefix) || !name.endsWith('.tmp')) continue;
      const pid = Number(/^(\d+)-/.exec(name.slice(prefix.length))?.[1]);
      if (Number.isInteger(pid) && pid !== process.pid && !isRunning(pid)) await unlink(join(dirname(this.file), name)).catch(() => {});
    }
  }

  /**
   * Writes `data` to a temporary file, syncs it, renames it over the store and syncs the folder; not the rename if
   * the lock was lost meanwhile (another writer may hold it now).
   */
  private async replace(data: Data, lost: AbortSignal): Promise<void> {
    const temp = `${this.file}.${process.pid}-${Math.random().toString(36).slice(2)}.tmp`;
    // The new file takes the old one's permissions: a store its owner made private stays private.
    const mode = await stat(this.file).then((stats) => stats.mode & 0o7777, () => undefined);
    // A store made read-only is not replaced (the rename would replace it, whatever its permissions).
    if (mode !== undefined && ((mode & 0o222) === 0 || !(await access(this.file, constants.W_OK).then(() => true, () => false)))) {
      throw new ConfigurationError(`The store ${this.file} is read-only; it was left as it is. Make it writable, or give the runtime another store.`);
    }
    const handle = await open(temp, 'w');
    try {
      if (mode !== undefined) await handle.chmod(mode); // before anything is written to it
      await handle.writeFile(`${JSON.stringify({ [VERSION_FIELD]: STORE_SCHEMA_VERSION, ...data })}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    try {
      await this.options.faults?.afterTempWrite?.();
      lost.throwIfAborted();
      await rename(temp, this.file);
    } catch (error) {
      await unlink(temp).catch(() => {});
      throw error;
    }
    this.cached = null;
    const folder = await open(dirname(this.file), 'r');
    try {
      await folder.sync();
    } finally {
      await folder.close();
    }
  }

  /** The file's keys; a missing file is an empty store, one that does not parse or is newer is refused. */
  private async read(fresh = false): Promise<Data> {
    let stamp: string;
    try {
      const stats = await stat(this.file);
      stamp = `${stats.ino}:${stats.size}:${stats.mtimeMs}`;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw this.pathProblem(error) ?? error;
    }
    if (!fresh && this.cached?.stamp === stamp) return this.cached.data;
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return {};
      throw this.pathProblem(error) ?? error;
    }
    const data = parseStore(this.file, text);
    if (!fresh) this.cached = { stamp, data };
    return data;
  }
}

/**
 * What a store file holds, read now: undefined when there is no file; its keys (without the version field), their
 * values, and whether it carries a `schemaVersion`. Refuses, as a store would, a file that is corrupt
 * (`CorruptStoreError`) or newer (`UnsupportedSchemaError`), and a path that is not a file. For a command that should
 * refuse a bad store before it runs anything, rather than at its first write.
 */
export function readStoreFile(file: string): { keys: string[]; versioned: boolean; data: Record<string, unknown> } | undefined {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return undefined;
    throw new CorruptStoreError(file, code === 'EISDIR' ? 'it is a folder, not a file' : errorMessage(error));
  }
  const { data, versioned } = parseStoreText(file, text);
  return { keys: Object.keys(data), versioned, data };
}

/**
 * Refuses lock waits that are not numbers of ms: a `timeoutMs` of NaN or a text (`'500'`) never ran out, so a writer
 * waited for ever on a lock a live process kept; a negative one gave up at once, saying it had waited "-5 ms".
 */
function checkWaits(options: FileLockOptions): void {
  for (const name of ['timeoutMs', 'staleMs'] as const) {
    const value: unknown = options[name];
    if (value === undefined) continue;
    if (typeof value !== 'number' || Number.isNaN(value) || value < 0 || (name === 'staleMs' && !Number.isFinite(value))) {
      throw new ConfigurationError(`JsonFileMemory's ${name} must be a number of ms from 0 up${name === 'staleMs' ? ' (not Infinity)' : ''}; it was given ${String(value)}.`);
    }
  }
}

/**
 * True when a store file is there and read-only (no write bit, or not writable by this process): a store refuses to
 * write it. For a command that should refuse such a store before it runs anything, rather than at its first write.
 */
export function isReadOnlyStoreFile(file: string): boolean {
  let mode: number;
  try {
    mode = statSync(file).mode;
  } catch {
    return false;
  }
  if ((mode & 0o222) === 0) return true;
  try {
    accessSync(file, constants.W_OK);
    return false;
  } catch {
    return true;
  }
}

/** The keys of a store file's text, without its version field; refuses a file that is corrupt or newer. */
function parseStore(file: string, text: string): Data {
  return parseStoreText(file, text).data;
}

/** {@link parseStore}, and whether the file carries its version field. */
function parseStoreText(file: string, text: string): { data: Data; versioned: boolean } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new CorruptStoreError(file, `it is not JSON: ${errorMessage(error)}`);
  }
  if (data === null || typeof data !== 'object' || Array.isArray(data)) {
    throw new CorruptStoreError(file, 'it is not a JSON object of keys');
  }
  const { [VERSION_FIELD]: found, ...keys } = data as Data;
  const version = checkSchemaVersion(found, STORE_SCHEMA_VERSION);
  if (version.status === 'invalid') throw new CorruptStoreError(file, `its ${VERSION_FIELD} ${JSON.stringify(found)} is not a whole number from 1 up`);
  if (version.status === 'newer') throw new UnsupportedSchemaError('store', file, version.version, STORE_SCHEMA_VERSION);
  return { data: keys, versioned: found !== undefined };
}

// A key is the data's own property, whatever its name: `__proto__` too (an assignment would set the prototype instead
// and the value would be lost; JSON.parse and the spread that writes the file treat it as an own property already).

/** The value of a key of the file, never one an object inherits. */
function own(data: Data, key: string): unknown {
  return Object.hasOwn(data, key) ? data[key] : undefined;
}

/** Sets a key of the file as an own property. */
function put(data: Data, key: string, value: unknown): void {
  Object.defineProperty(data, key, { value, writable: true, enumerable: true, configurable: true });
}

/** The key, when a caller may use it: the file's version field is not a key. */
function usable(key: string): string {
  if (key === VERSION_FIELD) throw new ConfigurationError(`"${VERSION_FIELD}" is reserved in a JsonFileMemory file for its format's version; use another key.`);
  return key;
}

/** A value as the file will hold it; refuses what JSON cannot hold (functions, cycles, big integers). */
function toJson(value: unknown, key: string): unknown {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? null : JSON.parse(text);
  } catch (error) {
    throw new ConfigurationError(`The value for "${key}" cannot be stored as JSON: ${errorMessage(error)}`);
  }
}
