// The file tools in a runtime: given to the agents that list them, rooted at createRuntime({ workspace }), ordered by
// the planner when a turn reads and writes one file, and every refusal an error result the model sees.
import { readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, type TroupeEvent } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, scripted, scriptedPerAgent } from '../../stubs.js';
import { eachTestTempDir } from '../../support/tempDir.js';

const workspace = eachTestTempDir();
const editor = defineAgent({ name: 'editor', description: 'Edits files.', systemPrompt: 'Edit.', tools: ['read_file', 'write_file', 'edit_file'] });
const toolMessages = (request: { messages: readonly { role: string; content?: unknown }[] }) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => String(message.content));

/** The order in which calls started and ended, from the run's events. */
const timeline = (events: TroupeEvent[]) =>
  events.flatMap((event) => (event.type === 'tool.call' ? [`start ${event.callId}`] : event.type === 'tool.result' ? [`end ${event.callId}`] : []));

describe('file tools in a runtime', () => {
  it('a read and a write of one file in one turn run in the order the model wrote them', async () => {
    writeFileSync(join(workspace.path, 'notes.md'), 'old\n');
    const model = scripted([
      callTools(toolCall('read_file', { path: 'notes.md' }, 'read1'), toolCall('write_file', { path: './notes.md', content: 'new\n' }, 'write'), toolCall('read_file', { path: 'notes.md' }, 'read2')),
      (request) => {
        expect(toolMessages(request)).toEqual(['     1\told', 'Replaced notes.md: 1 lines, 4 bytes.', '     1\tnew']);
        return 'Rewrote the notes.';
      },
    ]);
    const runtime = createRuntime({ model, agents: [editor], projectAgentDir: false, workspace: workspace.path });
    const events = collect(runtime.events$);
    expect((await runtime.run('editor', 'Rewrite the notes.')).status).toBe('completed');
    await runtime.shutdown();
    expect(timeline(events)).toEqual(['start read1', 'end read1', 'start write', 'end write', 'start read2', 'end read2']);
    expect(readFileSync(join(workspace.path, 'notes.md'), 'utf8')).toBe('new\n');
  });

  it('two edits of one file in one turn, one through a symbolic link to it, run one after another and both stay', async () => {
    writeFileSync(join(workspace.path, 'notes.md'), 'one\ntwo\n');
    symlinkSync('notes.md', join(workspace.path, 'link.md'));
    const model = scripted([
      callTools(
        toolCall('edit_file', { path: 'notes.md', old_string: 'one', new_string: 'ONE' }, 'edit1'),
        toolCall('edit_file', { path: 'link.md', old_string: 'two', new_string: 'TWO' }, 'edit2'),
      ),
      (request) => {
        expect(toolMessages(request)).toEqual(['Edited notes.md: replaced 1 occurrence.', 'Edited link.md: replaced 1 occurrence.']);
        return 'Edited.';
      },
    ]);
    const runtime = createRuntime({ model, agents: [editor], projectAgentDir: false, workspace: workspace.path });
    const events = collect(runtime.events$);
    expect((await runtime.run('editor', 'Edit the notes.')).status).toBe('completed');
    await runtime.shutdown();
    expect(timeline(events)).toEqual(['start edit1', 'end edit1', 'start edit2', 'end edit2']);
    expect(readFileSync(join(workspace.path, 'notes.md'), 'utf8')).toBe('ONE\nTWO\n');
  });

  it('reads of different files and a write of another run side by side', async () => {
    for (const name of ['a.md', 'b.md']) writeFileSync(join(workspace.path, name), `${name}\n`);
    const model = scripted([
      callTools(toolCall('read_file', { path: 'a.md' }, 'a'), toolCall('read_file', { path: 'b.md' }, 'b'), toolCall('write_file', { path: 'c.md', content: 'c' }, 'c')),
      'Done.',
    ]);
    const runtime = createRuntime({ model, agents: [editor], projectAgentDir: false, workspace: workspace.path });
    const events = collect(runtime.events$);
    await runtime.run('editor', 'Read and write.');
    await runtime.shutdown();
    expect(timeline(events).slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
  });

  it('an escape attempt or a text not found is an error result; the agent goes on and completes', async () => {
    writeFileSync(join(workspace.path, 'a.ts'), 'const a = 1;\n');
    const model = scripted([
      callTools(toolCall('read_file', { path: '../../etc/passwd' }, 'escape'), toolCall('edit_file', { path: 'a.ts', old_string: 'const b', new_string: 'let b' }, 'edit')),
      (request) => {
        const [escape, edit] = request.messages.filter((message) => message.role === 'tool');
        expect(escape).toMatchObject({ isError: true, content: expect.stringMatching(/^Error: "\.\.\/\.\.\/etc\/passwd" is outside the workspace/) });
        expect(edit).toMatchObject({ isError: true, content: expect.stringMatching(/old_string was not found/) });
        return 'I could not do it.';
      },
    ]);
    const runtime = createRuntime({ model, agents: [editor], projectAgentDir: false, workspace: workspace.path });
    expect(await runtime.run('editor', 'Try.')).toMatchObject({ status: 'completed', output: 'I could not do it.' });
    await runtime.shutdown();
  });

  it('are given only to agents that list them', async () => {
    const plain = defineAgent({ name: 'plain', description: 'Plain.', systemPrompt: 'Hi.' });
    const model = scriptedPerAgent({
      plain: [
        (request) => {
          expect(request.tools ?? []).toEqual([]);
          return callTools(toolCall('read_file', { path: 'a.txt' }));
        },
        (request) => {
          expect(lastToolMessage(request)?.content).toMatch(/Tool "read_file" is not allowed for agent "plain"/);
          return 'No.';
        },
      ],
    });
    const runtime = createRuntime({ model, agents: [plain], projectAgentDir: false, workspace: workspace.path });
    expect((await runtime.run('plain', 'Read a.txt.')).status).toBe('completed');
    await runtime.shutdown();
  });

  it('without a workspace, each call says how to give one', async () => {
    const model = scripted([
      callTools(toolCall('read_file', { path: 'a.txt' })),
      (request) => {
        expect(lastToolMessage(request)).toMatchObject({ isError: true, content: expect.stringMatching(/read_file has no workspace to work in.*createRuntime\(\{ workspace: dir \}\)/) });
        return 'No workspace.';
      },
    ]);
    const runtime = createRuntime({ model, agents: [editor], projectAgentDir: false });
    expect((await runtime.run('editor', 'Read a.txt.')).status).toBe('completed');
    await runtime.shutdown();
  });

  it('the default general-purpose agent has them when the runtime has a workspace, and not otherwise', async () => {
    const offered: string[][] = [];
    const model = new ScriptedModel((request) => {
      offered.push((request.tools ?? []).map((tool) => tool.name));
      return 'Hello.';
    });
    for (const options of [{ workspace: workspace.path }, {}]) {
      const runtime = createRuntime({ model, projectAgentDir: false, ...options });
      await runtime.run('general-purpose', 'Hi.');
      await runtime.shutdown();
    }
    expect(offered).toEqual([['read_file', 'list_files', 'grep', 'write_file', 'edit_file'], []]);
  });

  it('refuses a workspace that is not a folder', () => {
    expect(() => createRuntime({ model: new ScriptedModel([]), workspace: join(workspace.path, 'missing') })).toThrow(/The workspace .* cannot be used/);
  });
});
