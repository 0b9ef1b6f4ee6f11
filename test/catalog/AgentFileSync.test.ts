import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { agentFile, eachTestTempDir } from '../support/tempDir.js';

const dir = eachTestTempDir();
let agents: string;

beforeEach(() => {
  agents = join(dir.path, 'agents');
  mkdirSync(agents);
});

const write = (name: string, text: string) => writeFileSync(join(agents, `${name}.md`), text);

describe('file agents and their sub-agents', () => {
  it('refuses a file that lists an unknown sub-agent, when loaded and when edited, keeping the last good version', async () => {
    write('lead', agentFile('lead', ['subagents: ghost']));
    write('writer', agentFile('writer', [], 'Good version.'));
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false });

    expect(runtime.agentNames).toEqual(['writer']);
    expect(runtime.agentFileErrors.map((error) => [error.file, error.field])).toEqual([[join(agents, 'lead.md'), 'subagents']]);

    // Refused when loaded, it is not run by name either: its spawn fails with why.
    expect(() => runtime.spawn('lead', 'Go.')).toThrow(/lists "ghost" in subagents, but no agent has that name/);
    expect(runtime.agentNames).toEqual(['writer']);

    write('writer', agentFile('writer', ['subagents: ghost'], 'Bad version.'));
    expect((await runtime.run('writer', 'Go.')).output).toBe('Good version.');
    expect(runtime.agentFileErrors.map((error) => [error.file, error.field])).toEqual([
      [join(agents, 'lead.md'), 'subagents'],
      [join(agents, 'writer.md'), 'subagents'],
    ]);
    await runtime.shutdown();
  });

  it('refuses a file added during the run that lists a sub-agent no agent and no file has, when it is spawned', async () => {
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false, agents: [{ name: 'main', description: 'M.', systemPrompt: 'M.' }] });

    write('boss', agentFile('boss', ['subagents: ghost'], 'The boss.'));
    write('chief', agentFile('chief', ['subagents: Ghost Writer'], 'The chief.'));

    expect(() => runtime.spawn('boss', 'Go.')).toThrow(/lists "ghost" in subagents, but no agent has that name/);
    expect(() => runtime.spawn('chief', 'Go.')).toThrow(/lists "Ghost Writer" in subagents, but no agent has that name/);
    expect(runtime.agentNames).toEqual(['main']);
    await runtime.shutdown();
  });

  it('loads a file added during the run that lists sub-agents whose files are read later', async () => {
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false, agents: [{ name: 'main', description: 'M.', systemPrompt: 'M.' }] });

    write('boss', agentFile('boss', ['subagents: helper'], 'The boss.'));
    write('helper', agentFile('helper', [], 'The helper.'));

    expect((await runtime.run('boss', 'Go.')).output).toBe('The boss.');
    expect(runtime.agentNames).toEqual(['main', 'boss']);
    expect((await runtime.run('helper', 'Go.')).output).toBe('The helper.');
    expect(runtime.agentFileErrors).toEqual([]);
    await runtime.shutdown();
  });
});
