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
      new Set(['agent-overhead', 'concurrent-scale', 'delegation-tree', 'fan-out', 'event-pipeline', 'planner', 'messaging', 'inspection', 'web inspector', 'soak']),
    );
    for (const figure of figures) {
      expect(Number.isFinite(figure.value)).toBe(true);
      // Value, baseline and ratio are each rounded (bench/measure.ts `round`): the ratio is checked to within what the
      // three roundings can move it, which for small values (three decimals) is more than 1 %.
      if (figure.ratio !== undefined) {
        const base = figure.baselineValue!;
        const slack = roundingError(figure.value) + roundingError(base) + roundingError(figure.ratio);
        expect(Math.abs(figure.ratio / (figure.value / base) - 1)).toBeLessThanOrEqual(slack + 1e-9);
      }
    }
    const makespan = figures.find((figure) => figure.unit === 'ms' && figure.bench === 'concurrent-scale');
    expect(makespan?.value).toBe(3_000);
    expect(stdout).toMatch(/bench\s+figure\s+value/);
  }, 150_000); // the small bench takes seconds alone, longer on a busy machine
});

/** The largest relative error `round` (bench/measure.ts) can make of a value of this size: half its last digit. */
function roundingError(value: number): number {
  const magnitude = Math.abs(value);
  const digits = magnitude >= 100 ? 0 : magnitude >= 10 ? 1 : magnitude >= 1 ? 2 : 3;
  return magnitude === 0 ? 0 : (0.5 * 10 ** -digits) / magnitude;
}
