// A process that dies while a lead waits for its sub-agents, for the interrupted-session tests: on a JSON store, the
// lead hands one task to a counter, which answers, and one (with context) to a slowpoke, whose model never answers;
// once the counter's end and the lead's turn are saved, the process prints the lead's id and waits to be killed.
//   node --import tsx test/support/interruptDelegation.ts <store file>
import { readFileSync } from 'node:fs';
import { createRuntime, defineAgent, JsonFileMemory, SESSIONS_KEY } from '../../src/index.js';
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
// Wait until the lead's turn (both calls in flight), the counter's end and the slowpoke's start are in the file.
const saved = (): boolean => {
  let store: Record<string, unknown>;
  try {
    store = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  } catch {
    return false; // not written yet
  }
  const sessions = Object.values((store[SESSIONS_KEY] ?? {}) as Record<string, { agentType: string; state: string }>);
  const turn = JSON.stringify(store[handle.id] ?? null);
  return turn.includes('"think"') && sessions.some((s) => s.agentType === 'counter' && s.state === 'completed') && sessions.some((s) => s.agentType === 'slowpoke');
};
while (!saved()) await new Promise((resolve) => setTimeout(resolve, 20));
process.stdout.write(`${handle.id}\n`);
await forever();
