// A process that asks for a web inspector and a record file in a folder that does not exist, for the recording tests:
//   node --import tsx test/support/refusedRuntimeWorker.ts <record path>
// createRuntime refuses the file before any part starts, so no server is left open and the process ends by itself.
import { createRuntime } from '../../src/index.js';
import { ScriptedModel } from '../../src/testing.js';

try {
  createRuntime({ model: new ScriptedModel([]), ui: { port: 0 }, record: process.argv[2]!, projectAgentDir: false });
  console.log('made');
} catch (error) {
  console.log(`refused: ${(error as Error).name}`);
}
