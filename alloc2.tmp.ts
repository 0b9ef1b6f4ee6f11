import { runAgents } from './bench/agentOverhead.ts';
import { allocatedDuring } from './bench/measure.ts';
for (let i = 0; i < 5; i++) await runAgents(1000);
const out = [];
for (let i = 0; i < 5; i++) { const s = await allocatedDuring(() => runAgents(2000)); out.push((s.bytes / 1024 / 2000).toFixed(1)); }
console.log('KB per flat agent', out.join(' '));
