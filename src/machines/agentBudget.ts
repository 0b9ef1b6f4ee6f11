import type { AgentBudget } from './agentTypes.js';

/** The figures a budget is checked against: model turns (when counted), tokens in and out, and cost in USD. */
export interface BudgetFigures {
  turns?: number;
  tokens: number;
  costUsd: number;
}

/** A spent budget: the agent whose subtree it covers, and the limit used up, in words (`maxTurns 3 used`). */
export interface SpentBudget {
  owner: string;
  limit: string;
}

/** Which limit of a budget was passed or used up, its value, and the figure that passed or reached it. */
export interface BudgetLimitHit {
  limit: keyof AgentBudget;
  of: number;
  figure: number;
}

/**
 * The first limit of `budget` that `figures` pass (`>`), or, with `reached`, have used up (`>=`: nothing more fits);
 * undefined when none. Turns are only checked when `figures.turns` is given.
 */
export function limitHit(budget: AgentBudget, figures: BudgetFigures, reached = false): BudgetLimitHit | undefined {
  const hit = (value: number, limit: number | undefined) => limit !== undefined && (reached ? value >= limit : value > limit);
  if (figures.turns !== undefined && hit(figures.turns, budget.maxTurns)) return { limit: 'maxTurns', of: budget.maxTurns!, figure: figures.turns };
  if (hit(figures.tokens, budget.maxTokens)) return { limit: 'maxTokens', of: budget.maxTokens!, figure: figures.tokens };
  if (hit(figures.costUsd, budget.maxCostUsd)) return { limit: 'maxCostUsd', of: budget.maxCostUsd!, figure: figures.costUsd };
  return undefined;
}

/**
 * Why a turn ended its agent for a budget, in words: whose budget (`owner` undefined: the agent's own), which limit,
 * and what the turn brought the figure to (`its tokens to 1234, past maxTokens 1000`).
 */
export function overBudgetMessage(hit: BudgetLimitHit, owner?: string): string {
  const whose = owner === undefined ? 'its budget' : `the budget of ${owner}`;
  const of = owner === undefined ? 'its' : "that subtree's";
  return `The agent went over ${whose}: this turn brought ${of} ${figureName(hit)} to ${formatFigure(hit.limit, hit.figure)}, past ${hit.limit} ${formatFigure(hit.limit, hit.of)}.`;
}

/**
 * Why a `maxCostUsd` budget cannot be kept for a reply from a model the price table does not know (its cost counts as
 * 0), in words, with how to price it; undefined when the reply was priced or the budget has no `maxCostUsd`.
 * `turn.unpricedModel` is the name the model was asked for, `turn.model` the one the server answered with.
 */
export function unpricedMessage(budget: AgentBudget, turn: { model?: string; unpricedModel?: string }, owner?: string): string | undefined {
  const asked = turn.unpricedModel;
  if (asked === undefined || budget.maxCostUsd === undefined) return undefined;
  const whose = owner === undefined ? 'its budget' : `the budget of ${owner}`;
  const named = turn.model === undefined || turn.model === asked ? `"${asked}"` : `"${turn.model}" (asked for as "${asked}")`;
  return (
    `${UNPRICED} ${named} has no price, so ${whose} (maxCostUsd ${formatFigure('maxCostUsd', budget.maxCostUsd)}) cannot be kept: ` +
    `give its price in USD per million tokens, createRuntime({ prices: { '${asked}': { input, output } } }).`
  );
}

/** How every {@link unpricedMessage} begins. */
const UNPRICED = 'The model';

/** True for a reason from {@link unpricedMessage}: no limit was reached, a price is missing. */
export function isUnpricedMessage(reason: string): boolean {
  return reason.startsWith(`${UNPRICED} "`);
}

/** A used-up limit in words, as a spent budget's error names it (`maxTurns 3 used`). */
export function spentLimit(hit: BudgetLimitHit): string {
  return `${hit.limit} ${formatFigure(hit.limit, hit.of)} used`;
}

function figureName(hit: BudgetLimitHit): string {
  return hit.limit === 'maxTurns' ? 'turns' : hit.limit === 'maxTokens' ? 'tokens' : 'cost';
}

function formatFigure(limit: keyof AgentBudget, value: number): string {
  return limit === 'maxCostUsd' ? `$${Number(value.toPrecision(4))}` : String(value);
}
