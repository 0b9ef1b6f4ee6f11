// Every example runs offline, as a user would run it, and exits cleanly. An example is a file that says how to run
// it (`npx tsx examples/...`); in a folder, run.ts goes first (the others may read what it wrote).
import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from './support/tempDir.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const runFirst = (file: string) => (file.endsWith('/run.ts') ? `${file.slice(0, -'run.ts'.length)}0` : file);
const examples = readdirSync(join(root, 'examples'), { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && readFileSync(join(root, 'examples', file), 'utf8').includes(`npx tsx examples/${file}`))
  .sort((a, b) => runFirst(a).localeCompare(runFirst(b)));
const scratch = tempDir();

afterAll(() => scratch.remove());

/** The environment of a machine with no model configured, so every example stays offline. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, HISTORY_FILE: join(scratch.path, 'history.json') };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  return env;
}

describe('examples', () => {
  it('finds the examples', () => {
    expect(examples).toEqual(expect.arrayContaining(['parallel-review.ts', 'agent-pool.ts', 'agent-files/run.ts', 'agent-files/resume.ts']));
    expect(examples.indexOf('agent-files/run.ts')).toBeLessThan(examples.indexOf('agent-files/resume.ts'));
  });

  it.each(examples)('examples/%s runs offline and exits with status 0', async (file) => {
    // A long simulation says in its header (`//   test: --flag value …`) how to run it small here.
    const header = /^\/\/\s+test: (.+)$/m.exec(readFileSync(join(root, 'examples', file), 'utf8'));
    const args = header ? header[1]!.trim().split(/\s+/) : [];
    const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${file}`, ...args], { cwd: root, env: offlineEnv(), timeout: 60_000 });
    expect(stdout.trim()).not.toBe('');
    // An object printed in a template literal (`${event.error}`) reads as nothing a user can use.
    expect(stdout).not.toContain('[object Object]');
  });
});
