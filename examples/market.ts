// A market of resident trader agents, offline, in simulated time. An auctioneer publishes the price on the `market`
// topic; every trader answers with a bid or an ask on the `orders` topic and waits for the next price; the auctioneer
// collects the orders for one simulated minute and clears the market at the price where demand meets supply. A
// trading day is 390 such minutes. The run is reproducible: the same seed gives the same prices and the same hash
// of the event log; another seed gives another day.
//
//   npx tsx examples/market.ts [--seed N] [--traders N] [--rounds N]
//   node --max-semi-space-size=64 --import tsx examples/market.ts   (the full day 5-12 % sooner: a larger young
//                                                                   generation for its garbage; see the README)
//   test: --traders 50 --rounds 30
import { createHash } from 'node:crypto';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, formatMetrics, type ModelRequest } from 'troupe';
import { callTools, ScriptedModel, toolCall, type ScriptRequest } from 'troupe/testing';

const option = (name: string, fallback: number) => {
  const at = process.argv.indexOf(`--${name}`);
  return at > 0 ? Number(process.argv[at + 1]) : fallback;
};
const seed = option('seed', 42);
const TRADERS = option('traders', 1_000);
const ROUNDS = option('rounds', 390);
const MINUTE = 60_000;

const trader = defineAgent({
  name: 'trader',
  description: 'Buys below its value and sells above it.',
  systemPrompt: 'When the price comes, publish one order (bid or ask) to "orders", then wait for the next price.',
  tools: ['publish', 'wait_for_messages', 'finish'],
  subscribe: ['market'],
  resident: true,
  historyLimit: 6, // a trader reads only the latest price: its context stays small for the whole day
  maxTurns: ROUNDS + 2,
});

const auctioneer = defineAgent({
  name: 'auctioneer',
  description: 'Clears the market once a minute.',
  systemPrompt: 'Publish the price to "market", collect orders for a minute, clear the market, and again.',
  tools: ['publish', 'wait_for_messages', 'finish'],
  subscribe: ['orders'],
  resident: true,
  historyLimit: 4,
  maxTurns: ROUNDS + 2,
});

interface Order {
  side: 'bid' | 'ask';
  price: number;
  qty: number;
}

/**
 * The price where the quantity bid at or above it best meets the quantity asked at or below it: orders sorted once,
 * then demand and supply swept across the prices.
 */
function clear(orders: readonly Order[], previous: number): number {
  const prices = [...new Set(orders.map((order) => order.price))].sort((a, b) => a - b);
  const bids = orders.filter((o) => o.side === 'bid').sort((a, b) => a.price - b.price);
  const asks = orders.filter((o) => o.side === 'ask').sort((a, b) => a.price - b.price);
  let demand = bids.reduce((sum, o) => sum + o.qty, 0);
  let supply = 0;
  let [b, a] = [0, 0];
  let best = { price: previous, gap: Infinity };
  for (const price of prices) {
    while (b < bids.length && bids[b]!.price < price) demand -= bids[b++]!.qty;
    while (a < asks.length && asks[a]!.price <= price) supply += asks[a++]!.qty;
    const gap = Math.abs(demand - supply);
    if (gap < best.gap) best = { price, gap };
  }
  return best.price;
}

const lastText = (request: ModelRequest) => request.messages[request.messages.length - 1]!.content;
const prices: number[] = [];

const auctioneerTurn = (request: ModelRequest, round: number) => {
  const orders = lastText(request)
    .split('\n')
    .flatMap((line) => {
      const json = line.slice(line.indexOf('] ') + 2);
      return json.startsWith('{') ? [JSON.parse(json) as Order] : [];
    });
  const previous = prices[prices.length - 1] ?? 100;
  const price = round === 0 ? previous : clear(orders, previous);
  if (round > 0) prices.push(price);
  if (round === ROUNDS) {
    return callTools(
      toolCall('publish', { topic: 'market', content: 'closed' }, `p${round}`),
      toolCall('finish', { answer: `Closed at ${price.toFixed(2)} after ${ROUNDS} minutes.` }, `f${round}`),
    );
  }
  return callTools(
    toolCall('publish', { topic: 'market', content: price.toFixed(2) }, `p${round}`),
    toolCall('wait_for_messages', { timeout_ms: MINUTE, collect: true }, `w${round}`),
  );
};

// Each trader keeps a private value near 100, drawn once from its own seeded stream; it bids below or asks above it.
const values = new Map<string, number>();
const traderTurn = (request: ScriptRequest, round: number) => {
  const { random } = request;
  let value = values.get(request.agentId);
  if (value === undefined) values.set(request.agentId, (value = 90 + random() * 20));
  const text = lastText(request).slice(lastText(request).lastIndexOf('] ') + 2);
  if (text === 'closed') return callTools(toolCall('finish', { answer: `Went home; my value was ${value.toFixed(2)}.` }, `f${round}`));
  const price = Number(text);
  const side = value > price ? 'bid' : 'ask';
  const limit = side === 'bid' ? value - random() * 2 : value + random() * 2;
  const order: Order = { side, price: Math.round(limit * 100) / 100, qty: 1 + Math.floor(random() * 5) };
  return callTools(
    toolCall('publish', { topic: 'orders', content: JSON.stringify(order) }, `o${round}`),
    toolCall('wait_for_messages', { from: 'auctioneer' }, `w${round}`),
  );
};

const turns = new Map<string, number>();
const model = new ScriptedModel(
  (request) => {
    const round = turns.get(request.agentId) ?? 0;
    turns.set(request.agentId, round + 1);
    if (request.agentName === 'auctioneer') return auctioneerTurn(request, round);
    if (round === 0) return 'Ready to trade.';
    return traderTurn(request, round);
  },
  { latencyMs: (request) => (request.agentName === 'trader' ? 200 + Math.floor(request.random() * 5_000) : 500), record: false },
);

const clock = new SimulatedClock();
const runtime = createRuntime({
  model,
  agents: [trader, auctioneer],
  clock,
  seed,
  maxParallel: TRADERS + 1,
  inbox: { capacity: TRADERS + 16 },
  projectAgentDir: false,
});
// The event log's hash: each event as a JSON line, hashed a chunk of lines at a time (a hash update per line cost more
// than writing the line).
const hash = createHash('sha256');
let lines = '';
runtime.events$.subscribe((event) => {
  lines += `${JSON.stringify(event)}\n`;
  if (lines.length < 65_536) return;
  hash.update(lines);
  lines = '';
});

const started = performance.now();
for (let i = 0; i < TRADERS; i += 1) runtime.spawn('trader', 'Trade on the market topic.');
await runtime.runUntilIdle(); // every trader has said it is ready and waits for a price
const close = runtime.run('auctioneer', `Run ${ROUNDS} minutes of trading.`);
const report = await runtime.runUntilIdle(); // the market closed and every trader went home
const result = await close;
const seconds = (performance.now() - started) / 1000;

const series = prices.map((price) => price.toFixed(2));
const shownSeries = series.length <= 15 ? series.join(' ') : `${series.slice(0, 10).join(' ')} … ${series.slice(-5).join(' ')}`;
console.log(`Price series (${series.length} minutes): ${shownSeries}`);
console.log(`Low ${Math.min(...prices).toFixed(2)}, high ${Math.max(...prices).toFixed(2)}, close ${series[series.length - 1]}.`);
console.log(result.status === 'completed' ? result.output : `The auctioneer failed: ${result.error?.message}`);
const metrics = runtime.metrics();
const { total } = metrics;
console.log(
  `${TRADERS} traders, ${total.agentsCompleted} agents completed; ${total.messagesOut} messages sent, ${total.messagesIn} delivered; ` +
    `${total.modelCalls} model calls; simulated ${(report.at / 3_600_000).toFixed(2)} h in ${seconds.toFixed(1)} s.`,
);
await runtime.shutdown();
console.log(`Event log sha256 (seed ${seed}): ${hash.update(lines).digest('hex')}`);
// The metrics table: the auctioneer, the first three traders and the total (a thousand rows would hide the point).
const shown = Object.entries(metrics.agents).filter(([, agent]) => agent.name === 'auctioneer').concat(
  Object.entries(metrics.agents).filter(([, agent]) => agent.name === 'trader').slice(0, 3),
);
console.log(`\n${formatMetrics({ total, agents: Object.fromEntries(shown) })}`);
if (result.status !== 'completed') process.exitCode = 1;
