import { lstat, readFile, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { resolve } from 'node:path';
import { StoreLockedError, StoreLockLostError } from '../errors.js';

/** How a store's lock is waited for, and when a lock is taken as abandoned. */
export interface FileLockOptions {
  /**
   * Give up (with {@link StoreLockedError}) after waiting this long, counting the wait for other store objects of
   * this process on the same file. Default 10 seconds.
   */
  timeoutMs?: number;
  /**
   * A lock not kept fresh for this long is taken as abandoned (its holder died). A holder refreshes its lock (the
   * lock folder's modification time) every fifth of this, at least every second, so only a holder stalled for most
   * of `staleMs` loses it (and its write then fails with {@link StoreLockLostError}); a killed holder's lock blocks
   * writers for at most this long, so keep it below `timeoutMs`. Default 5 seconds; at least 2 seconds
   * (proper-lockfile's minimum), a smaller value counts as 2 seconds.
   */
  staleMs?: number;
}

const DEFAULT_TIMEOUT_MS = 10_000;
const DEFAULT_STALE_MS = 5_000;
/** proper-lockfile's floor for `stale` (and for `update`, 1 s: `update` is at most `stale / 2`). */
const MIN_STALE_MS = 2_000;
/** An older troupe's lock file that holds no readable owner this long after it was made is a killed writer's. */
const UNREADABLE_GRACE_MS = 1_000;
const HOST = hostname();
/** The longest wait a timer can be set for (about 24.8 days). */
const MAX_TIMER_MS = 2 ** 31 - 1;

type Release = () => Promise<void>;
type Lockfile = typeof import('proper-lockfile');

/**
 * proper-lockfile, loaded on the first lock rather than with troupe: loading it patches process-wide things
 * (graceful-fs wraps `fs.close`; signal-exit wraps `process.emit` to remove held locks on exit), which a program that
 * never writes a JSON store should not get.
 */
let lockfile: Promise<Lockfile> | undefined;

/**
 * Per lock path (resolved), the end of this process's queue of holders. proper-lockfile refuses (ELOCKED) a lock
 * this process already holds, and two store objects on one file must never both believe they hold it, so the
 * holders of one process take turns here before taking the lock on disk.
 */
const turns = new Map<string, Promise<void>>();

/**
 * Runs `work` while holding the lock `lockPath` (a store's `<file>.lock`), so only one writer at a time, in this
 * process or another, holds it. The lock is proper-lockfile's: a folder made with `mkdir` (atomic: there is no
 * half-made lock), kept fresh by updating its modification time while held, and taken over by a waiter once it
 * has not been refreshed for `staleMs` (its holder died). Within this process, holders of one path queue first.
 * Waits with short, growing pauses; gives up with {@link StoreLockedError} after `timeoutMs` in all.
 *
 * `work` gets a signal that aborts (with {@link StoreLockLostError}) if the lock is lost while held; it should check
 * the signal before it makes its change visible. A lost lock fails the call with that error; it never crashes the
 * process (proper-lockfile's default is to throw it from a timer).
 *
 * A known limit of proper-lockfile 4.1.2 (moxystudio/node-proper-lockfile#121, open): its takeover of a stale lock
 * is a stat, an `rmdir` and a `mkdir`, so when two processes take over the same stale lock at the same moment, the
 * later can remove the lock the earlier has just made, and both hold it. It needs a lock left stale (a killed or
 * stalled holder) and two other processes judging it within the same instant; within one process, the queue above
 * lets only one holder of a path try at a time.
 */
export async function withFileLock<T>(lockPath: string, work: (lost: AbortSignal) => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const path = resolve(lockPath);
  const timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const staleMs = Math.max(options.staleMs ?? DEFAULT_STALE_MS, MIN_STALE_MS);
  const deadline = Date.now() + timeoutMs;
  const endTurn = await takeTurn(path, deadline, timeoutMs);
  try {
    const lost = new AbortController();
    const release = await acquire(path, { staleMs, deadline, timeoutMs }, (error) => lost.abort(new StoreLockLostError(path, error)));
    try {
      const result = await work(lost.signal);
      lost.signal.throwIfAborted();
      return result;
    } finally {
      // Rejects (ERELEASED) when the lock was lost meanwhile: that is already the caller's error.
      await release().catch(() => {});
    }
  } finally {
    endTurn();
  }
}

/** Waits for this process's earlier holders of `path`; returns what ends this holder's turn. */
async function takeTurn(path: string, deadline: number, timeoutMs: number): Promise<() => void> {
  const before = turns.get(path);
  let end!: () => void;
  const ended = new Promise<void>((resolve) => {
    end = resolve;
  });
  const tail = before ? before.then(() => ended) : ended;
  turns.set(path, tail);
  void tail.then(() => {
    if (turns.get(path) === tail) turns.delete(path);
  });
  if (before && !(await settlesWithin(before, deadline - Date.now()))) {
    void before.then(end); // gave up: pass the turn on as soon as it comes
    throw new StoreLockedError(path, timeoutMs);
  }
  return end;
}

/** Takes the lock on disk, retrying until the deadline. */
async function acquire(
  path: string,
  wait: { staleMs: number; deadline: number; timeoutMs: number },
  onCompromised: (error: Error) => void,
): Promise<Release> {
  const { lock } = await (lockfile ??= import('proper-lockfile'));
  const update = Math.max(1_000, Math.floor(wait.staleMs / 5));
  for (let attempt = 0; ; attempt++) {
    try {
      return await lock(path, { lockfilePath: path, realpath: false, stale: wait.staleMs, update, retries: 0, onCompromised });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      // ELOCKED: held. ENOTDIR: proper-lockfile judged a plain file at the path stale and could not rmdir it.
      if (code !== 'ELOCKED' && code !== 'ENOTDIR') throw error;
      const leftover = await removeOldLockFile(path, wait.staleMs);
      if (leftover === 'removed') continue;
      if (leftover === 'none' && code === 'ENOTDIR') throw error;
    }
    const left = wait.deadline - Date.now();
    if (left <= 0) throw new StoreLockedError(path, wait.timeoutMs);
    await pause(Math.min(left, Math.min(100, 2 + attempt * 3) * (0.5 + Math.random())));
  }
}

/**
 * Older troupe versions locked a store with a plain file at the same path, `<store>.lock`, created exclusively and
 * then given its owner (`{ pid, host, at, token }`). The name is kept on purpose: an older and a newer troupe on one
 * store still exclude each other (an exclusive create of the file and a `mkdir` of the folder cannot both succeed).
 * Such a file that an older troupe left when it was killed is removed here, so it never blocks for long:
 * - at once when it names a process of this machine that no longer runs, or this process (which never makes one);
 * - when it holds no readable owner (the writer was killed between creating it and writing its owner) and was made
 *   more than a second ago (a live writer writes its owner right after creating it);
 * - when its `at` is more than `staleMs` ago (its holder, elsewhere or alive, kept it too long).
 * `unlink` cannot remove a folder, so this never removes a lock of this version.
 */
async function removeOldLockFile(path: string, staleMs: number): Promise<'removed' | 'held' | 'none'> {
  const stats = await lstat(path).catch(() => undefined);
  if (!stats?.isFile()) return 'none';
  const text = await readFile(path, 'utf8').catch(() => undefined);
  if (text === undefined || !isLeftover(text, stats.mtimeMs, staleMs)) return 'held';
  const now = await lstat(path).catch(() => undefined);
  if (now?.ino !== stats.ino || now.mtimeMs !== stats.mtimeMs) return 'held'; // changed meanwhile: judge it again
  try {
    await unlink(path);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error;
  }
  return 'removed';
}

/** True when an older troupe's lock file (its text and modification time) was left by a writer that is gone. */
function isLeftover(text: string, modifiedMs: number, staleMs: number): boolean {
  let owner: { pid?: unknown; host?: unknown; at?: unknown } | undefined;
  try {
    const parsed: unknown = JSON.parse(text);
    if (parsed !== null && typeof parsed === 'object') owner = parsed;
  } catch {
    // empty or half-written
  }
  if (owner === undefined || typeof owner.at !== 'number') return Date.now() - modifiedMs > UNREADABLE_GRACE_MS;
  if (Date.now() - owner.at > staleMs) return true;
  if (owner.host !== HOST || typeof owner.pid !== 'number') return false;
  return owner.pid === process.pid || !isRunning(owner.pid);
}

/** True when a process with this id runs on this machine. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Resolves true when `promise` settles within `ms`, false when the time runs out first. */
async function settlesWithin(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeUp = new Promise<false>((resolve) => {
    // setTimeout takes at most 2^31 - 1 ms and runs a longer wait (Infinity: wait as long as it takes) after 1 ms.
    timer = setTimeout(() => resolve(false), Math.min(Math.max(0, ms), MAX_TIMER_MS));
  });
  try {
    return await Promise.race([promise.then(() => true), timeUp]);
  } finally {
    clearTimeout(timer);
  }
}

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
