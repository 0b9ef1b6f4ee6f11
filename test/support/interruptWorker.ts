// A process that dies in the middle of a run, for the interrupted-session tests: an agent on a JSON store calls a
// tool that writes (not idempotent) and one that reads (idempotent), both of which never end; once its turn is saved
// the process prints the agent's id and waits to be killed. With `before-answer`, the model never answers: the process
// dies before the agent's first turn is saved. With `resumed-before-answer`, the agent completes a first task, is resumed
// with a second, and the process dies before the resumed run's first turn is saved.
//   node --import tsx test/support/interruptWorker.ts <store file> [before-answer | resumed-before-answer]
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, JsonFileMemory } from '../../src/index.js';
import { ScriptedModel, callTools, toolCall } from '../../src/testing.js';

const file = process.argv[2]!;
const forever = () => new Promise<never>(() => {});
const charge = defineTool({ name: 'charge', description: 'Charges a card.', parameters: z.object({ cents: z.number() }), kind: 'write', execute: forever });
const lookup = defineTool({ name: 'lookup', description: 'Looks a price up.', parameters: z.object({ item: z.string() }), kind: 'read', idempotent: true, execute: forever });
const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.', tools: ['charge', 'lookup'] });
const resumed = process.argv[3] === 'resumed-before-answer';
const beforeAnswer = process.argv[3] === 'before-answer' || resumed;
const model = resumed
  ? new ScriptedModel(['Sold a tea.', forever])
  : beforeAnswer
    ? { name: 'stuck', complete: forever }
    : new ScriptedModel([callTools(toolCall('charge', { cents: 500 }, 'pay'), toolCall('lookup', { item: 'tea' }, 'price'))]);
const runtime = createRuntime({ model, agents: [clerk], tools: [charge, lookup], store: new JsonFileMemory(file), projectAgentDir: false });
let handle = runtime.spawn('clerk', 'Sell a tea for 5 euros.');
if (resumed) {
  await handle.result;
  handle = await runtime.resume(handle.id, 'Now sell a coffee.');
}
// Wait until the turn's conversation (with both calls in flight) is in the file.
for (;;) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  if ((beforeAnswer || text.includes('"pay"')) && text.includes(handle.id) && (!resumed || text.includes('Now sell a coffee.'))) break;
}
process.stdout.write(`${handle.id}\n`);
await forever();
