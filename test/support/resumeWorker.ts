// A process that resumes a session, for the test of two processes resuming one session at once: it loads, says
// `ready`, waits for a line on stdin, resumes the session with its own task, and prints how that went as JSON.
//   node --import tsx test/support/resumeWorker.ts <history.json> <session id> <tag>
import { createInterface } from 'node:readline';
import { createRuntime, defineAgent, JsonFileMemory } from '../../src/index.js';
import { ScriptedModel } from '../../src/testing.js';

const [file, id, tag] = process.argv.slice(2) as [string, string, string];
const worker = defineAgent({ name: 'worker', description: 'The worker.', systemPrompt: 'You are the worker.' });
// It answers after a while, as a real model does: a resume that was let through would still be running.
const model = new ScriptedModel(async () => {
  await new Promise((resolve) => setTimeout(resolve, 300));
  return `Answer of ${tag}.`;
});
const runtime = createRuntime({ model, agents: [worker], store: new JsonFileMemory(file), projectAgentDir: false });
const lines = createInterface({ input: process.stdin });
process.stdout.write('ready\n');
await new Promise((resolve) => lines.once('line', resolve));
lines.close();
try {
  const result = await (await runtime.resume(id, `Task of ${tag}.`)).result;
  process.stdout.write(`${JSON.stringify({ tag, status: result.status })}\n`);
} catch (error) {
  process.stdout.write(`${JSON.stringify({ tag, refused: (error as { reason?: string }).reason })}\n`);
}
await runtime.shutdown();
