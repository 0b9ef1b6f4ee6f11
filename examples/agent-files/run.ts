// Agents kept as files, sessions kept in a file. This script loads the three agents of ./agents (the planner
// delegates to the researcher and the editor), runs the planner, and writes every session to ./history.json.
// Then run resume.ts, in a new process: it lists those sessions and resumes the researcher's.
//
//   npx tsx examples/agent-files/run.ts && npx tsx examples/agent-files/resume.ts
import { rmSync } from 'node:fs';
import { createRuntime, formatEvent, JsonFileMemory } from 'troupe';
import { agentsDir, historyFile, model, readNotes } from './shared.js';

rmSync(historyFile, { force: true }); // start the example afresh
const runtime = createRuntime({
  model,
  agentDirs: [agentsDir],
  tools: [readNotes],
  store: new JsonFileMemory(historyFile),
});
console.log(`Loaded agents: ${runtime.agentNames.join(', ')}`);
for (const error of runtime.agentFileErrors) console.log(`Refused: ${error.message}`);
runtime.events$.subscribe((event) => console.log(formatEvent(event)));

const result = await runtime.run('planner', 'Plan the release notes for version 2.0.');
await runtime.shutdown(); // writes what is left to history.json
console.log(`\n${result.output ?? result.error?.message}`);
console.log(`\nSessions written to ${historyFile}. Now run: npx tsx examples/agent-files/resume.ts`);
process.exitCode = result.status === 'completed' ? 0 : 1;
