// Soak: agents run one after another on one long-lived runtime (one tool call each). Past `retainFinished` (10,000 by
// default) the runtime forgets the oldest finished runs, so the heap stops growing: the figure is the heap kept per
// agent after the window is full, measured after full GCs.
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, type ModelRequest } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { heapAfterGc, report } from './measure.js';

const lookup = defineTool({ name: 'lookup', description: 'Looks up a word.', parameters: z.object({ word: z.string() }), kind: 'read', execute: ({ word }) => `found ${word}` });
const worker = defineAgent({ name: 'worker', description: 'Looks something up.', systemPrompt: 'Look it up.', tools: ['lookup'] });

export async function soak(window: number, total: number): Promise<void> {
  const model = new ScriptedModel(
    (request: ModelRequest) => (request.messages.some((message) => message.role === 'tool') ? 'found it' : callTools(toolCall('lookup', { word: 'w' }, 'l'))),
    { record: false },
  );
  const runtime = createRuntime({ model, agents: [worker], tools: [lookup], retainFinished: window, projectAgentDir: false });
  const runMany = async (count: number) => {
    for (let i = 0; i < count; i++) {
      const result = await runtime.run('worker', `Task ${i}.`);
      if (result.status !== 'completed') throw new Error(`Agent ${i} of the soak failed: ${result.error?.message}`);
    }
    await runtime.flush();
  };
  await runMany(window * 2); // the window is full, and the code is warm
  const before = await heapAfterGc();
  await runMany(total - window * 2);
  const after = await heapAfterGc();
  const kept = Object.keys(runtime.metrics().agents).length;
  await runtime.shutdown();
  const perAgent = (after - before) / (total - window * 2);
  report({
    bench: 'soak',
    name: `heap kept per agent after the first ${window * 2} of ${total} agents run one after another (retainFinished ${window})`,
    value: perAgent,
    unit: 'bytes',
    target: 'flat (under 100 bytes per agent)',
    pass: perAgent < 100,
    detail: { agents: total, keptInMemory: kept, heapGrowthKB: Math.round((after - before) / 1024) },
  });
}
