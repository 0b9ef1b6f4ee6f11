// A pool of reusable agents. The same specialist is called five times; it says `persist: true`, so after each task
// it goes back to the pool and the next task reuses it: same id, its conversation kept, so it can refer to earlier
// answers. A changed definition would get a new pool key, and idle agents leave the pool after `idleTimeoutMs`.
//
//   npx tsx examples/agent-pool.ts
import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';

const glossary = defineAgent({
  name: 'glossary',
  description: 'Explains one term at a time, consistently with the terms it explained before.',
  systemPrompt: 'You explain terms in one sentence, and link each to the terms you explained before.',
  persist: true,
});

// The scripted model answers from the conversation: a reused agent sees every term it explained before.
const model = new ScriptedModel(
  (request) => {
    const term = String(request.messages.at(-1)?.content).replace(/^Explain /, '').replace(/\.$/, '');
    const before = request.messages.filter((message) => message.role === 'user').length - 1;
    return before === 0 ? `${term}: the first term of this glossary.` : `${term}: term ${before + 1}, building on the ${before} before it.`;
  },
  { latencyMs: 20 },
);

const runtime = createRuntime({ model, agents: [glossary], pool: { maxIdlePerKey: 2, idleTimeoutMs: 60_000 } });

for (const term of ['actor', 'mailbox', 'supervisor', 'delegation', 'pool']) {
  const result = await runtime.run('glossary', `Explain ${term}.`);
  const { hits, misses } = runtime.poolStats();
  console.log(`${result.id}  ${result.output}   (pool: ${hits} hits, ${misses} misses)`);
}

const stats = runtime.poolStats();
console.log(`\nPool: ${stats.hits} hits, ${stats.misses} miss, ${stats.idle} idle agent kept, ${stats.evictions} evicted.`);
await runtime.shutdown();
process.exitCode = stats.hits === 4 ? 0 : 1;
