// The second process of the agent-files example: it opens the same history.json, lists the sessions the first
// process left, and resumes the researcher's session with a follow-up. Run run.ts first.
//
//   npx tsx examples/agent-files/resume.ts
import { existsSync } from 'node:fs';
import { createRuntime, JsonFileMemory } from 'troupe';
import { agentsDir, historyFile, model, readNotes } from './shared.js';

if (!existsSync(historyFile)) {
  console.error(`No ${historyFile} yet: run npx tsx examples/agent-files/run.ts first.`);
  process.exit(1);
}
const runtime = createRuntime({ model, agentDirs: [agentsDir], tools: [readNotes], store: new JsonFileMemory(historyFile) });

console.log(`Sessions in ${historyFile} (process ${process.pid}):`);
for (const session of await runtime.sessions.list()) {
  console.log(`  ${session.id.padEnd(32)} ${session.state.padEnd(10)} from ${session.parentConversationId}: ${session.taskDescription}`);
}

const researcher = (await runtime.sessions.list()).find((session) => session.agentType === 'researcher');
if (!researcher) throw new Error('The first process left no researcher session.');
const earlier = await runtime.sessions.conversation(researcher.id);
console.log(`\nResuming ${researcher.id}, which already holds ${earlier?.length ?? 0} messages.`);
const handle = await runtime.resume(researcher.id, 'What does that mean if the process crashes mid-write?');
const result = await handle.result;
await runtime.shutdown();
console.log(`\n${result.id === researcher.id ? 'Same id' : 'A new id'}, ${result.status}: ${result.output ?? result.error?.message}`);
process.exitCode = result.status === 'completed' ? 0 : 1;
