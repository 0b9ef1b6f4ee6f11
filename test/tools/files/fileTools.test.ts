// The file tools on real files in a temporary workspace: ranges and cuts of read_file, listing, grep, atomic writes
// that make folders, and edits that refuse a text not found or not unique.
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, truncateSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { FILE_LIMITS, fileTools, schedule, Workspace } from 'troupe';
import { eachTestTempDir } from '../../support/tempDir.js';
import { call, toolsAt } from './fileToolCall.js';

const folder = eachTestTempDir();
const write = (path: string, text: string | Buffer) => {
  mkdirSync(join(folder.path, path, '..'), { recursive: true });
  writeFileSync(join(folder.path, path), text);
};
const read = (path: string) => readFileSync(join(folder.path, path), 'utf8');
const lines = (count: number, from = 1) => Array.from({ length: count }, (_, i) => `line ${i + from}`).join('\n');

describe('read_file', () => {
  it('numbers the lines of a whole file', async () => {
    write('a.txt', 'alpha\nbeta\n');
    expect(await call(toolsAt(folder.path).read_file!, { path: 'a.txt' })).toEqual({ text: '     1\talpha\n     2\tbeta', isError: false });
  });

  it('reads a range with offset and limit, and says where to read on', async () => {
    write('long.txt', lines(50));
    const seen = await call(toolsAt(folder.path).read_file!, { path: 'long.txt', offset: 10, limit: 3 });
    expect(seen.text.split('\n').slice(0, 3)).toEqual(['    10\tline 10', '    11\tline 11', '    12\tline 12']);
    expect(seen.text).toMatch(/\[long\.txt \(.+\) goes on: lines 10-12 shown\. Read on with offset: 13\.\]$/);
    const last = await call(toolsAt(folder.path).read_file!, { path: 'long.txt', offset: 49 });
    expect(last.text).toBe('    49\tline 49\n    50\tline 50');
  });

  it('cuts a long file at the line limit, and a long line at the character limit', async () => {
    write('big.txt', lines(FILE_LIMITS.readLines + 500));
    const seen = await call(toolsAt(folder.path).read_file!, { path: 'big.txt', limit: 1_000_000 });
    expect(seen.text.split('\n')).toHaveLength(FILE_LIMITS.readLines + 1);
    expect(seen.text).toMatch(new RegExp(`Read on with offset: ${FILE_LIMITS.readLines + 1}\\.\\]$`));
    write('wide.txt', 'x'.repeat(FILE_LIMITS.lineChars + 10));
    expect((await call(toolsAt(folder.path).read_file!, { path: 'wide.txt' })).text).toMatch(/x… \[line cut at 2000 characters\]$/);
  });

  it('reads the start of a file of one line longer than a string may be (600 MB, sparse), keeping only what it shows', async () => {
    // readline gathered the whole line: past V8's longest string it threw out of reach of the call, an uncaught exception.
    write('huge.min.js', `${'a'.repeat(10_000)}`);
    truncateSync(join(folder.path, 'huge.min.js'), 600 * 1024 * 1024);

    const seen = await call(toolsAt(folder.path).read_file!, { path: 'huge.min.js' });

    expect(seen).toEqual({ isError: false, text: `     1\t${'a'.repeat(FILE_LIMITS.lineChars)}… [line cut at ${FILE_LIMITS.lineChars} characters]` });
  });

  it('ends lines at \\n and drops a \\r before it, also across the chunks a file is read in', async () => {
    write('crlf.txt', `one\r\n${'b'.repeat(70_000)}\r\nthree`);

    const seen = await call(toolsAt(folder.path).read_file!, { path: 'crlf.txt' });

    expect(seen.text.split('\n').map((line) => line.slice(0, 12))).toEqual(['     1\tone', '     2\tbbbbb', '     3\tthree']);
    expect(seen.text).not.toContain('\r');
  });

  it('cuts a file at the byte limit before the line limit when its lines are long', async () => {
    const line = 'y'.repeat(1_000);
    write('heavy.txt', Array.from({ length: 1_000 }, () => line).join('\n'));
    const seen = await call(toolsAt(folder.path).read_file!, { path: 'heavy.txt' });
    expect(Buffer.byteLength(seen.text)).toBeLessThanOrEqual(FILE_LIMITS.readBytes + 200);
    expect(seen.text).toMatch(/goes on: lines 1-\d+ shown\. Read on with offset: \d+\.\]$/);
  });

  it('says when a file is empty or an offset is past its end', async () => {
    write('empty.txt', '');
    write('short.txt', 'one\ntwo\n');
    expect((await call(toolsAt(folder.path).read_file!, { path: 'empty.txt' })).text).toBe('(empty.txt is empty)');
    expect((await call(toolsAt(folder.path).read_file!, { path: 'short.txt', offset: 9 })).text).toBe('(short.txt has 2 lines; offset 9 is past its end)');
  });

  it('refuses a named pipe instead of waiting on it for ever', async () => {
    execFileSync('mkfifo', [join(folder.path, 'pipe')]);
    expect(await call(toolsAt(folder.path).read_file!, { path: 'pipe' })).toMatchObject({ isError: true, text: 'pipe is not a regular file.' });
    expect((await call(toolsAt(folder.path).grep!, { pattern: 'x' })).text).toBe('No line matches /x/.');
    expect((await call(toolsAt(folder.path).edit_file!, { path: 'pipe', old_string: 'a', new_string: 'b' })).text).toBe('pipe: is not a regular file.');
  });

  it('refuses binary files, folders and missing files with a note', async () => {
    write('image.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0x01, 0x02]));
    mkdirSync(join(folder.path, 'dir'));
    const tools = toolsAt(folder.path);
    expect(await call(tools.read_file!, { path: 'image.png' })).toEqual({ text: 'image.png is a binary file (7 bytes); it is not shown.', isError: true });
    expect(await call(tools.read_file!, { path: 'dir' })).toMatchObject({ isError: true, text: expect.stringMatching(/dir is a folder/) });
    expect(await call(tools.read_file!, { path: 'nope.txt' })).toMatchObject({ isError: true, text: expect.stringMatching(/nope\.txt does not exist/) });
  });
});

describe('list_files', () => {
  it('lists the files that match a glob, sorted, relative to the workspace; .git and node_modules are skipped', async () => {
    for (const path of ['src/b.ts', 'src/a.ts', 'src/lib/c.ts', 'docs/x.md', '.github/ci.yml', '.git/HEAD', 'node_modules/p/index.js']) write(path, 'x');
    const tools = toolsAt(folder.path);
    expect((await call(tools.list_files!, {})).text.split('\n')).toEqual(['.github/ci.yml', 'docs/x.md', 'src/a.ts', 'src/b.ts', 'src/lib/c.ts']);
    expect((await call(tools.list_files!, { pattern: '**/*.ts' })).text.split('\n')).toEqual(['src/a.ts', 'src/b.ts', 'src/lib/c.ts']);
    expect((await call(tools.list_files!, { pattern: '*.ts', path: 'src' })).text.split('\n')).toEqual(['src/a.ts', 'src/b.ts']);
    expect((await call(tools.list_files!, { pattern: '*.rs' })).text).toBe('No files match *.rs.');
  });

  it('gives at most the limit, with a note', async () => {
    for (let i = 0; i < 5; i++) write(`f${i}.txt`, 'x');
    const few = fileTools(Workspace.open(folder.path), { listEntries: 2 }).find((tool) => tool.name === 'list_files')!;
    expect((await call(few, {})).text).toBe('f0.txt\nf1.txt\n[3 more files not shown; narrow the pattern or the path.]');
  });
});

describe('grep', () => {
  it('gives path:line:text for the lines that match, in files chosen by path and glob', async () => {
    write('src/a.ts', 'const a = 1;\n// TODO: more\n');
    write('src/b.md', 'TODO in markdown\n');
    write('docs/c.ts', 'todo lower\n');
    const tools = toolsAt(folder.path);
    expect((await call(tools.grep!, { pattern: 'TODO' })).text).toBe('src/a.ts:2:// TODO: more\nsrc/b.md:1:TODO in markdown');
    expect((await call(tools.grep!, { pattern: 'todo', ignore_case: true, glob: '**/*.ts' })).text).toBe('docs/c.ts:1:todo lower\nsrc/a.ts:2:// TODO: more');
    expect((await call(tools.grep!, { pattern: 'TODO', path: 'src', glob: '*.md' })).text).toBe('src/b.md:1:TODO in markdown');
    expect((await call(tools.grep!, { pattern: 'const \\w+', path: 'src/a.ts' })).text).toBe('src/a.ts:1:const a = 1;');
    expect((await call(tools.grep!, { pattern: 'absent' })).text).toBe('No line matches /absent/.');
  });

  it('caps the matches, skips binary files, and refuses a bad regular expression', async () => {
    write('many.txt', lines(FILE_LIMITS.grepMatches + 5));
    write('blob.bin', Buffer.from('line 1\0binary'));
    const seen = await call(toolsAt(folder.path).grep!, { pattern: '^line' });
    expect(seen.text.split('\n')).toHaveLength(FILE_LIMITS.grepMatches + 1);
    expect(seen.text).toMatch(/\[5 more matching lines not shown; narrow the pattern, path or glob\. 1 binary or very large files not searched\.\]$/);
    expect(await call(toolsAt(folder.path).grep!, { pattern: '(' })).toMatchObject({ isError: true, text: expect.stringMatching(/not a valid regular expression/) });
  });
});

describe('write_file', () => {
  it('makes missing folders, writes atomically, and replaces an existing file keeping its permissions', async () => {
    const tools = toolsAt(folder.path);
    expect((await call(tools.write_file!, { path: 'new/deep/notes.md', content: '# Notes\nfirst\n' })).text).toBe('Made new/deep/notes.md: 2 lines, 14 bytes.');
    expect(read('new/deep/notes.md')).toBe('# Notes\nfirst\n');
    chmodSync(join(folder.path, 'new/deep/notes.md'), 0o640);
    expect((await call(tools.write_file!, { path: 'new/deep/notes.md', content: 'second' })).text).toBe('Replaced new/deep/notes.md: 1 lines, 6 bytes.');
    expect(read('new/deep/notes.md')).toBe('second');
    expect(statSync(join(folder.path, 'new/deep/notes.md')).mode & 0o777).toBe(0o640);
    expect(readdirSync(join(folder.path, 'new/deep'))).toEqual(['notes.md']); // no temporary file left
  });

  it('writes through a link inside the workspace to the file it points to, and refuses a folder', async () => {
    write('src/a.ts', 'old');
    symlinkSync(join(folder.path, 'src/a.ts'), join(folder.path, 'link.ts'));
    await call(toolsAt(folder.path).write_file!, { path: 'link.ts', content: 'new' });
    expect(read('src/a.ts')).toBe('new');
    expect(await call(toolsAt(folder.path).write_file!, { path: 'src', content: 'x' })).toMatchObject({ isError: true, text: 'src is a folder, not a file.' });
  });
});

describe('edit_file', () => {
  it('replaces a text that occurs once', async () => {
    write('a.ts', 'const a = 1;\nconst b = 2;\n');
    expect((await call(toolsAt(folder.path).edit_file!, { path: 'a.ts', old_string: 'b = 2', new_string: 'b = 3' })).text).toBe('Edited a.ts: replaced 1 occurrence.');
    expect(read('a.ts')).toBe('const a = 1;\nconst b = 3;\n');
  });

  it('refuses a text not found, or found more than once, and leaves the file as it was', async () => {
    write('a.ts', 'x = 1;\nx = 1;\n');
    const tools = toolsAt(folder.path);
    expect(await call(tools.edit_file!, { path: 'a.ts', old_string: 'y = 1', new_string: 'y = 2' })).toEqual({
      isError: true,
      text: 'a.ts: old_string was not found. Read the file again and copy the text exactly, whitespace included.',
      error: expect.objectContaining({ code: 'tool_error', toolName: 'edit_file' }),
    });
    expect((await call(tools.edit_file!, { path: 'a.ts', old_string: 'x = 1', new_string: 'x = 2' })).text).toBe(
      'a.ts: old_string occurs 2 times. Give more of the surrounding text to make it unique, or set replace_all: true.',
    );
    expect(read('a.ts')).toBe('x = 1;\nx = 1;\n');
  });

  it('replaces every occurrence with replace_all, and takes $ patterns in the new text literally', async () => {
    write('a.ts', 'x = 1;\nx = 1;\n');
    expect((await call(toolsAt(folder.path).edit_file!, { path: 'a.ts', old_string: 'x', new_string: '$&y', replace_all: true })).text).toBe('Edited a.ts: replaced 2 occurrences.');
    expect(read('a.ts')).toBe('$&y = 1;\n$&y = 1;\n');
    await call(toolsAt(folder.path).edit_file!, { path: 'a.ts', old_string: '$&y = 1;\n$&y', new_string: "$'" });
    expect(read('a.ts')).toBe("$' = 1;\n");
  });

  it('refuses a file that is not UTF-8 and leaves its bytes as they were, and keeps a byte order mark', async () => {
    const latin1 = Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x0a, 0x58, 0x0a]); // "café\nX\n" in Latin-1
    write('latin1.txt', latin1);
    write('bom.txt', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo X\n')]));
    const tools = toolsAt(folder.path);
    const refused = await call(tools.edit_file!, { path: 'latin1.txt', old_string: 'X', new_string: 'Y' });
    expect(refused).toMatchObject({ isError: true, text: expect.stringMatching(/^latin1\.txt: is not UTF-8 text/) });
    expect(readFileSync(join(folder.path, 'latin1.txt'))).toEqual(latin1);
    expect((await call(tools.edit_file!, { path: 'bom.txt', old_string: 'X', new_string: 'Y' })).text).toBe('Edited bom.txt: replaced 1 occurrence.');
    expect(readFileSync(join(folder.path, 'bom.txt'))).toEqual(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('héllo Y\n')]));
  });

  it('refuses a missing file, a binary file, an empty old_string and a change that changes nothing', async () => {
    write('blob.bin', Buffer.from([1, 0, 2]));
    write('a.ts', 'same');
    const tools = toolsAt(folder.path);
    expect((await call(tools.edit_file!, { path: 'no.ts', old_string: 'a', new_string: 'b' })).text).toMatch(/does not exist; write_file makes a new file/);
    expect((await call(tools.edit_file!, { path: 'blob.bin', old_string: 'a', new_string: 'b' })).text).toMatch(/is a binary file/);
    expect((await call(tools.edit_file!, { path: 'a.ts', old_string: 'same', new_string: 'same' })).text).toMatch(/are the same/);
    expect(() => tools.edit_file!.parameters.parse({ path: 'a.ts', old_string: '', new_string: 'x' })).toThrow();
  });
});

describe('the planner', () => {
  it('sees each call by its kind and its targets relative to the workspace', () => {
    const tools = toolsAt(folder.path);
    const plan = (name: string, args: Record<string, unknown>) => tools[name]!.plan(tools[name]!.parameters.parse(args) as never, { roleOf: () => undefined, tool: () => undefined, readsOnly: () => false });
    expect(plan('read_file', { path: './src/a.ts' })).toEqual({ kind: 'read', targets: ['src/a.ts'] });
    expect(plan('write_file', { path: join(folder.path, 'src/a.ts'), content: '' })).toEqual({ kind: 'write', targets: ['src/a.ts'] });
    expect(plan('edit_file', { path: 'src/a.ts', old_string: 'a', new_string: 'b' })).toEqual({ kind: 'write', targets: ['src/a.ts'] });
    expect(plan('list_files', { pattern: '*.ts', path: 'src' })).toEqual({ kind: 'read', targets: ['src/*.ts'] });
    expect(plan('list_files', {})).toEqual({ kind: 'read', targets: ['**/*'] });
    expect(plan('grep', { pattern: 'x', path: 'src', glob: '**/*.ts' })).toEqual({ kind: 'read', targets: ['src/**/*.ts'] });
    const calls = [plan('read_file', { path: 'src/a.ts' }), plan('write_file', { path: './src/a.ts', content: '' }), plan('write_file', { path: 'b.ts', content: '' })];
    expect(schedule(calls).stages).toEqual([[0, 2], [1]]);
  });
});
