// The benchmark runs end to end at tiny sizes and prints well-formed figures. It asserts no duration: speed is
// what `npm run bench` reports, not what tests check.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';

const run = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));

describe('npm run bench', () => {
  it('runs every benchmark at tiny sizes and prints one JSON figure a line, then a table', async () => {
    const { stdout } = await run(process.execPath, ['--expose-gc', '--import', 'tsx', 'bench/index.ts', '--small'], {
      cwd: root,
      timeout: 120_000,
    });
    const figures = stdout
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { bench: string; value: number; unit: string; ratio?: number; baselineValue?: number });
    expect(new Set(figures.map((figure) => figure.bench))).toEqual(
      new Set(['agent-overhead', 'concurrent-scale', 'delegation-tree', 'event-pipeline', 'planner', 'messaging']),
    );
    for (const figure of figures) {
      expect(Number.isFinite(figure.value)).toBe(true);
      // Figures are rounded to three significant digits each, so the ratio is checked to 1 %.
      if (figure.ratio !== undefined) expect(Math.abs(figure.ratio / (figure.value / figure.baselineValue!) - 1)).toBeLessThan(0.01);
    }
    const makespan = figures.find((figure) => figure.unit === 'ms' && figure.bench === 'concurrent-scale');
    expect(makespan?.value).toBe(3_000);
    expect(stdout).toMatch(/bench\s+figure\s+value/);
  });
});
