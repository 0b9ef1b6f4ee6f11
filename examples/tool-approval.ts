// Approval for any tool: an ops agent cleans up a database and a workspace in one turn. `drop_table` asks a person
// for anything but a scratch table (its own `needsApproval`); the runtime's tool policy allows plain tools and, set at
// all, makes file writes ask by default. Code plays the person: it approves dropping `old_sessions` and the file
// write, and denies dropping `users`, whose call the model sees fail with the reason. Offline, on a scripted model.
//
//   npx tsx examples/tool-approval.ts
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, formatEvent } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';

const tables = new Set(['users', 'orders', 'tmp_import', 'old_sessions']);
const dropTable = defineTool({
  name: 'drop_table',
  description: 'Drops a table of the database.',
  parameters: z.object({ table: z.string() }),
  kind: 'write',
  category: 'db_op',
  targets: ({ table }) => [`table:${table}`],
  // Scratch tables go without asking; anything else waits for a person.
  needsApproval: ({ table }) => !table.startsWith('tmp_'),
  execute: ({ table }) => (tables.delete(table) ? `Dropped ${table}.` : `There is no table ${table}.`),
});
const listTables = defineTool({
  name: 'list_tables',
  description: 'Lists the tables.',
  parameters: z.object({}),
  kind: 'read',
  execute: () => [...tables].sort().join(', '),
});

const ops = defineAgent({
  name: 'ops',
  description: 'Keeps the database and the workspace tidy.',
  systemPrompt: 'Drop tables nobody needs and write down what you did.',
  tools: ['list_tables', 'drop_table', 'write_file'],
});
const model = new ScriptedModel([
  callTools(
    toolCall('list_tables', {}, 'list'),
    toolCall('drop_table', { table: 'tmp_import' }, 'tmp'),
    toolCall('drop_table', { table: 'old_sessions' }, 'old'),
    toolCall('drop_table', { table: 'users' }, 'users'),
    toolCall('write_file', { path: 'CLEANUP.md', content: 'Dropped tmp_import and old_sessions.\n' }, 'note'),
  ),
  'Dropped tmp_import and old_sessions; users stays. Wrote CLEANUP.md.',
]);

const workspace = mkdtempSync(join(tmpdir(), 'troupe-approval-'));
const runtime = createRuntime({
  model,
  agents: [ops],
  tools: [dropTable, listTables],
  workspace,
  toolPolicy: { tool: 'allow' },
  projectAgentDir: false,
});
// The person: every request is printed as it comes, and answered from code.
runtime.events$.subscribe((event) => {
  if (event.type !== 'approval.requested') return;
  console.log(formatEvent(event));
  queueMicrotask(() => {
    if (event.task.includes('"users"')) runtime.deny(event.requestId, 'users holds production data.');
    else runtime.approve(event.requestId);
  });
});
runtime.events$.subscribe((event) => {
  if (event.type === 'approval.granted' || event.type === 'approval.denied' || event.type === 'tool.denied') console.log(formatEvent(event));
});

const result = await runtime.run('ops', 'Clean up the database.');
console.log(`\n${result.status}: ${result.output}`);
console.log(`Tables left: ${[...tables].sort().join(', ')}`);
console.log(`CLEANUP.md: ${readFileSync(join(workspace, 'CLEANUP.md'), 'utf8').trim()}`);
await runtime.shutdown();
rmSync(workspace, { recursive: true, force: true });
if (result.status !== 'completed' || !tables.has('users') || tables.has('old_sessions')) process.exitCode = 1;
