// `npm run bench`: every figure as one JSON line, then a table. Each figure is compared with a baseline measured in
// the same run on the same machine. `--small` runs tiny sizes (the smoke test uses it).
import { agentOverhead } from './agentOverhead.js';
import { concurrentScale } from './concurrentScale.js';
import { delegationTree } from './delegationTree.js';
import { eventPipeline } from './eventPipeline.js';
import { fanOutDelegation } from './fanOut.js';
import { inspection } from './inspection.js';
import { messaging } from './messaging.js';
import { reported } from './measure.js';
import { planner } from './planner.js';
import { soak } from './soak.js';
import { webInspector } from './webInspector.js';

const small = process.argv.includes('--small');
if (!(globalThis as { gc?: unknown }).gc) {
  console.error('Run with node --expose-gc (npm run bench does) so heap figures are measured after a full GC.');
}
const started = performance.now();

await agentOverhead(small ? [100, 300] : [1_000, 10_000, 100_000]);
await concurrentScale(small ? 200 : 100_000);
await delegationTree();
await fanOutDelegation(small ? [50, 200] : [100, 1_000, 10_000]);
await eventPipeline(small ? 200 : 20_000);
await planner(small ? 20 : 500);
await messaging(
  small
    ? [{ traders: 20, rounds: 3, runs: 1 }, { traders: 100, rounds: 2, runs: 1 }]
    : [{ traders: 100, rounds: 20, runs: 7 }, { traders: 1_000, rounds: 5, runs: 5 }, { traders: 10_000, rounds: 1, runs: 3 }],
);
await inspection(small ? [10, 100] : [10, 1_000]);
await webInspector(small ? 100 : 10_000);
await soak(small ? 100 : 10_000, small ? 1_000 : 100_000);

console.log('');
const rows = reported().map((figure) => [
  figure.bench,
  figure.name,
  `${figure.value} ${figure.unit}`,
  figure.ratio === undefined ? '' : `${figure.ratio}× ${figure.baseline ?? ''}`.trim(),
  figure.pass === undefined ? '' : figure.pass ? 'met' : 'MISSED',
]);
const header = ['bench', 'figure', 'value', 'against the baseline', 'target'];
const widths = header.map((title, column) => Math.max(title.length, ...rows.map((row) => row[column]!.length)));
for (const row of [header, ...rows]) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd());
console.log(`\n${((performance.now() - started) / 1000).toFixed(0)} s on Node ${process.version}, ${process.platform} ${process.arch}`);
