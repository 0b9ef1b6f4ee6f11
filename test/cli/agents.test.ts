// `troupe agents list | show`, on a real folder of agent files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { troupe } from '../support/cli.js';
import { agentFile, tempDir } from '../support/tempDir.js';

const scratch = tempDir();
const team = join(scratch.path, 'team');

beforeAll(() => {
  mkdirSync(team);
  writeFileSync(join(team, 'researcher.md'), agentFile('researcher', ['tools: read_notes, grep', 'role: read', 'maxTurns: 4'], 'You research.\nAnswer in one sentence.'));
  writeFileSync(join(team, 'editor.md'), agentFile('editor', [], 'You edit.'));
  writeFileSync(join(team, 'broken.md'), agentFile('broken', ['temperature: hot']));
});
afterAll(() => scratch.remove());

describe.concurrent('troupe agents', () => {
  it('list: one row an agent, by name, with its description and tools; a refused file is one warning line', async () => {
    const { code, stdout, stderr } = await troupe(['agents', 'list', '--agents', team]);

    expect(code).toBe(0);
    expect(stdout).toBe(
      ['NAME        DESCRIPTION      TOOLS', 'editor      The editor.      -', 'researcher  The researcher.  read_notes, grep', ''].join('\n'),
    );
    expect(stderr).toMatch(/^troupe: warning: [^\n]*broken\.md[^\n]*temperature[^\n]*\n$/);
  });

  it('list warns of a file that a later folder replaces, and lists the agent once, from the later folder', async () => {
    const more = join(scratch.path, 'more');
    mkdirSync(more);
    writeFileSync(join(more, 'editor.md'), agentFile('editor', [], 'You edit harder.'));
    const { code, stdout, stderr } = await troupe(['agents', 'list', '--agents', team, '--agents', more, '--json']);
    expect(code).toBe(0);
    expect((JSON.parse(stdout) as { name: string; file: string }[]).filter((agent) => agent.name === 'editor').map((agent) => agent.file)).toEqual([join(more, 'editor.md')]);
    expect(stderr).toContain(`troupe: warning: ${join(team, 'editor.md')} is not used: ${join(more, 'editor.md')} defines the same agent, and a later folder wins.\n`);
  });

  it('list --json: the definitions with their files', async () => {
    const { code, stdout } = await troupe(['agents', 'list', '--agents', team, '--json']);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual([
      expect.objectContaining({ name: 'editor', description: 'The editor.', systemPrompt: 'You edit.', file: join(team, 'editor.md') }),
      expect.objectContaining({ name: 'researcher', tools: ['read_notes', 'grep'], role: 'read', maxTurns: 4 }),
    ]);
  });

  it('list says where it looked when there are no agent files', async () => {
    const empty = join(scratch.path, 'empty');
    mkdirSync(empty);
    const { code, stdout } = await troupe(['agents', 'list'], { cwd: empty });
    expect({ code, stdout }).toEqual({ code: 0, stdout: 'No agent files in ./agents (not there): add <name>.md files, or pass --agents DIR.\n' });
  });

  it('show: the fields, the file and the system prompt', async () => {
    const { code, stdout } = await troupe(['agents', 'show', 'researcher', '--agents', team], { cwd: scratch.path });
    expect(code).toBe(0);
    expect(stdout).toBe(
      [
        'researcher',
        'The researcher.',
        '',
        'file:      team/researcher.md',
        'tools:     read_notes, grep',
        'maxTurns:  4',
        'role:      read',
        '',
        'You research.',
        'Answer in one sentence.',
        '',
      ].join('\n'),
    );
  });

  it('show <unknown agent>: one line naming the agents there, exit 2', async () => {
    const { code, stdout, stderr } = await troupe(['agents', 'show', 'reseacher', '--agents', team]);
    expect({ code, stdout, stderr }).toEqual({ code: 2, stdout: '', stderr: 'troupe: unknown agent "reseacher": the agents here are editor, researcher\n' });
  });

  it('show <a refused file>: its error in one line, exit 2', async () => {
    const { code, stderr } = await troupe(['agents', 'show', 'broken', '--agents', team]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^troupe: [^\n]*broken\.md[^\n]*temperature[^\n]*\n$/);
  });

  it('an --agents folder that is not there: one line, exit 2', async () => {
    const { code, stderr } = await troupe(['agents', 'list', '--agents', join(scratch.path, 'nowhere')]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^troupe: The agent folder \S+nowhere cannot be used: [^\n]+\n$/);
  });
});
