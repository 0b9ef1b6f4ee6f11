// MCP servers as tool sources. The reference filesystem server (`@modelcontextprotocol/server-filesystem`, from the
// npm registry) is started over stdio on a temporary folder; a librarian with every tool of the server (`files:*`)
// lists the folder and reads two notes side by side (read-only tools run together), then a clerk allowed only
// `files:write_file` writes a summary. A second server with a command that does not exist shows what a failed server
// gives: an error result the model sees, and the run goes on. Offline, on a scripted model; the servers stop with
// the runtime.
//
//   npx tsx examples/mcp.ts
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';

const folder = mkdtempSync(join(tmpdir(), 'troupe-mcp-'));
writeFileSync(join(folder, 'monday.txt'), 'Shipped the parser.');
writeFileSync(join(folder, 'tuesday.txt'), 'Fixed two bugs in the planner.');
// The server's installed entry file, run with this Node: no download, no network.
const filesystemServer = createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

const note = (day: string) => join(folder, `${day}.txt`);
const model = ScriptedModel.perAgent({
  librarian: [
    (request) => {
      const read = request.tools.filter((tool) => tool.name.startsWith('files:read')).map((tool) => tool.name);
      console.log(`librarian is offered ${request.tools.length} tools of "files", among them ${read.join(', ')}`);
      return callTools(
        toolCall('files:list_directory', { path: folder }, 'list'),
        toolCall('files:read_text_file', { path: note('monday') }, 'monday'),
        toolCall('files:read_text_file', { path: note('tuesday') }, 'tuesday'),
      );
    },
    'Monday: shipped the parser. Tuesday: fixed two bugs in the planner.',
  ],
  clerk: [
    (request) => {
      console.log(`clerk is offered: ${request.tools.map((tool) => tool.name).join(', ')}`);
      return callTools(toolCall('files:write_file', { path: join(folder, 'summary.txt'), content: 'Parser shipped; planner fixed.' }));
    },
    callTools(toolCall('archive:store', { path: 'summary.txt' })),
    'The summary is written; the archive is down, so it is not archived.',
  ],
});

const runtime = createRuntime({
  model,
  projectAgentDir: false,
  mcpServers: {
    files: { command: process.execPath, args: [filesystemServer, folder] },
    archive: { command: join(folder, 'no-such-archive-server') },
  },
  agents: [
    defineAgent({ name: 'librarian', description: 'Reads the notes.', systemPrompt: 'Read the notes.', tools: ['files:*'] }),
    defineAgent({
      name: 'clerk',
      description: 'Writes summaries.',
      systemPrompt: 'Write the summary, then archive it.',
      tools: ['files:write_file', 'archive:store'],
    }),
  ],
});
runtime.events$.subscribe((event) => {
  if (event.type === 'tool.call') console.log(`  ${event.agentId.split(':')[1]} calls ${event.tool}`);
  if (event.type === 'tool.result') {
    const text = (event.status === 'ok' ? event.content : event.error) ?? '';
    console.log(`  ${event.callId}: ${event.status} ${text.replaceAll(folder, '<folder>').replace(/\s+/g, ' ').slice(0, 110)}`);
  }
});

const librarian = await runtime.run('librarian', 'What happened this week?');
console.log(`librarian: ${librarian.output}\n`);
const clerk = await runtime.run('clerk', 'Write and archive the summary.');
console.log(`clerk: ${clerk.output}`);
console.log(`summary.txt: ${readFileSync(join(folder, 'summary.txt'), 'utf8')}\n`);
for (const server of runtime.mcpServers()) {
  console.log(`${server.name}: ${server.state}, ${server.tools.length} tools${server.error ? ` (${server.error.replaceAll(folder, '<folder>')})` : ''}`);
}
await runtime.shutdown();
console.log(`after shutdown: ${runtime.mcpServers().map((server) => `${server.name} ${server.state}`).join(', ')}`);
rmSync(folder, { recursive: true, force: true });
