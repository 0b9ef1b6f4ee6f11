// Tools that plan and describe themselves. A teller moves money with `transfer`, whose `plan` hook names the two
// accounts a call touches: transfers that share an account run one after another, in the order asked, and the
// others side by side. Its `describe` hook tells each teller its own limit, in the description its model gets.
// Offline on a scripted model, in simulated time (every transfer takes one simulated second).
//
//   npx tsx examples/bank-transfers.ts
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, sleep } from 'troupe';
import { ScriptedModel } from 'troupe/testing';

const balances = new Map([
  ['alice', 100],
  ['bob', 50],
  ['carol', 80],
  ['dave', 20],
  ['erin', 0],
]);
const limits: Record<string, number> = { 'teller-day': 500, 'teller-night': 60 };

const transfer = defineTool({
  name: 'transfer',
  description: 'Moves money from one account to another.',
  parameters: z.object({ from: z.string(), to: z.string(), amount: z.number().positive() }),
  kind: 'write',
  // The planner's view of one call: a write to both accounts, so calls that share one are ordered.
  plan: ({ from, to }) => ({ kind: 'write', targets: [`accounts/${from}`, `accounts/${to}`] }),
  // What each teller reads: its own limit.
  describe: ({ agentName }) => `Moves money from one account to another, at most ${limits[agentName] ?? 0} per transfer.`,
  execute: async ({ from, to, amount }, { clock, signal }) => {
    await sleep(clock, 1_000, signal); // the bank's ledger is slow
    const left = (balances.get(from) ?? 0) - amount;
    if (left < 0) throw new Error(`${from} has only ${balances.get(from) ?? 0}`);
    balances.set(from, left);
    balances.set(to, (balances.get(to) ?? 0) + amount);
    return `${from} → ${to}: ${amount}`;
  },
});

const teller = (name: string) =>
  defineAgent({ name, description: 'Makes transfers.', systemPrompt: 'Make the transfers you are asked for.', tools: [transfer] });

// One reply with four transfers: the first two share no account and run side by side; the third shares bob with
// the first, the fourth shares dave with the second and alice with the first, so each waits for those.
const transfers = {
  content: '',
  toolCalls: [
    ['alice', 'bob', 30],
    ['carol', 'dave', 40],
    ['bob', 'erin', 60],
    ['dave', 'alice', 10],
  ].map(([from, to, amount], index) => ({ id: `t${index + 1}`, name: 'transfer', arguments: JSON.stringify({ from, to, amount }) })),
};

const model = ScriptedModel.perAgent({
  'teller-day': [transfers, 'All four transfers are done.'],
  'teller-night': [(request) => `My transfer tool reads: "${request.tools[0]?.description}"`],
});

const clock = new SimulatedClock();
const runtime = createRuntime({ model, agents: [teller('teller-day'), teller('teller-night')], clock, projectAgentDir: false });
runtime.events$.subscribe((event) => {
  if (event.type === 'tool.call') console.log(`${String(event.at).padStart(5)} ms  start ${event.callId} ${event.arguments}`);
  if (event.type === 'tool.result') console.log(`${String(event.at).padStart(5)} ms  end   ${event.callId} (${event.status})`);
});

const day = runtime.run('teller-day', 'Make the four transfers of today.');
const night = runtime.run('teller-night', 'What may you move?');
await runtime.runUntilIdle();
console.log(`\nteller-day: ${(await day).output}`);
console.log(`teller-night: ${(await night).output}`);
console.log(`balances: ${[...balances].map(([name, amount]) => `${name} ${amount}`).join(', ')}`);
console.log(`simulated time: ${clock.now()} ms (four transfers one after another would take 4000 ms)`);
await runtime.shutdown();
