// Every example runs offline, as a user would run it, and exits cleanly.
import { execFile } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const examples = readdirSync(new URL('../examples', import.meta.url), { recursive: true })
  .map(String)
  .filter((file) => file.endsWith('.ts') && !file.includes('/lib/'))
  .sort();

/** The environment of a machine with no model configured, so every example stays offline. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  return env;
}

describe('examples', () => {
  it.each(examples)('examples/%s runs offline and exits with status 0', async (file) => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', `examples/${file}`], {
      cwd: root,
      env: offlineEnv(),
      timeout: 60_000,
    });
    expect(stdout.trim()).not.toBe('');
  });
});
