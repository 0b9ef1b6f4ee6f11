import { link, open, readFile, rename, stat, unlink } from 'node:fs/promises';
import { hostname } from 'node:os';
import { StoreLockedError } from '../errors.js';

/** How a lock file is waited for. */
export interface FileLockOptions {
  /** Give up (with {@link StoreLockedError}) after waiting this long. Default 10 seconds. */
  timeoutMs?: number;
  /** A lock older than this from another machine is taken as abandoned. Default 60 seconds. */
  staleMs?: number;
}

interface LockOwner {
  pid: number;
  host: string;
  at: number;
}

const HOST = hostname();

/**
 * Runs `work` while holding the lock file `lockPath`, made with an exclusive create (`wx`), so only one process at a
 * time holds it. A lock left by a process of this machine that no longer runs (or an old one from another machine)
 * is taken over. Waits with short, growing pauses up to `timeoutMs`.
 */
export async function withFileLock<T>(lockPath: string, work: () => Promise<T>, options: FileLockOptions = {}): Promise<T> {
  const timeoutMs = options.timeoutMs ?? 10_000;
  const staleMs = options.staleMs ?? 60_000;
  const started = Date.now();
  for (let attempt = 0; ; attempt++) {
    if (await tryLock(lockPath)) break;
    if (await breakIfStale(lockPath, staleMs)) continue;
    if (Date.now() - started > timeoutMs) throw new StoreLockedError(lockPath, timeoutMs);
    await pause(Math.min(100, 2 + attempt * 3) * (0.5 + Math.random()));
  }
  try {
    return await work();
  } finally {
    await unlink(lockPath).catch(() => {});
  }
}

async function tryLock(lockPath: string): Promise<boolean> {
  try {
    const handle = await open(lockPath, 'wx');
    try {
      await handle.writeFile(JSON.stringify({ pid: process.pid, host: HOST, at: Date.now() } satisfies LockOwner));
    } finally {
      await handle.close();
    }
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** Removes a lock whose owner is gone; true when it did (the caller tries again at once). */
async function breakIfStale(lockPath: string, staleMs: number): Promise<boolean> {
  let text: string;
  let modified: number;
  try {
    [text, modified] = await Promise.all([readFile(lockPath, 'utf8'), stat(lockPath).then((stats) => stats.mtimeMs)]);
  } catch {
    return true; // released meanwhile
  }
  let owner: Partial<LockOwner> | undefined;
  try {
    owner = JSON.parse(text) as Partial<LockOwner>;
  } catch {
    // Being written this very moment, or its owner died while writing it: judge it by the file's age only.
  }
  const gone =
    owner?.host === HOST && typeof owner.pid === 'number'
      ? !isRunning(owner.pid)
      : Date.now() - Math.max(owner?.at ?? 0, modified) > staleMs;
  if (!gone) return false;
  // Move it aside first: only one of several waiters can move a given file, and it then checks it moved the stale one.
  const aside = `${lockPath}.stale-${process.pid}-${Math.random().toString(36).slice(2)}`;
  try {
    await rename(lockPath, aside);
  } catch {
    return true;
  }
  const moved = await readFile(aside, 'utf8').catch(() => undefined);
  if (moved === text) {
    await unlink(aside).catch(() => {});
    return true;
  }
  // It was a fresh lock taken meanwhile: put it back unless yet another one has been taken since.
  await link(aside, lockPath).catch(() => {});
  await unlink(aside).catch(() => {});
  return false;
}

function isRunning(pid: number): boolean {
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
