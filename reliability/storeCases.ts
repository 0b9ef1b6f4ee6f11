// The store under faults: writers killed with SIGKILL at random moments, corrupt files, and concurrent writers.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { CorruptStoreError, JsonFileMemory, UnsupportedSchemaError } from '../src/index.js';
import type { Row } from './row.js';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Starts a worker appending `count` entries tagged `tag`; collects what it acknowledged. */
function writer(file: string, tag: string, count: number) {
  const child = spawn(process.execPath, ['--import', 'tsx', 'reliability/worker.ts', file, tag, String(count)], { cwd: root, stdio: ['ignore', 'pipe', 'ignore'] });
  const acked: string[] = [];
  let buffer = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    const lines = buffer.split('\n');
    buffer = lines.pop() ?? '';
    for (const line of lines) if (line.startsWith('ack ')) acked.push(line.slice(4));
  });
  const exited = new Promise<void>((resolve) => child.on('exit', () => resolve()));
  return { child, acked, exited };
}

/** What the store holds under `log` now, read by a fresh store object (undefined when it cannot be read). */
async function logged(file: string): Promise<Set<string> | undefined> {
  try {
    return new Set(((await new JsonFileMemory(file).get('log')) as string[] | undefined) ?? []);
  } catch {
    return undefined;
  }
}

/** Writers killed with SIGKILL after a random time, one after another: no acknowledged write may be lost. */
export async function kills(dir: string, count: number, random: () => number): Promise<Row> {
  const file = join(dir, 'killed.json');
  let failed = 0;
  let lost = 0;
  for (let kill = 0; kill < count; kill++) {
    const run = writer(file, `k${kill}`, 1_000);
    // Kill it early sometimes (while it takes the lock or writes its first batch), later other times.
    await new Promise((resolve) => setTimeout(resolve, random() < 0.3 ? 5 + random() * 40 : 60 + random() * 400));
    run.child.kill('SIGKILL');
    await run.exited;
    const held = await logged(file);
    if (!held) failed += 1;
    else lost += run.acked.filter((entry) => !held.has(entry)).length;
  }
  // After all of it, a writer of this process still gets the lock (a killed holder's lock is taken over).
  try {
    await new JsonFileMemory(file, { staleMs: 2_000, timeoutMs: 10_000 }).append('log', 'after');
  } catch {
    failed += 1;
  }
  return { case: `writers killed with SIGKILL mid-write (${count} kills)`, tried: count, failed, lost };
}

/** Files that are not a store: each is refused with a typed error and left byte for byte as it was. */
export async function corrupt(dir: string): Promise<Row> {
  const variants = ['{"a": 1', '\u0000\u0001binary', '[1, 2, 3]', '"text"', '', '{"schemaVersion": 99, "a": 1}', '{"a": 1}}'];
  let failed = 0;
  for (const [index, text] of variants.entries()) {
    const file = join(dir, `corrupt-${index}.json`);
    writeFileSync(file, text);
    const store = new JsonFileMemory(file);
    for (const attempt of [() => store.get('a'), () => store.set('a', 2)]) {
      try {
        await attempt();
        if (text !== '') failed += 1; // an empty file is an empty store; everything else must be refused
      } catch (error) {
        if (!(error instanceof CorruptStoreError || error instanceof UnsupportedSchemaError)) failed += 1;
      }
    }
    if (text !== '' && readFileSync(file, 'utf8') !== text) failed += 1;
  }
  return { case: 'corrupt or newer store files refused, never overwritten', tried: variants.length, failed, lost: 0 };
}

/** Two processes and two store objects of this process append to one file at once: nothing acknowledged is lost. */
export async function concurrentWriters(dir: string, each: number): Promise<Row> {
  const file = join(dir, 'shared.json');
  const runs = [writer(file, 'p1', each), writer(file, 'p2', each)];
  const stores = [new JsonFileMemory(file), new JsonFileMemory(file)];
  const mine: string[] = [];
  await Promise.all(
    stores.map(async (store, s) => {
      for (let index = 0; index < each; index++) {
        await store.append('log', `i${s}-${index}`);
        mine.push(`i${s}-${index}`);
      }
    }),
  );
  await Promise.all(runs.map((run) => run.exited));
  const held = (await logged(file)) ?? new Set<string>();
  const acknowledged = [...runs.flatMap((run) => run.acked), ...mine];
  const lost = acknowledged.filter((entry) => !held.has(entry)).length;
  return { case: 'two processes and two store objects appending to one file', tried: acknowledged.length, failed: held.size === 0 ? 1 : 0, lost };
}
