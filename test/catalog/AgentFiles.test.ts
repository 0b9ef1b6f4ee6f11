import { mkdirSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeEach, describe, expect, it } from 'vitest';
import { AgentFileError, AgentFiles, ConfigurationError, createRuntime } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { echoTool } from '../stubs.js';
import { agentFile, eachTestTempDir } from '../support/tempDir.js';

const dir = eachTestTempDir();
let agents: string;

beforeEach(() => {
  agents = join(dir.path, 'agents');
  mkdirSync(agents);
});

const write = (name: string, text: string, folder = agents) => writeFileSync(join(folder, `${name}.md`), text);

describe('AgentFiles', () => {
  it('loads the good files of a folder and refuses a bad one, naming its file and field', () => {
    write('reviewer', agentFile('reviewer', ['tools: read_file, grep']));
    write('writer', agentFile('writer'));
    write('broken', agentFile('broken', ['temperature: 9']));

    const scan = new AgentFiles([agents]).scan();

    expect(scan.agents.map((agent) => agent.definition.name).sort()).toEqual(['reviewer', 'writer']);
    expect(scan.errors).toHaveLength(1);
    expect(scan.errors[0]).toMatchObject({ file: join(agents, 'broken.md'), field: 'temperature' });
  });

  it('refuses a file whose name field does not match its file name', () => {
    write('alpha', agentFile('beta'));
    expect(new AgentFiles([agents]).scan().errors[0]).toMatchObject({ field: 'name', message: expect.stringMatching(/"beta" does not match the file name alpha\.md/) });
  });

  it('lets a later folder win on a name', () => {
    const second = join(dir.path, 'more');
    mkdirSync(second);
    write('writer', agentFile('writer', [], 'First.'));
    write('writer', agentFile('writer', [], 'Second.'), second);
    expect(new AgentFiles([agents, second]).load('writer')?.definition.systemPrompt).toBe('Second.');
  });

  it('warns of a file that is not used: another folder has its agent, or the agent is given in code', async () => {
    const second = join(dir.path, 'more');
    mkdirSync(second);
    write('writer', agentFile('writer', [], 'First.'));
    write('writer', agentFile('writer', [], 'Second.'), second);
    write('reviewer', agentFile('reviewer', [], 'From the file.'));
    const reviewer = { name: 'reviewer', description: 'Reviews.', systemPrompt: 'From code.' };
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [reviewer], agentDirs: [agents, second], projectAgentDir: false });

    expect(runtime.agentFileWarnings.map(({ file, field, message }) => ({ file, field, message }))).toEqual([
      { file: join(agents, 'writer.md'), field: 'name', message: `${join(agents, 'writer.md')} is not used: ${join(second, 'writer.md')} defines the same agent, and a later folder wins.` },
      { file: join(agents, 'reviewer.md'), field: 'name', message: `${join(agents, 'reviewer.md')} is not used: an agent named "reviewer" is given in code, which wins over a file.` },
    ]);
    expect(runtime.agentFileErrors).toEqual([]);
    await runtime.shutdown();
  });

  it('names the file used in each warning: the last folder of three, or the agent given in code over every folder', async () => {
    const [second, third] = ['more', 'most'].map((folder) => join(dir.path, folder));
    for (const folder of [second!, third!]) mkdirSync(folder);
    for (const folder of [agents, second!, third!]) write('writer', agentFile('writer', [], `In ${folder}.`), folder);
    for (const folder of [agents, second!]) write('reviewer', agentFile('reviewer', [], `In ${folder}.`), folder);
    const reviewer = { name: 'reviewer', description: 'Reviews.', systemPrompt: 'From code.' };
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [reviewer], agentDirs: [agents, second!, third!], projectAgentDir: false });

    const inCode = (file: string) => `${file} is not used: an agent named "reviewer" is given in code, which wins over a file.`;
    const byLast = (file: string) => `${file} is not used: ${join(third!, 'writer.md')} defines the same agent, and a later folder wins.`;
    expect(runtime.agentFileWarnings.map(({ message }) => message).sort()).toEqual(
      [byLast(join(agents, 'writer.md')), byLast(join(second!, 'writer.md')), inCode(join(agents, 'reviewer.md')), inCode(join(second!, 'reviewer.md'))].sort(),
    );
    await runtime.shutdown();
  });

  it.each([
    ['a parent path', '../secret'],
    ['an absolute path', '/etc/passwd'],
    ['encoded dots', '%2e%2e%2fsecret'],
    ['a dot-dot alone', '..'],
    ['a backslash path', '..\\secret'],
    ['an empty name', ''],
  ])('never reads outside its folder: %s is refused', (_label, name) => {
    writeFileSync(join(dir.path, 'secret.md'), agentFile('secret'));
    expect(() => new AgentFiles([agents]).load(name)).toThrow(AgentFileError);
  });

  it('refuses a file that is a link pointing outside its folder, and accepts one that stays inside', () => {
    writeFileSync(join(dir.path, 'outside.md'), agentFile('outside'));
    symlinkSync(join(dir.path, 'outside.md'), join(agents, 'outside.md'));
    write('inside-target', agentFile('inside-target'));
    mkdirSync(join(agents, 'sub'));
    writeFileSync(join(agents, 'sub', 'real.md'), agentFile('linked'));
    symlinkSync(join(agents, 'sub', 'real.md'), join(agents, 'linked.md'));

    const files = new AgentFiles([agents]);

    expect(() => files.load('outside')).toThrow(/link that leads outside/);
    expect(files.load('linked')?.definition.name).toBe('linked');
    expect(files.scan().errors.map((error) => error.field)).toEqual(['path']);
  });

  it('caches a parsed file and reads it again once its size or time changes', () => {
    write('writer', agentFile('writer', [], 'Version one.'));
    const files = new AgentFiles([agents]);
    const first = files.load('writer');
    expect(files.load('writer')).toBe(first);

    write('writer', agentFile('writer', [], 'Version two, longer.'));
    const second = files.load('writer');

    expect(second).not.toBe(first);
    expect(second?.definition.systemPrompt).toBe('Version two, longer.');
    const sameSize = agentFile('writer', [], 'Version TWO, longer.');
    write('writer', sameSize);
    utimesSync(join(agents, 'writer.md'), new Date(), new Date(Date.now() + 5_000));
    expect(files.load('writer')?.definition.systemPrompt).toBe('Version TWO, longer.');
  });

  it('refuses a folder that does not exist when it was asked for, and skips an optional one', () => {
    expect(() => new AgentFiles([join(dir.path, 'nope')])).toThrow(ConfigurationError);
    expect(new AgentFiles([], [join(dir.path, 'nope')]).dirs).toEqual([]);
  });
});

describe('a runtime with agent files', () => {
  it('runs file agents, reports refused files, and loads an agent added or changed after it started', async () => {
    write('writer', agentFile('writer', [], 'You write.'));
    write('bad', agentFile('bad', ['tools: no_such_tool']));
    const model = new ScriptedModel((request) => `${request.agentName}: ${request.messages[0]?.content}`);
    // Strict: a file that lists a tool the runtime does not have is refused (by default the tool is skipped).
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false, strictAgentFiles: true });

    expect(runtime.agentNames).toEqual(['writer']);
    expect(runtime.agentFileErrors.map((error) => [error.file, error.field])).toEqual([[join(agents, 'bad.md'), 'tools']]);
    expect((await runtime.run('writer', 'Go.')).output).toBe('writer: You write.');

    write('writer', agentFile('writer', [], 'You write, changed.'));
    write('late', agentFile('late', [], 'You came late.'));
    expect((await runtime.run('writer', 'Go.')).output).toBe('writer: You write, changed.');
    expect((await runtime.run('late', 'Go.')).output).toBe('late: You came late.');
    expect(() => runtime.spawn('../writer', 'Go.')).toThrow(AgentFileError);
    await runtime.shutdown();
  });

  it('keeps running the last good version of an edited file that is refused, and reports the refusal once', async () => {
    write('writer', agentFile('writer', [], 'Good version.'));
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({ model, agentDirs: [agents], projectAgentDir: false, strictAgentFiles: true });
    expect((await runtime.run('writer', 'Go.')).output).toBe('Good version.');

    write('writer', agentFile('writer', ['temperature: 9'], 'Broken version.'));
    for (let i = 0; i < 3; i++) expect((await runtime.run('writer', 'Go.')).output).toBe('Good version.');
    write('writer', agentFile('writer', ['tools: no_such_tool'], 'Broken again.'));
    expect((await runtime.run('writer', 'Go.')).output).toBe('Good version.');

    expect(runtime.agentFileErrors.map((error) => error.field)).toEqual(['temperature', 'tools']);
    await runtime.shutdown();
  });

  it('agents given in code win over files of the same name', async () => {
    write('writer', agentFile('writer', [], 'From the file.'));
    const model = new ScriptedModel((request) => String(request.messages[0]?.content));
    const runtime = createRuntime({
      model,
      agentDirs: [agents],
      projectAgentDir: false,
      agents: [{ name: 'writer', description: 'W.', systemPrompt: 'From code.' }],
    });
    expect((await runtime.run('writer', 'Go.')).output).toBe('From code.');
    await runtime.shutdown();
  });

  it('has a general-purpose agent, with every tool of the runtime, when none is defined', async () => {
    const model = new ScriptedModel((request) => request.tools.map((tool) => tool.name).join(',') || 'no tools');
    const runtime = createRuntime({ model, tools: [echoTool().tool], projectAgentDir: false });
    expect(runtime.agentNames).toEqual(['general-purpose']);
    expect((await runtime.run('general-purpose', 'Help.')).output).toBe('echo');
    await runtime.shutdown();
  });
});
