// A simulation for the troupe command: a buyer haggles with a resident seller over messages, each reply taking twenty
// minutes of the seller's thought. The scenario brings a simulated clock in its runtime options, so the afternoon of
// haggling takes milliseconds, and comes out the same on every run with the same seed; its `run` drives the clock
// (`runUntilIdle`) rather than waiting on it.
//
//   npx troupe run examples/simulated-scenario.ts
//   npx troupe run examples/simulated-scenario.ts --json > events.jsonl
import { SimulatedClock } from 'xstate';
import { defineAgent, type ModelRequest, type Scenario } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';

const MINUTE = 60_000;

const buyer = defineAgent({
  name: 'buyer',
  description: 'Buys the bike, haggling.',
  systemPrompt: 'Offer low, and raise your offer by 10 until the seller agrees.',
  tools: ['send_message'],
});
const seller = defineAgent({
  name: 'seller',
  description: 'Sells the bike for no less than 100.',
  systemPrompt: 'Reply to every offer: accept one of 100 or more, else ask 120.',
  tools: ['reply'],
  resident: true,
});

const last = (request: ModelRequest) => request.messages[request.messages.length - 1]!;
const offer = (amount: number) =>
  callTools(toolCall('send_message', { to: 'seller', content: `I offer ${amount}.`, expect_reply: true, timeout_ms: 120 * MINUTE }, `offer-${amount}`));

const model = new ScriptedModel(
  (request) => {
    const text = last(request).content;
    if (request.agentName === 'seller') {
      const offered = /I offer (\d+)\./.exec(text);
      if (!offered) return last(request).role === 'tool' ? 'Waiting for offers.' : 'Open for offers.';
      return callTools(toolCall('reply', { content: Number(offered[1]) >= 100 ? `Deal at ${offered[1]}.` : 'No: 120.' }));
    }
    const deal = /Deal at (\d+)\./.exec(text);
    if (deal) return `Bought the bike for ${deal[1]}.`;
    const offers = request.messages.filter((message) => message.role === 'tool').length;
    return offer(70 + 10 * offers);
  },
  { latencyMs: (request) => (request.agentName === 'seller' ? 20 * MINUTE : MINUTE) },
);

export default {
  agents: [buyer, seller],
  model,
  // A model call may take twenty minutes here: the idle timeout (five minutes by default) is raised to match.
  options: { clock: new SimulatedClock(), seed: 7, idleTimeoutMs: 60 * MINUTE },
  run: async (runtime) => {
    const shop = runtime.spawn('seller', 'Sell the bike.');
    const haggle = runtime.spawn('buyer', 'Buy the bike as cheaply as you can.');
    await runtime.runUntilIdle(); // simulated time runs until the buyer is done and the seller idles
    runtime.stop(shop.id);
    const result = await haggle.result;
    return { ...result, output: `${result.output} (${runtime.now() / MINUTE} simulated minutes)` };
  },
} satisfies Scenario;
