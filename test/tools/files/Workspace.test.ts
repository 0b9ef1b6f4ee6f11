// Nothing reaches outside the workspace: paths that climb out, absolute paths elsewhere, symbolic links that lead
// out (to a file, to a folder, through a parent, dangling) are refused with WorkspaceEscapeError, by every file tool.
import { mkdirSync, readFileSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { ConfigurationError, ToolError, Workspace, WorkspaceEscapeError } from 'troupe';
import { tempDir } from '../../support/tempDir.js';
import { call, toolsAt } from './fileToolCall.js';

let scratch: ReturnType<typeof tempDir>;
let root: string;
let outside: string;

beforeEach(() => {
  scratch = tempDir();
  root = join(scratch.path, 'ws');
  outside = join(scratch.path, 'outside');
  mkdirSync(join(root, 'src'), { recursive: true });
  mkdirSync(outside);
  writeFileSync(join(root, 'src', 'a.ts'), 'export const a = 1;\n');
  writeFileSync(join(outside, 'secret.txt'), 'the secret\n');
  symlinkSync(join(outside, 'secret.txt'), join(root, 'secret-link.txt'));
  symlinkSync(outside, join(root, 'out'));
  symlinkSync(join(outside, 'not-yet.txt'), join(root, 'dangling.txt'));
  symlinkSync(join(root, 'src', 'a.ts'), join(root, 'inner-link.ts'));
});
afterEach(() => scratch.remove());

const escapes = ['../outside/secret.txt', 'src/../../outside/secret.txt', '/etc/passwd', 'secret-link.txt', 'out/secret.txt', 'out', 'dangling.txt'];

describe('Workspace', () => {
  it('must be an existing folder', () => {
    expect(() => Workspace.open(join(root, 'missing'))).toThrow(ConfigurationError);
    expect(() => Workspace.open(join(root, 'src', 'a.ts'))).toThrow(ConfigurationError);
    expect(() => Workspace.open('')).toThrow(ConfigurationError);
  });

  it('locates paths inside it, relative or absolute, through links that stay inside, and files not made yet', async () => {
    const workspace = Workspace.open(root);
    await expect(workspace.locate('./src/a.ts', 'read_file')).resolves.toMatchObject({ relative: 'src/a.ts', exists: true });
    await expect(workspace.locate(join(root, 'src/a.ts'), 'read_file')).resolves.toMatchObject({ relative: 'src/a.ts' });
    await expect(workspace.locate('src/x/../a.ts', 'read_file')).resolves.toMatchObject({ relative: 'src/a.ts' });
    await expect(workspace.locate('inner-link.ts', 'read_file')).resolves.toMatchObject({
      relative: 'inner-link.ts',
      real: join(workspace.realRoot, 'src', 'a.ts'),
    });
    await expect(workspace.locate('new/deep/b.ts', 'write_file')).resolves.toMatchObject({ relative: 'new/deep/b.ts', exists: false });
    await expect(workspace.locate('.', 'list_files')).resolves.toMatchObject({ relative: '.' });
  });

  it.each(escapes)('refuses %s with WorkspaceEscapeError (code outside_workspace)', async (path) => {
    const refusal = await Workspace.open(root).locate(path, 'read_file').catch((error: unknown) => error);
    expect(refusal).toBeInstanceOf(WorkspaceEscapeError);
    expect(refusal).toMatchObject({ code: 'outside_workspace', fault: 'model', path });
    expect((refusal as Error).message).not.toContain(outside); // where a link leads is not told
  });

  it('says in words, relative to it, why a path below a file or through a link loop cannot be used', async () => {
    symlinkSync('loop-b', join(root, 'loop-a'));
    symlinkSync('loop-a', join(root, 'loop-b'));
    const tools = toolsAt(root);

    const below = await call(tools.write_file!, { path: 'src/a.ts/b.ts', content: 'x' });
    const loop = await call(tools.read_file!, { path: 'loop-a/x.txt' });

    expect(below).toMatchObject({ isError: true, text: 'src/a.ts/b.ts: a part of the path is a file, not a folder.' });
    expect(loop).toMatchObject({ isError: true, text: 'loop-a/x.txt: its symbolic links form a loop.' });
    expect(below.error).toBeInstanceOf(ToolError);
  });

  it('refuses a new file below a symbolic link to a folder outside', async () => {
    await expect(Workspace.open(root).locate('out/new/file.txt', 'write_file')).rejects.toMatchObject({ reason: 'symlink' });
  });

  it('gives planner targets relative to it', () => {
    const workspace = Workspace.open(root);
    expect(workspace.target('./src/a.ts')).toBe('src/a.ts');
    expect(workspace.target(join(root, 'src', 'a.ts'))).toBe('src/a.ts');
    expect(workspace.target('src//lib/')).toBe('src/lib');
    expect(workspace.target('.')).toBe('.');
    expect(workspace.target('../x')).toBe('../x');
  });

  it('gives a link inside it the target of the file or folder it points to, and a link that leads out its own', () => {
    symlinkSync(join(root, 'src'), join(root, 'code'));
    const workspace = Workspace.open(root);
    expect(workspace.target('inner-link.ts')).toBe('src/a.ts');
    expect(workspace.target('code/a.ts')).toBe('src/a.ts');
    expect(workspace.target('code/new/b.ts')).toBe('src/new/b.ts');
    expect(workspace.target('out/secret.txt')).toBe('out/secret.txt');
    expect(workspace.target('dangling.txt')).toBe('dangling.txt');
  });
});

describe('every file tool', () => {
  it.each(escapes)('refuses %s as an error result, reading and writing nothing outside', async (path) => {
    const tools = toolsAt(root);
    const seen = [
      await call(tools.read_file!, { path }),
      await call(tools.write_file!, { path, content: 'overwritten' }),
      await call(tools.edit_file!, { path, old_string: 'the secret', new_string: 'changed' }),
      await call(tools.list_files!, { path }),
      await call(tools.grep!, { pattern: 'secret', path }),
    ];
    for (const result of seen) {
      expect(result.isError).toBe(true);
      expect(result.error).toBeInstanceOf(WorkspaceEscapeError);
      expect(result.text).not.toContain('the secret');
    }
    expect(readFileSync(join(outside, 'secret.txt'), 'utf8')).toBe('the secret\n');
    expect(existsSync(join(outside, 'not-yet.txt'))).toBe(false);
  });

  it('refuses globs that climb out or are absolute', async () => {
    const tools = toolsAt(root);
    for (const pattern of ['../**', '../outside/*', '/etc/*', 'src/../../**']) {
      expect((await call(tools.list_files!, { pattern })).error).toBeInstanceOf(WorkspaceEscapeError);
      expect((await call(tools.grep!, { pattern: 'secret', glob: pattern })).error).toBeInstanceOf(WorkspaceEscapeError);
    }
  });

  it('does not follow symbolic links when listing or searching the workspace', async () => {
    const tools = toolsAt(root);
    const listed = await call(tools.list_files!, {});
    expect(listed.text.split('\n')).toEqual(['src/a.ts']);
    expect((await call(tools.grep!, { pattern: 'secret' })).text).toBe('No line matches /secret/.');
  });

  it('says how to give a workspace when the runtime has none', async () => {
    const tools = toolsAt(undefined);
    const seen = await call(tools.read_file!, { path: 'a.txt' });
    expect(seen).toMatchObject({ isError: true, error: expect.any(ConfigurationError) });
    expect(seen.text).toMatch(/read_file has no workspace.*createRuntime\(\{ workspace: dir \}\)/);
    for (const tool of Object.values(tools)) expect((await call(tool, { path: 'a', pattern: 'x', content: '', old_string: 'a', new_string: 'b' })).isError).toBe(true);
  });
});
