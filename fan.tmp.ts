import { fanOut } from './bench/fanOut.ts';
import { runAgents } from './bench/agentOverhead.ts';
for (let i = 0; i < 5; i++) { await fanOut(1000); await runAgents(1000); }
for (const mode of ['fan', 'flat', 'fan', 'flat']) {
  const t0 = performance.now();
  for (let i = 0; i < 20; i++) { if (mode === 'fan') await fanOut(1000); else await runAgents(1000); }
  process.stdout.write(`${mode} ${((performance.now() - t0) / 20).toFixed(1)}  `);
}
console.log();
