// A second process for the reliability run: appends to a JsonFileMemory and says `ack <tag>` once each append is
// acknowledged (its promise resolved), until it is killed.
//   node --import tsx reliability/worker.ts <file> <tag> <count>
import { JsonFileMemory } from '../src/memory/JsonFileMemory.js';

const [file, tag, count] = process.argv.slice(2);
const store = new JsonFileMemory(file!, { timeoutMs: 60_000, staleMs: 2_000 });
for (let index = 0; index < Number(count); index++) {
  const entry = `${tag}-${index}`;
  // Two at once now and then, so batches and lock turns both meet a kill.
  if (index % 7 === 0) {
    await Promise.all([store.append('log', entry), store.append('log', `${entry}b`)]);
    process.stdout.write(`ack ${entry}\nack ${entry}b\n`);
  } else {
    await store.append('log', entry);
    process.stdout.write(`ack ${entry}\n`);
  }
}
