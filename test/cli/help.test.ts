// `--help` on every command: usage, options and an example, on stdout, exit 0.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, troupe } from '../support/cli.js';

describe.concurrent('troupe --help', () => {
  it.each([
    [[], 'Usage: troupe [options] [command]', ['run [options] <target>', 'agents', 'sessions', '$ troupe run examples/scenario.ts']],
    [['run'], 'Usage: troupe run [options] <target>', ['--task <text>', '--base-url <url>', '--max-parallel <n>', '--json', '--quiet', 'Exit codes: 0', '$ troupe run']],
    [['agents'], 'Usage: troupe agents [options] [command]', ['list [options]', 'show [options] <name>', '$ troupe agents list']],
    [['agents', 'list'], 'Usage: troupe agents list [options]', ['--agents <dir>', '--json', '$ troupe agents list']],
    [['agents', 'show'], 'Usage: troupe agents show [options] <name>', ['--agents <dir>', '$ troupe agents show researcher']],
    [['sessions'], 'Usage: troupe sessions [options] [command]', ['list [options]', 'show [options] <id>', 'resume [options] <id>', '$ troupe sessions resume']],
    [['sessions', 'list'], 'Usage: troupe sessions list [options]', ['--store <file>', '$ troupe sessions list']],
    [['sessions', 'show'], 'Usage: troupe sessions show [options] <id>', ['--store <file>', '--json', '$ troupe sessions show agent:']],
    [['sessions', 'resume'], 'Usage: troupe sessions resume [options] <id>', ['--task <text>', '--model <name>', '--store <file>', '$ troupe sessions resume agent:']],
    [['trace'], 'Usage: troupe trace [options] [command]', ['summary', '$ troupe trace summary']],
    [['trace', 'summary'], 'Usage: troupe trace summary [options] <file>', ['$ troupe trace summary']],
    [['ui'], 'Usage: troupe ui [options] <file>', ['--port <port>', '$ troupe ui run.jsonl']],
  ])('troupe %j --help', async (command, usage, mentions) => {
    const { code, stdout, stderr } = await troupe([...command, '--help']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.split('\n')[0]).toBe(usage);
    for (const text of mentions) expect(stdout).toContain(text);
  });

  // The command loads a .mts scenario (what its CommonJS hint asks a scenario to be named), so its help says so.
  it('troupe run --help names every scenario ending the command reads as a file: .ts, .mts, .js and .mjs', async () => {
    const { stdout } = await troupe(['run', '--help']);
    expect(stdout).toContain('a scenario file (.ts, .mts, .js, .mjs) or an agent name');
    expect(stdout).toContain('A target with a path or a .ts, .mts, .js or .mjs ending is a scenario file');
  });

  it('troupe --version prints the package version', async () => {
    const { code, stdout } = await troupe(['--version']);
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect({ code, stdout }).toEqual({ code: 0, stdout: `${version}\n` });
  });
});
