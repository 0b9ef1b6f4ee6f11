import { DelegationError } from '../errors.js';
import type { MetricsSnapshot } from '../events/metrics.js';
import type { AgentTable } from '../machines/agentTable.js';
import type { AgentBudget } from '../machines/agentTypes.js';
import { limitHit, overBudgetMessage, spentLimit, unpricedMessage, type SpentBudget } from '../machines/agentBudget.js';

/** What {@link RunLimits} reads of the runtime. */
export interface RunLimitsHost {
  /** The supervisor's book of agents (parents, states). */
  table(): AgentTable;
  /** The latest metrics (subtree figures). */
  metrics(): MetricsSnapshot;
  /** Agents one run (a top-level agent and everything under it) may start. */
  readonly maxAgents: number;
  /** Agents started by agents that may wait for a slot at once, over the whole runtime. */
  readonly maxPending: number;
  /** The budget of every run, if the runtime has one. */
  readonly runBudget: AgentBudget | undefined;
}

/** What a model turn adds: the figures a budget counts. */
export interface TurnSpend {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  /** The model that answered, as the server names it. */
  model?: string;
  /** The model's name when it has no price (its cost counted as 0): a budget with `maxCostUsd` cannot be kept. */
  unpricedModel?: string;
}

/**
 * The limits that keep a run from running away: at most `maxAgents` agents in one run (a top-level agent and every
 * agent under it, however they were started), at most `maxPending` agents started by agents waiting for a slot, and
 * budgets (`maxTurns`, `maxTokens`, `maxCostUsd`) over a whole subtree: an agent's budget covers it and everything
 * it starts, the runtime's covers each run. A launch past a limit is refused with a {@link DelegationError} whose
 * reason is `budget` (the delegation tool's call fails, its caller goes on). A model turn is counted before the model
 * is called ({@link RunLimits.reserveTurn}), so `maxTurns` is never passed; a turn whose tokens or cost take a subtree
 * past its budget fails its agent with reason `budget` (the agent machine's `overBudget` guard asks
 * {@link RunLimits.crosses}), and no turn starts under a spent budget, so tokens and cost pass a budget by at most the
 * turns already under way when it was reached.
 */
export class RunLimits {
  /** Budgets by the id of the agent whose subtree they cover. */
  private readonly budgets = new Map<string, AgentBudget[]>();
  /** Model turns started under each budgeted agent (its own included), counted before the model is called. */
  private readonly turnsStarted = new Map<string, number>();
  /**
   * The tokens and cost of each budgeted agent's subtree when it was launched: a resumed (or pooled) agent's earlier runs
   * are in its metrics, and its budgets count from where they were.
   */
  private readonly spentBefore = new Map<string, { tokens: number; costUsd: number }>();
  /** Agents started in each run, by the run's top-level id. */
  private readonly started = new Map<string, number>();
  /** Agents started by agents that have not started running yet. */
  private pendingFromAgents = new Set<string>();

  constructor(private readonly host: RunLimitsHost) {}

  /** Refuses a launch under `parentId` that would pass a limit (throws); changes nothing. */
  check(parentId: string | null, byAgent: boolean): void {
    if (parentId === null) return; // a new run
    const root = this.rootOf(parentId);
    const { maxAgents, maxPending } = this.host;
    if ((this.started.get(root) ?? 1) >= maxAgents) {
      throw new DelegationError('budget', `This run has started ${maxAgents} agents, its limit (maxAgents); no more may be started in it.`);
    }
    // Spawns put off to the end of the task count as pending until they are made: made now, those that take a free
    // slot no longer do (see SpawnBatch).
    if (byAgent && this.pendingFromAgents.size >= maxPending) this.host.table().spawnPending();
    if (byAgent && this.pendingFromAgents.size >= maxPending) {
      throw new DelegationError('budget', `${maxPending} agents started by agents already wait for a slot (maxPending); try again when some have run.`);
    }
    // A sub-agent launched before this one in the same task takes its first turn as it is made: made now, its turn
    // counts against the budgets above it.
    if (this.budgets.size > 0) this.host.table().spawnPending();
    const spent = this.spentBudget(parentId);
    if (spent) throw new DelegationError('budget', `The budget of ${spent.owner} is spent (${spent.limit}); no more agents may be started under it.`);
  }

  /**
   * What refuses a new attempt of agent `id` (a restart), in words, or undefined when it may start: a restart is a new
   * run of the agent, so it counts against its run's `maxAgents`, and it may not start under a spent budget (its own
   * or one above it: the attempts before it spent from the same budgets, since they ran under the same id). Changes
   * nothing; {@link RunLimits.restarted} counts it.
   */
  restartRefusal(id: string): string | undefined {
    const { maxAgents } = this.host;
    if ((this.started.get(this.rootOf(id)) ?? 1) >= maxAgents) {
      return `This run has started ${maxAgents} agents, its limit (maxAgents); the agent may not be started again in it.`;
    }
    const spent = this.spentBudget(id);
    return spent === undefined ? undefined : `The budget of ${spent.owner} is spent (${spent.limit}); the agent may not be started again under it.`;
  }

  /** Counts a restart of agent `id` in its run, as one more agent started. */
  restarted(id: string): void {
    const root = this.rootOf(id);
    this.started.set(root, (this.started.get(root) ?? 1) + 1);
  }

  /** Counts a launched agent in its run and keeps its budgets (its own, and the run's for a top-level agent). */
  launched(id: string, parentId: string | null, byAgent: boolean, budget: AgentBudget | undefined): void {
    const root = parentId === null ? id : this.rootOf(parentId);
    this.started.set(root, (this.started.get(root) ?? 0) + 1);
    if (byAgent) this.pendingFromAgents.add(id);
    const budgets = [...(budget ? [budget] : []), ...(parentId === null && this.host.runBudget ? [this.host.runBudget] : [])];
    // A launch's budgets are its own: a resumed agent's earlier launch neither lends it its budgets nor spends from its new ones.
    this.turnsStarted.delete(id);
    this.spentBefore.delete(id);
    if (budgets.length === 0) {
      this.budgets.delete(id);
      return;
    }
    this.budgets.set(id, budgets);
    const subtree = this.host.metrics().agents[id]?.subtree;
    if (subtree) this.spentBefore.set(id, { tokens: subtree.inputTokens + subtree.outputTokens, costUsd: subtree.costUsd });
  }

  /**
   * A group (a pattern run) opened with no parent is a run of its own: the runtime's budget covers it and every step
   * under it, as it covers a top-level agent's subtree. The group is not counted as an agent of its run.
   */
  groupOpened(id: string, parentId: string | null): void {
    const { runBudget } = this.host;
    if (parentId !== null || runBudget === undefined) return;
    this.budgets.set(id, [runBudget]);
  }

  /** The tokens and cost the subtree of budgeted agent `at` has spent since it was launched. */
  private spentSince(at: string, agents: MetricsSnapshot['agents']): { tokens: number; costUsd: number } {
    const subtree = agents[at]?.subtree;
    if (!subtree) return { tokens: 0, costUsd: 0 };
    const before = this.spentBefore.get(at);
    const tokens = subtree.inputTokens + subtree.outputTokens;
    return before ? { tokens: tokens - before.tokens, costUsd: Math.round((subtree.costUsd - before.costUsd) * 1e12) / 1e12 } : { tokens, costUsd: subtree.costUsd };
  }

  /** Forgets a finished run: its agents' budgets and turn counts, and its count of agents. */
  forget(ids: readonly string[], root: string): void {
    for (const id of ids) {
      this.budgets.delete(id);
      this.turnsStarted.delete(id);
      this.spentBefore.delete(id);
    }
    this.started.delete(root);
  }

  /** The agent started running (or ended before it did): it no longer counts as pending. */
  running(id: string): void {
    this.pendingFromAgents.delete(id);
  }

  /**
   * Why a model turn of agent `agentId` that spent `turn` takes it or any agent above it past the tokens or cost of a
   * budget of their subtree (this turn's counted in), in words; undefined when it takes none past.
   */
  crosses(agentId: string, turn: TurnSpend): string | undefined {
    if (this.budgets.size === 0) return undefined;
    const { agents } = this.host.metrics();
    const table = this.host.table();
    for (let at: string | null = agentId; at !== null; at = table.record(at)?.parentId ?? null) {
      const budgets = this.budgets.get(at);
      if (!budgets) continue;
      const spent = this.spentSince(at, agents);
      const tokens = spent.tokens + turn.inputTokens + turn.outputTokens;
      const costUsd = spent.costUsd + turn.costUsd;
      for (const budget of budgets) {
        const owner = at === agentId ? undefined : at;
        const unpriced = unpricedMessage(budget, turn, owner);
        if (unpriced !== undefined) return unpriced;
        const hit = limitHit(budget, { tokens, costUsd });
        if (hit) return overBudgetMessage(hit, owner);
      }
    }
    return undefined;
  }

  /**
   * Asks to start a model turn of agent `agentId`: refused (the agent whose budget is spent, and the limit used up) when
   * a budget at or above it has no turn left, or its tokens or cost are used up; else the turn is counted under every
   * budget above it before the model is called, so turns in flight at once never pass `maxTurns`.
   */
  reserveTurn(agentId: string): SpentBudget | undefined {
    const spent = this.spentBudget(agentId);
    if (spent !== undefined || this.budgets.size === 0) return spent;
    for (const at of this.budgetedAbove(agentId)) this.turnsStarted.set(at, (this.turnsStarted.get(at) ?? 0) + 1);
    return undefined;
  }

  /** The first agent at or above `agentId` whose subtree has spent a whole budget, and the limit it used up, if any. */
  spentBudget(agentId: string): SpentBudget | undefined {
    if (this.budgets.size === 0) return undefined;
    const { agents } = this.host.metrics();
    for (const at of this.budgetedAbove(agentId)) {
      const figures = { turns: this.turnsStarted.get(at) ?? 0, ...this.spentSince(at, agents) };
      for (const budget of this.budgets.get(at)!) {
        const hit = limitHit(budget, figures, true);
        if (hit) return { owner: at, limit: spentLimit(hit) };
      }
    }
    return undefined;
  }

  /** The budgeted agents at or above `agentId`, nearest first. */
  private budgetedAbove(agentId: string): string[] {
    const table = this.host.table();
    const found: string[] = [];
    for (let at: string | null = agentId; at !== null; at = table.record(at)?.parentId ?? null) {
      if (this.budgets.has(at)) found.push(at);
    }
    return found;
  }

  /** The top-level agent (or group) of the run `id` is in. */
  private rootOf(id: string): string {
    // Read without the check for waiting spawns (`madeRecord`): the walk starts at an agent that has been made (a
    // launch's parent, read first by the launch itself, or an agent restarted), and its ancestors were made before it.
    const table = this.host.table();
    let at = id;
    for (let parent = table.madeRecord(at)?.parentId ?? null; parent !== null; parent = table.madeRecord(parent)?.parentId ?? null) at = parent;
    return at;
  }
}
