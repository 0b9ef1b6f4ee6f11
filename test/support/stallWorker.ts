// A process whose awaited run can never end by itself, for the process-end tests:
//   node --import tsx test/support/stallWorker.ts resident|delegated|restarted|simulated|ended
// It prints the run's result as one JSON line; a runtime left with live agents when the process runs out of work stops
// them (and warns on stderr), so the line is printed instead of the process ending with the run unsettled.
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent } from '../../src/index.js';
import { ScriptedModel, assignCall, callTools } from '../../src/testing.js';

const listener = defineAgent({ name: 'listener', description: 'Listens.', systemPrompt: 'Listen.', resident: true });
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['assign_task'], subagents: ['listener'] });
const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.' });
const mode = process.argv[2];

async function main() {
  if (mode === 'resident') {
    const runtime = createRuntime({ model: new ScriptedModel(['listening']), agents: [listener], projectAgentDir: false });
    return runtime.run('listener', 'Listen for news.'); // a resident only ends when stopped: nobody stops it here
  }
  if (mode === 'delegated') {
    const model = ScriptedModel.perAgent({ lead: [callTools(assignCall('listener', 'Listen.', { id: 'a1' })), 'The listener said: listening'], listener: ['listening'] });
    const runtime = createRuntime({ model, agents: [lead, listener], projectAgentDir: false });
    return runtime.run('lead', 'Ask the listener.');
  }
  if (mode === 'restarted') {
    // The first attempt fails and is restarted; the second answers and waits for messages nobody sends.
    const restarting = defineAgent({ ...listener, name: 'restarting', restart: 'on-failure' });
    const runtime = createRuntime({ model: new ScriptedModel([new Error('The first attempt breaks.'), 'listening again']), agents: [restarting], projectAgentDir: false });
    return runtime.run('restarting', 'Listen for news.');
  }
  if (mode === 'simulated') {
    // A model latency on a simulated clock that nothing moves (no runUntilIdle).
    const runtime = createRuntime({ model: new ScriptedModel(['done'], { latencyMs: 1_000 }), agents: [worker], clock: new SimulatedClock(), projectAgentDir: false });
    return runtime.run('worker', 'Work.');
  }
  // ended: the run ends by itself; the runtime is never shut down, which is no stall.
  const runtime = createRuntime({ model: new ScriptedModel(['done']), agents: [worker], projectAgentDir: false });
  return runtime.run('worker', 'Work.');
}

const result = await main();
console.log(JSON.stringify({ status: result.status, output: result.output, reason: result.reason, error: result.error?.message }));
