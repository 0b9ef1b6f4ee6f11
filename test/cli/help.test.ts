// `--help` on every command: usage, options and an example, on stdout, exit 0.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { root, troupe } from '../support/cli.js';

describe.concurrent('troupe --help', () => {
  it.each([
    [[], 'Usage: troupe [options] [command]', ['run [options] <target>', '$ troupe run examples/scenario.ts']],
    [['run'], 'Usage: troupe run [options] <target>', ['--task <text>', '--base-url <url>', '--max-parallel <n>', '--json', '--quiet', 'Exit codes: 0', '$ troupe run']],
  ])('troupe %j --help', async (command, usage, mentions) => {
    const { code, stdout, stderr } = await troupe([...command, '--help']);
    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    expect(stdout.split('\n')[0]).toBe(usage);
    for (const text of mentions) expect(stdout).toContain(text);
  });

  it('troupe --version prints the package version', async () => {
    const { code, stdout } = await troupe(['--version']);
    const { version } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { version: string };
    expect({ code, stdout }).toEqual({ code: 0, stdout: `${version}\n` });
  });
});
