// A process that dies while a lead waits for its sub-agents, for the interrupted-session tests: on a JSON store, the
// lead hands one task to a counter, which answers, and one (with context) to a slowpoke, whose model never answers;
// once the counter's end and the lead's turn are saved, the process prints the lead's id and waits to be killed.
//   node --import tsx test/support/interruptDelegation.ts <store file>
import { readFileSync } from 'node:fs';
import { createRuntime, defineAgent, JsonFileMemory } from '../../src/index.js';
import { ScriptedModel, assignCall, callTools } from '../../src/testing.js';

const file = process.argv[2]!;
const forever = () => new Promise<never>(() => {});
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'You lead.', tools: ['assign_task'], subagents: ['counter', 'slowpoke'] });
const counter = defineAgent({ name: 'counter', description: 'Counts.', systemPrompt: 'You count.' });
const slowpoke = defineAgent({ name: 'slowpoke', description: 'Thinks long.', systemPrompt: 'You think.' });
const model = ScriptedModel.perAgent({
  lead: [callTools(assignCall('counter', 'Count the files.', { id: 'count' }), assignCall('slowpoke', 'Think it over.', { id: 'think', context: 'The files are notes.' }))],
  counter: ['There are 3 files.'],
  slowpoke: [forever],
});
const runtime = createRuntime({ model, agents: [lead, counter, slowpoke], store: new JsonFileMemory(file), projectAgentDir: false });
const handle = runtime.spawn('lead', 'Count the files, and think it over.');
// Wait until the lead's turn (both calls in flight) and the counter's answer are in the file.
for (;;) {
  await new Promise((resolve) => setTimeout(resolve, 20));
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    continue;
  }
  if (text.includes('"think"') && text.includes('There are 3 files.') && text.includes('Think it over.')) break;
}
process.stdout.write(`${handle.id}\n`);
await forever();
