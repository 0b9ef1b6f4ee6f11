import { open, readFile, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StoreLockedError } from '../errors.js';

/** How a lock file is waited for. */
export interface FileLockOptions {
  /** Give up (with {@link StoreLockedError}) after waiting this long. Default 10 seconds. */
  timeoutMs?: number;
  /**
   * A lock held longer than this is taken as abandoned (its holder died, or its process id was reused after a
   * crash). Holders only keep a store's lock for one read-change-write. Default 60 seconds.
   */
  staleMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
  token: string;
}

const HOST = hostname();
/** The lock files this process holds now: a lock naming this process's id that is not here is someone else's leftover. */
const held = new Set<string>();

/**
 * Runs `work` while holding the lock file `lockPath`, made with an exclusive create (`wx`), so only one process at a
 * time holds it. A lock whose holder is gone (a process of this machine that no longer runs, or one older than
 * `staleMs`) is removed, by one waiter at a time (through `<lock>.break`), after it has checked the lock is still
 * the one it judged. Waits with short, growing pauses up to `timeoutMs`.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 60_000;
  const started = Date.now();
  let mine: string | undefined;
  for (let attempt = 0; ; attempt++) {
    mine = await tryLock(lockPath);
    if (mine !== undefined) break;
    if (await breakIfStale(lockPath, staleMs)) continue;
    if (Date.now() - started > timeoutMs) throw new StoreLockedError(lockPath, timeoutMs);
    await pause(Math.min(100, 2 + attempt * 3) * (0.5 + Math.random()));
  }
  held.add(lockPath);
  try {
    return await work();
  } finally {
    held.delete(lockPath);
    // Remove it only if it is still ours (were it judged stale and taken over meanwhile, it is not).
    if ((await readFile(lockPath, 'utf8').catch(() => undefined)) === mine) await unlink(lockPath).catch(() => {});
  }
}

/** Takes the lock; returns the text written into it, or undefined when another holds it. */
async function tryLock(lockPath: string): Promise<string | undefined> {
  const text = JSON.stringify({ pid: process.pid, host: HOST, at: Date.now(), token: Math.random().toString(36).slice(2) } satisfies LockOwner);
  try {
    const handle = await open(lockPath, 'wx');
    try {
      await handle.writeFile(text);
    } finally {
      await handle.close();
    }
    return text;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return undefined;
    throw error;
  }
}

/** The lock's text when its holder is gone, else undefined. */
async function staleText(lockPath: string, staleMs: number): Promise<string | undefined> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath).then((stats) => stats.mtimeMs)]);
  } catch {
    return undefined; // released meanwhile
  }
  let owner: Partial<LockOwner> | undefined;
  try {
    owner = JSON.parse(text) as Partial<LockOwner>;
  } catch {
    // Being written this very moment, or its holder died while writing it: judge it by its age alone.
  }
  const age = Date.now() - (typeof owner?.at === 'number' ? owner.at : modified);
  if (age > staleMs) return text;
  if (owner?.host !== HOST || typeof owner.pid !== 'number') return undefined;
  if (owner.pid === process.pid) return held.has(lockPath) ? undefined : text; // an earlier process with our id
  return isRunning(owner.pid) ? undefined : text;
}

/** Removes a lock whose holder is gone; true when it did (or it went meanwhile), so the caller tries again at once. */
async function breakIfStale(lockPath: string, staleMs: number): Promise<boolean> {
  const stale = await staleText(lockPath, staleMs);
  if (stale === undefined) return false;
  const breaker = `${lockPath}.break`;
  const mine = await tryLock(breaker);
  if (mine === undefined) {
    // Another waiter is breaking it; a break file left by a waiter that died is removed after a while.
    const left = await stat(breaker).catch(() => undefined);
    if (left && Date.now() - left.mtimeMs > Math.min(staleMs, 10_000)) await unlink(breaker).catch(() => {});
    return false;
  }
  try {
    // Nobody but a breaker removes a lock it does not hold, and we are the only breaker: if the lock is still the
    // one judged stale, it is safe to remove.
    if ((await staleText(lockPath, staleMs)) === stale) await unlink(lockPath).catch(() => {});
    return true;
  } finally {
    await unlink(breaker).catch(() => {});
  }
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

function pause(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
