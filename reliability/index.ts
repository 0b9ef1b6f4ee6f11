// `npm run reliability`: troupe under faults and attacks, one row per case: what was tried, how many times a promise
// did not hold (failed), and how much acknowledged data was gone afterwards (lost). `--small` runs tiny sizes (the
// test suite runs it so). Exits with status 1 when any case failed or lost something.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { seeded } from '../bench/measure.js'; // the same kill times in every run
import type { Row } from './row.js';
import { canaries, escapes, faults, fuzz, restartStorm, soak, spawnBomb } from './runtimeCases.js';
import { concurrentWriters, corrupt, kills } from './storeCases.js';

const small = process.argv.includes('--small');
const dir = mkdtempSync(join(tmpdir(), 'troupe-reliability-'));
const started = performance.now();

const cases: (() => Promise<Row>)[] = [
  () => kills(dir, small ? 4 : 100, seeded(1)),
  () => corrupt(dir),
  () => concurrentWriters(dir, small ? 40 : 300),
  () => fuzz(small ? 200 : 2_000, 42),
  () => escapes(),
  () => spawnBomb(),
  () => canaries(dir),
  () => faults(small ? 100 : 1_000, dir),
  () => restartStorm(small ? 10 : 200),
  () => soak(small ? 2_000 : 100_000),
];

const rows: Row[] = [];
try {
  for (const run of cases) {
    const row = await run();
    rows.push(row);
    console.log(JSON.stringify(row));
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}

console.log('');
const header = ['case', 'tried', 'failed', 'lost', 'detail'];
const cells = rows.map((row) => [row.case, String(row.tried), String(row.failed), String(row.lost), row.detail ?? '']);
const widths = header.map((title, column) => Math.max(title.length, ...cells.map((cell) => cell[column]!.length)));
for (const cell of [header, ...cells]) console.log(cell.map((text, column) => text.padEnd(widths[column]!)).join('  ').trimEnd());
console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s on Node ${process.version}`);
if (rows.some((row) => row.failed > 0 || row.lost > 0)) process.exitCode = 1;
