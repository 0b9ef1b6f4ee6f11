// A second process for the store tests: appends to a JsonFileMemory, or dies in the middle of a write.
//   node --import tsx test/support/storeWorker.ts append <file> <tag> <count>
//   node --import tsx test/support/storeWorker.ts crash <file> <key> <value>
//   node --import tsx test/support/storeWorker.ts hold <file>
import { JsonFileMemory } from '../../src/memory/JsonFileMemory.js';
import { withFileLock } from '../../src/memory/fileLock.js';

const [mode, file, a, b] = process.argv.slice(2);
if (mode === 'append') {
  const store = new JsonFileMemory(file!, { timeoutMs: 60_000 });
  const count = Number(b);
  // Half at once (one queued batch), half one by one (many lock turns), so both paths meet the other process.
  await Promise.all(Array.from({ length: count / 2 }, (_, index) => store.append('log', `${a}-${index}`)));
  for (let index = count / 2; index < count; index++) await store.append('log', `${a}-${index}`);
} else if (mode === 'crash') {
  // Killed for real, after the new content is in the temporary file and before the rename.
  const store = new JsonFileMemory(file!, { faults: { afterTempWrite: () => void process.kill(process.pid, 'SIGKILL') } });
  await store.set(a!, b);
  await new Promise(() => {});
} else if (mode === 'hold') {
  // Takes the store's lock and keeps it until killed; says `held` once it holds it.
  await withFileLock(`${file}.lock`, async () => {
    process.stdout.write('held\n');
    await new Promise(() => setInterval(() => {}, 1_000));
  });
} else {
  throw new Error(`Unknown mode ${mode}`);
}
