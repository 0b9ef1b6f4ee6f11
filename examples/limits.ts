// Limits that keep a run from running away. A "spawn bomb" (every agent hands 20 tasks to agents of its own kind)
// stops at the run's `maxAgents` (1,000 by default): the calls past it fail, their callers go on and answer. A lead
// with a budget over its subtree (`budget: { maxTurns }`, counting every sub-agent's turns) is stopped once its
// helpers have used it up, and no model is called under a spent budget.
//
//   npx tsx examples/limits.ts
import { createRuntime, defineAgent, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools } from 'troupe/testing';

const answered = (request: ModelRequest) => request.messages.some((message) => message.role === 'tool');
const offered = (request: ModelRequest) => request.tools.some((schema) => schema.name === 'assign_task');

// 1. A spawn bomb against maxAgents.
const bomb = defineAgent({ name: 'bomb', description: 'Multiplies.', systemPrompt: 'Split every task in twenty.', tools: ['assign_task'], subagents: ['bomb'] });
const bombModel = new ScriptedModel(
  (request) => (offered(request) && !answered(request) ? callTools(...Array.from({ length: 20 }, (_, i) => assignCall('bomb', `Part ${i}.`, { id: `p${i}` }))) : 'done'),
  { record: false },
);
const bombs = createRuntime({ model: bombModel, agents: [bomb], maxDepth: 10, maxParallel: 64, maxToolConcurrency: 20 });
let refused = 0;
bombs.events$.subscribe((event) => {
  if (event.type === 'tool.result' && event.status === 'error' && event.error?.includes('maxAgents')) refused += 1;
});
const blast = await bombs.run('bomb', 'Do everything.');
const { total } = bombs.metrics();
console.log(`spawn bomb: ${total.agentsSpawned} agents ran (maxAgents 1,000), ${refused} delegations refused, the top agent ${blast.status}`);
await bombs.shutdown();

// 2. A budget over a subtree: the lead's five turns cover its helpers' turns too.
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Split the work.', tools: ['assign_task'], subagents: ['helper'] });
const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Help.', tools: ['assign_task'], subagents: ['helper'] });
const model = new ScriptedModel((request) => {
  if (answered(request) || !offered(request)) return `${request.agentName} is done`;
  return callTools(assignCall('helper', 'Take half.', { id: 'x' }), assignCall('helper', 'Take the other half.', { id: 'y' }));
});
const runtime = createRuntime({ model, agents: [lead, helper], maxParallel: 8, maxDepth: 4 });
const handle = runtime.spawn('lead', 'Do the project.', { budget: { maxTurns: 5 } });
const result = await handle.result;
const subtree = runtime.metrics().agents[handle.id]!.subtree;
console.log(`budget of 5 turns over the lead's subtree: ${subtree.modelCalls} model turns in it, ${model.calls.length} model calls in all`);
console.log(`lead: ${result.status}${result.reason ? ` (${result.reason}: ${result.error?.message})` : ''}`);
await runtime.shutdown();
