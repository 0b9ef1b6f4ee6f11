/** The price of a model in USD per million tokens. */
export interface ModelPrice {
  /** USD per million input (prompt) tokens. */
  input: number;
  /** USD per million output (completion) tokens. */
  output: number;
}

/** Prices by model name; a name also matches any longer name it begins (`gpt-4o` prices `gpt-4o-2024-08-06`). */
export type PriceTable = Readonly<Record<string, ModelPrice>>;

/**
 * List prices of common hosted models (USD per million tokens, as the vendors published them in 2025), and `scripted`
 * (a `ScriptedModel` of the default name) at 0. Override or extend them per runtime with
 * `createRuntime({ prices })`; models that match no entry (local models on Ollama or vLLM, for instance) cost nothing,
 * and a turn under a `maxCostUsd` budget fails with `budget` (the budget could not be kept).
 */
export const defaultPrices: PriceTable = Object.freeze({
  'gpt-5': { input: 1.25, output: 10 },
  'gpt-5-mini': { input: 0.25, output: 2 },
  'gpt-5-nano': { input: 0.05, output: 0.4 },
  'gpt-4.1': { input: 2, output: 8 },
  'gpt-4.1-mini': { input: 0.4, output: 1.6 },
  'gpt-4.1-nano': { input: 0.1, output: 0.4 },
  'gpt-4o': { input: 2.5, output: 10 },
  'gpt-4o-mini': { input: 0.15, output: 0.6 },
  o3: { input: 2, output: 8 },
  'o3-mini': { input: 1.1, output: 4.4 },
  'o4-mini': { input: 1.1, output: 4.4 },
  'claude-opus-4': { input: 15, output: 75 },
  'claude-sonnet-4': { input: 3, output: 15 },
  'claude-3-5-haiku': { input: 0.8, output: 4 },
  // ScriptedModel's default name: an offline run costs nothing, and is priced, so a program's `maxCostUsd` budget holds
  // in its tests as it does in production (a model with no price fails a turn under such a budget).
  scripted: { input: 0, output: 0 },
});

/**
 * Finds the price of a model: an exact entry, else the longest entry the name begins with followed by `-`, else
 * undefined.
 */
export function findPrice(prices: PriceTable, model: string): ModelPrice | undefined {
  // Own entries only: a model named `constructor` or `toString` is not priced by what every object inherits.
  if (Object.hasOwn(prices, model)) return prices[model];
  let known = found.get(prices);
  if (!known) found.set(prices, (known = new Map()));
  if (known.has(model)) return known.get(model);
  const price = longestPrefix(prices, model);
  // A table's lookups are remembered up to a bound: a run that names ever new models does not grow it for ever.
  if (known.size >= MAX_REMEMBERED) known.clear();
  known.set(model, price);
  return price;
}

/** How many prefix lookups are remembered per table. */
const MAX_REMEMBERED = 1_024;

/** Prices already looked up by prefix, per table (tables are read-only once made). */
const found = new WeakMap<PriceTable, Map<string, ModelPrice | undefined>>();

function longestPrefix(prices: PriceTable, model: string): ModelPrice | undefined {
  let best: string | undefined;
  for (const name of Object.keys(prices)) {
    if (model.startsWith(`${name}-`) && (best === undefined || name.length > best.length)) best = name;
  }
  return best === undefined ? undefined : prices[best];
}

/** The cost in USD of one reply's tokens; zero for a model with no price. */
export function costOf(prices: PriceTable, model: string, inputTokens: number, outputTokens: number): number {
  const price = findPrice(prices, model);
  if (!price) return 0;
  return (inputTokens * price.input + outputTokens * price.output) / 1_000_000;
}
