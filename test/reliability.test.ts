// `npm run reliability` runs end to end at small sizes, and every case holds: nothing failed, nothing lost.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

describe('npm run reliability', () => {
  it('kills writers, corrupts stores, fuzzes tools, tries escapes, a spawn bomb, canaries, faults, a restart storm and a soak: all hold', async () => {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'reliability/index.ts', '--small'], { cwd: root, timeout: 140_000 });
    const rows = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { case: string; tried: number; failed: number; lost: number });
    expect(rows).toHaveLength(10);
    for (const row of rows) {
      expect(row.tried, row.case).toBeGreaterThan(0);
      expect({ case: row.case, failed: row.failed, lost: row.lost }).toEqual({ case: row.case, failed: 0, lost: 0 });
    }
    expect(stdout).toMatch(/case\s+tried\s+failed\s+lost/);
  }, 150_000);
});
