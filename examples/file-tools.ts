// File tools in a workspace, driven by an agent file written for Claude Code. A small project is made in a temporary
// folder with `.claude/agents/fixer.md` as Claude Code writes it (tools: Read, Grep, Glob, Edit, Bash; model:
// sonnet). The runtime maps Read, Grep, Glob and Edit to read_file, grep, list_files and edit_file, skips Bash with a
// warning, and gives the agent the runtime's model. The fixer finds a typo, mends it, and reads the file back in the
// same turn (the planner runs the edit first: both name src/greet.ts); a peek outside the workspace is refused.
// Offline it runs on a scripted model; with OPENAI_API_KEY or OPENAI_BASE_URL set it asks a real model.
//
//   npx tsx examples/file-tools.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createRuntime, OpenAIModel, type Model } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';

const workspace = mkdtempSync(join(tmpdir(), 'troupe-files-'));
const files: Record<string, string> = {
  'src/greet.ts': "export function greet(name: string): string {\n  return `Helo, ${name}!`;\n}\n",
  'src/index.ts': "import { greet } from './greet.js';\n\nconsole.log(greet('Ada'));\n",
  'README.md': '# hello\n\nPrints a greeting.\n',
  '.claude/agents/fixer.md': [
    '---',
    'name: fixer',
    'description: Finds and fixes typos in the source files. Use it when a string looks misspelled.',
    'tools: Read, Grep, Glob, Edit, Bash',
    'model: sonnet',
    '---',
    '',
    'You fix typos in source code. Find the files with Glob and Grep, read them with Read, and mend each typo with',
    'Edit, changing nothing else. Answer with the file and line you changed.',
    '',
  ].join('\n'),
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

const online = Boolean(process.env.OPENAI_API_KEY || process.env.OPENAI_BASE_URL);
const model: Model = online
  ? new OpenAIModel({ model: process.env.OPENAI_MODEL ?? 'gpt-4o-mini' })
  : new ScriptedModel([
      callTools(toolCall('list_files', { pattern: 'src/**/*.ts' }, 'list'), toolCall('grep', { pattern: 'Helo\\b', glob: '**/*.ts' }, 'grep')),
      callTools(toolCall('read_file', { path: 'src/greet.ts' }, 'read'), toolCall('read_file', { path: '../secrets.txt' }, 'peek')),
      callTools(
        toolCall('edit_file', { path: 'src/greet.ts', old_string: 'Helo,', new_string: 'Hello,' }, 'edit'),
        toolCall('read_file', { path: './src/greet.ts', offset: 2, limit: 1 }, 'check'),
      ),
      (request) => `Fixed the typo "Helo" → "Hello" in src/greet.ts. Line 2 now reads:\n${request.messages.at(-1)?.content}`,
    ]);

const runtime = createRuntime({ model, workspace, agentDirs: [join(workspace, '.claude/agents')], projectAgentDir: false });
for (const warning of runtime.agentFileWarnings) console.log(`warning: ${warning.message.slice(workspace.length + 1)}`);
runtime.events$.subscribe((event) => {
  if (event.type === 'tool.call') console.log(`start ${event.tool} ${event.arguments}`);
  if (event.type === 'tool.result') console.log(`end   ${event.tool} (${event.status}${event.error ? `: ${event.error}` : ''})`);
});

const result = await runtime.run('fixer', 'The greeting looks misspelled. Fix it.');
await runtime.shutdown();
console.log(`\n${result.status}: ${result.output ?? result.error?.message}`);
console.log(`\nsrc/greet.ts on disk:\n${readFileSync(join(workspace, 'src/greet.ts'), 'utf8')}`);
rmSync(workspace, { recursive: true, force: true });
process.exitCode = result.status === 'completed' ? 0 : 1;
