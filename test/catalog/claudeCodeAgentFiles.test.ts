// Agent files written for Claude Code (test/fixtures/claude-code/) load as they are: Read, Grep, Glob, Write, Edit,
// MultiEdit stand for the file tools; tools still unknown (Bash, WebFetch) are skipped with a warning, and a Claude
// Code model alias gives way to the runtime's model; strictAgentFiles: true refuses such files as before.
import { fileURLToPath } from 'node:url';
import { join } from 'node:path';
import { mkdirSync, writeFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { lastToolMessage, scripted, scriptedPerAgent } from '../stubs.js';
import { agentFile, eachTestTempDir } from '../support/tempDir.js';

const claudeCode = fileURLToPath(new URL('../fixtures/claude-code/', import.meta.url));
const workspace = eachTestTempDir();

describe('Claude Code agent files', () => {
  it('load with their Claude Code tools mapped to the file tools, the unknown ones skipped with a warning', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), agentDirs: [claudeCode], projectAgentDir: false, workspace: workspace.path });
    expect([...runtime.agentNames].sort()).toEqual(['code-reviewer', 'doc-writer', 'explorer']);
    expect(runtime.agentFileErrors).toEqual([]);
    expect(runtime.agentFileWarnings.map(({ file, field, message }) => [file.slice(claudeCode.length), field, message.slice(file.length + 2)])).toEqual([
      ['code-reviewer.md', 'tools', 'tools: skipped Bash, which this runtime does not have; the agent runs without it (strictAgentFiles: true refuses the file instead)'],
      ['doc-writer.md', 'tools', 'tools: skipped WebFetch, which this runtime does not have; the agent runs without it (strictAgentFiles: true refuses the file instead)'],
      ['explorer.md', 'model', 'model: "sonnet" is a Claude Code model alias; the agent uses the runtime\'s model'],
    ]);
    await runtime.shutdown();
  });

  it('work: the explorer lists, searches and reads the workspace with the tools it was given', async () => {
    writeFileSync(join(workspace.path, 'main.ts'), 'import { start } from "./start";\nstart();\n');
    const model = scriptedPerAgent({
      explorer: [
        (request) => {
          expect(request.tools?.map((tool) => tool.name)).toEqual(['read_file', 'grep', 'list_files']);
          expect(request.model).toBeUndefined(); // "sonnet" is not sent to the runtime's model
          return callTools(toolCall('list_files', { pattern: '**/*.ts' }, 'l'), toolCall('grep', { pattern: 'start\\(' }, 'g'));
        },
        (request) => {
          expect(request.messages.filter((message) => message.role === 'tool').map((message) => message.content)).toEqual(['main.ts', 'main.ts:2:start();']);
          return callTools(toolCall('read_file', { path: 'main.ts', offset: 2 }, 'r'));
        },
        (request) => `Called at ${lastToolMessage(request)?.content.trim()}`,
      ],
    });
    const runtime = createRuntime({ model, agentDirs: [claudeCode], projectAgentDir: false, workspace: workspace.path });
    const result = await runtime.run('explorer', 'Where is start called?');
    await runtime.shutdown();
    expect(result).toMatchObject({ status: 'completed', output: 'Called at 2\tstart();' });
  });

  it('read TodoWrite and TodoRead as the todo tools', async () => {
    const dir = join(workspace.path, 'agents');
    mkdirSync(dir);
    writeFileSync(join(dir, 'planner.md'), agentFile('planner', ['tools: Read, TodoWrite, TodoRead']));
    const model = scriptedPerAgent({
      planner: [
        (request) => {
          expect(request.tools?.map((tool) => tool.name)).toEqual(['read_file', 'todo_write', 'todo_read']);
          return callTools(toolCall('todo_write', { items: [{ id: 'a', content: 'Read the spec', status: 'in_progress' }] }, 't'));
        },
        'Planned.',
      ],
    });
    const runtime = createRuntime({ model, agentDirs: [dir], projectAgentDir: false });
    expect(runtime.agentFileWarnings).toEqual([]);
    const result = await runtime.run('planner', 'Plan it.');
    await runtime.shutdown();
    expect(result).toMatchObject({ status: 'completed', output: 'Planned.' });
  });

  it('strictAgentFiles: true refuses a file that names a tool the runtime does not have, and keeps the model as written', async () => {
    const model = scriptedPerAgent({
      explorer: [
        (request) => {
          expect(request.model).toBe('sonnet');
          return 'Nothing to find.';
        },
      ],
    });
    const runtime = createRuntime({ model, agentDirs: [claudeCode], projectAgentDir: false, strictAgentFiles: true });
    expect(runtime.agentNames).toEqual(['explorer']);
    expect(runtime.agentFileWarnings).toEqual([]);
    expect(runtime.agentFileErrors.map((error) => [error.file.slice(claudeCode.length), error.field, error.code])).toEqual([
      ['code-reviewer.md', 'tools', 'invalid_agent_file'],
      ['doc-writer.md', 'tools', 'invalid_agent_file'],
    ]);
    expect(runtime.agentFileErrors[0]?.message).toMatch(/lists the tool "Bash", which is not in createRuntime\(\{ tools \}\) nor a built-in tool/);
    expect((await runtime.run('explorer', 'Find nothing.')).status).toBe('completed');
    await runtime.shutdown();
    expect(() => createRuntime({ agents: [], strictAgentFiles: 'yes' as unknown as boolean })).toThrow(/strictAgentFiles must be true or false/);
  });

  it('an agent in code may list Claude Code names too, but an unknown tool is still a ConfigurationError', async () => {
    const reader = defineAgent({ name: 'reader', description: 'Reads.', systemPrompt: 'Read.', tools: ['Read', 'LS', 'read_file'] });
    const model = scripted([
      (request) => {
        expect(request.tools?.map((tool) => tool.name)).toEqual(['read_file', 'list_files']);
        return 'Read.';
      },
    ]);
    const runtime = createRuntime({ model, agents: [reader], projectAgentDir: false });
    await runtime.run('reader', 'Read.');
    await runtime.shutdown();
    const bash = defineAgent({ name: 'runner', description: 'Runs.', systemPrompt: 'Run.', tools: ['Bash'] });
    expect(() => createRuntime({ model: new ScriptedModel([]), agents: [bash], projectAgentDir: false })).toThrow(/lists the tool "Bash"/);
  });

  it('warns of a field that looks like a misspelling of one troupe reads (it is ignored), not of another tool\'s field', async () => {
    const folder = join(workspace.path, 'agents');
    mkdirSync(folder);
    writeFileSync(join(folder, 'helper.md'), agentFile('helper', ['maxturns: 2', 'color: blue', 'permissionMode: plan']));
    const runtime = createRuntime({ model: new ScriptedModel(['Done.']), agentDirs: [folder], projectAgentDir: false });
    expect(runtime.agentFileWarnings).toEqual([
      {
        file: join(folder, 'helper.md'),
        field: 'frontmatter',
        message: `${join(folder, 'helper.md')}: the field "maxturns" is not one troupe reads, and is ignored (did you mean "maxTurns"?)`,
      },
    ]);
    expect((await runtime.run('helper', 'Go.')).status).toBe('completed');
    await runtime.shutdown();
  });

  it('a file edited to list an unknown tool is read again without it, and warned about once', async () => {
    const folder = join(workspace.path, 'agents');
    mkdirSync(folder);
    const file = (tools: string) => writeFileSync(join(folder, 'helper.md'), agentFile('helper', [`tools: ${tools}`]));
    file('Read');
    const model = new ScriptedModel((request) => (request.tools ?? []).map((tool) => tool.name).join(' '));
    const runtime = createRuntime({ model, agentDirs: [folder], projectAgentDir: false });
    expect((await runtime.run('helper', 'Go.')).output).toBe('read_file');
    file('Read, Task, Grep');
    for (let i = 0; i < 2; i++) expect((await runtime.run('helper', 'Go.')).output).toBe('read_file grep');
    expect(runtime.agentFileWarnings.map((warning) => warning.message)).toEqual([
      `${join(folder, 'helper.md')}: tools: skipped Task, which this runtime does not have; the agent runs without it (strictAgentFiles: true refuses the file instead)`,
    ]);
    await runtime.shutdown();
  });
});
