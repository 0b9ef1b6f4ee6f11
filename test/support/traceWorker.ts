// A process that runs agents with a trace, for the trace tests:
//   node --import tsx test/support/traceWorker.ts <trace.jsonl> <store.json> <events.json> [killAfter]
// Twenty workers each read a "config" (a tool whose output holds TROUPE_TEST_API_KEY from this process's environment)
// and repeat it; one more agent's model fails quoting the key. With killAfter, the process kills itself with SIGKILL
// as the killAfter-th event reaches a subscriber (the trace, subscribed first, has written it by then). Without it,
// the run ends, the events seen on events$ go to <events.json>, and the failed agent's result is printed.
import { writeFileSync } from 'node:fs';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, JsonFileMemory, type TroupeEvent } from '../../src/index.js';
import { callTools, ScriptedModel, toolCall } from '../../src/testing.js';

const [trace, store, eventsFile, killAfter] = process.argv.slice(2);
const key = process.env.TROUPE_TEST_API_KEY ?? '';
const readConfig = defineTool({
  name: 'read_config',
  description: 'Reads the config.',
  parameters: z.object({}),
  kind: 'read',
  execute: () => `api_key=${key}`,
});
const worker = defineAgent({ name: 'worker', description: 'Reads config.', systemPrompt: 'Read it.', tools: ['read_config'] });
const caller = defineAgent({ name: 'caller', description: 'Calls upstream.', systemPrompt: 'Call it.' });
const model = new ScriptedModel((request) => {
  if (request.agentName === 'caller') throw new Error(`upstream refused the key ${key}`);
  const tool = request.messages.findLast((message) => message.role === 'tool');
  return tool ? `The config says ${tool.content}.` : callTools(toolCall('read_config', {}));
});
const runtime = createRuntime({ model, agents: [worker, caller], tools: [readConfig], trace, store: new JsonFileMemory(store!), seed: 7, projectAgentDir: false });
const seen: TroupeEvent[] = [];
runtime.events$.subscribe((event) => {
  seen.push(event);
  if (killAfter !== undefined && seen.length === Number(killAfter)) process.kill(process.pid, 'SIGKILL');
});
await Promise.all(Array.from({ length: 20 }, (_, index) => runtime.run('worker', `Read config ${index}.`)));
const failed = await runtime.run('caller', 'Call upstream.');
await runtime.shutdown();
writeFileSync(eventsFile!, JSON.stringify(seen));
console.log(JSON.stringify({ events: seen.length, failed }));
