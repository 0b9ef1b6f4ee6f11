// A first process for the session tests: a lead delegates to an analyst, with sessions in a JSON file; then it exits.
//   node --import tsx test/support/sessionWorker.ts <history.json>
import { createRuntime, defineAgent, JsonFileMemory } from '../../src/index.js';
import { assignCall, callTools, ScriptedModel } from '../../src/testing.js';

const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'You lead.', tools: ['assign_task'] });
const analyst = defineAgent({ name: 'analyst', description: 'Analyses.', systemPrompt: 'You analyse.' });
const model = ScriptedModel.perAgent({
  lead: [
    callTools(assignCall('analyst', 'Count the modules.', { id: 'c1', description: 'count modules' })),
    'The analyst counted them.',
  ],
  analyst: ['There are 7 modules: a, b, c, d, e, f, g.'],
});
const runtime = createRuntime({ model, agents: [lead, analyst], store: new JsonFileMemory(process.argv[2]!), projectAgentDir: false });
const result = await runtime.run('lead', 'How many modules?');
await runtime.shutdown();
model.assertDone();
console.log(JSON.stringify({ lead: result.id, status: result.status }));
