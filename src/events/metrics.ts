import type { TroupeEvent, TroupeEventOf } from './events.js';

/**
 * The additive figures of an agent, of a subtree of agents, or of a whole run.
 *
 * Every field is a plain sum, so the figures of a subtree are the field-by-field sum of the own
 * figures of its agents, counted while they were in it: an agent resumed by another caller moves under that caller
 * with its figures, but what it did before stays in its old ancestors' subtrees (the new caller's counts what it spends
 * from then on). The run's figures are the sum of every agent's own, plus the messages code (`runtime`) sent and was
 * delivered, which no agent owns.
 */
export type Figures = {
  /** Prompt tokens over every model reply. */
  inputTokens: number;
  /** Completion tokens over every model reply. */
  outputTokens: number;
  /** Cost in US dollars over every model reply, kept on a grid of 1e-12 USD so sums do not drift. */
  costUsd: number;
  /** Model replies (`model.response` events). */
  modelCalls: number;
  /** Tool calls that ended (`tool.result` events), failed ones included. */
  toolCalls: number;
  /** Tool calls that ended with status `error`, and calls whose wait for messages ended in error (`tool.wait_ended`). */
  toolErrors: number;
  /** Messages sent (`message.sent`; a message to a topic counts once). */
  messagesOut: number;
  /** Messages delivered to the agent (`message.delivered`). */
  messagesIn: number;
  /**
   * Running time in milliseconds on the actor system's clock (the events' `at`, never the wall clock).
   *
   * For one agent: from its `agent.started` to its latest event, final once it completes or fails.
   * For a subtree or a run: the sum of the agents' own durations (agent-milliseconds), so it can
   * exceed the elapsed time when agents run in parallel.
   */
  durationMs: number;
};

/** The figures of a whole run, plus how many agents are in each phase of their life. */
export type TotalMetrics = Figures & {
  /** Agents seen, counted once each (an agent first seen through a later event counts too); groups are not counted. */
  agentsSpawned: number;
  /** Agents started and not yet ended. */
  agentsRunning: number;
  /** Agents that ended with an answer. */
  agentsCompleted: number;
  /** Agents that ended without an answer, including those cancelled before they started. */
  agentsFailed: number;
  /** The highest `agentsRunning` so far. */
  peakRunning: number;
};

/** Where an agent is in its life: waiting, running, or ended. */
export type AgentMetricsState = 'pending' | 'running' | 'completed' | 'failed';

/**
 * The metrics of one agent.
 *
 * Entries of {@link MetricsSnapshot.agents} are live: {@link applyEvent} updates them in place.
 */
export type AgentMetrics = {
  /** The name of the agent's definition (its id until an event carrying the name is seen). */
  name: string;
  /** Where the agent is in its life. */
  state: AgentMetricsState;
  /** The agent that spawned it, or null for a top-level agent. */
  parentId: string | null;
  /** 0 for a top-level agent, its parent's depth plus one otherwise. */
  depth: number;
  /**
   * When its clock started: the `at` of its `agent.started` event (or of the first event that showed it running),
   * moved back by the time it already ran when it was resumed; null before it runs.
   */
  startedAt: number | null;
  /** The agent's own figures. */
  own: Figures;
  /** The figures of the agent and every agent it spawned, recursively. */
  subtree: Figures;
  /**
   * True for a group (a pattern run such as `sequence`): its own figures stay zero (it does no work, and its running
   * time is not counted), so its `subtree` is the sum of its members'; it is not counted among the agents in `total`.
   */
  group?: true;
};

/**
 * Metrics folded from a stream of {@link TroupeEvent}s.
 *
 * **`agents` is live.** To stay O(depth) per event with many thousands of agents, {@link applyEvent}
 * mutates the `agents` record and its entries in place and hands the same record to every snapshot it
 * returns; only the outer object and `total` are new each time. So `snapshot.total` is a stable
 * value, but `snapshot.agents` of an old snapshot shows the latest figures. To keep a snapshot as it
 * was, copy it: `structuredClone(snapshot)`.
 */
export type MetricsSnapshot = {
  /** Figures and agent counts of the whole run; a fresh object in every snapshot. */
  total: TotalMetrics;
  /**
   * Every agent seen, by id; live, updated in place (see {@link MetricsSnapshot}). A runtime's metrics drop the entries
   * of the oldest finished runs past its `retainFinished` (`total` still counts them).
   */
  agents: Record<string, AgentMetrics>;
};

/** Figures with every field zero. */
export function emptyFigures(): Figures {
  return { inputTokens: 0, outputTokens: 0, costUsd: 0, modelCalls: 0, toolCalls: 0, toolErrors: 0, messagesOut: 0, messagesIn: 0, durationMs: 0 };
}

/** The metrics before any event: no agents, every figure zero. A fresh object each call. */
export function createMetrics(): MetricsSnapshot {
  return {
    total: { ...emptyFigures(), agentsSpawned: 0, agentsRunning: 0, agentsCompleted: 0, agentsFailed: 0, peakRunning: 0 },
    agents: Object.create(null) as Record<string, AgentMetrics>,
  };
}

/**
 * Folds one event into the metrics, in O(depth of the agent) time.
 *
 * Returns a new snapshot whose `total` is a fresh copy and whose `agents` is `state.agents`, mutated
 * in place (see {@link MetricsSnapshot}); `state.total` is left untouched.
 *
 * - `agent.spawned` adds the agent as `pending` and counts it in `agentsSpawned`. For an agent that ended and is
 *   resumed under the same id, it makes the agent `pending` again (no longer counted as completed or failed),
 *   moves it under the parent named by the event (what it spawned moves with it, each a depth below its parent), and
 *   keeps its figures: its duration goes on from where it was.
 * - `agent.started` makes it `running` and starts its clock.
 * - `agent.completed` / `agent.failed` end it; only an agent that was running leaves `agentsRunning`,
 *   so one cancelled while still pending only counts as failed. A second ending is ignored.
 * - `model.response` adds its tokens, its cost and one model call; `tool.result` adds one tool call,
 *   and one tool error when its status is `error`; `tool.wait_ended` adds one tool error when its wait ended in error.
 * - Every event of a running agent moves its `own.durationMs` to `at − startedAt` (never backwards).
 *
 * - `message.sent` counts one message out for its sender, `message.delivered` one message in for its receiver; code
 *   (`runtime`) has no entry, so its messages count in `total` only. Message and blackboard events never create an
 *   entry for an agent not seen before.
 *
 * - A group (`agent.spawned` with `group: true`) gets an entry with `group: true` and a state, but no running time
 *   and no place in the agent counts of `total`: only its members' figures reach its subtree.
 *
 * Each addition to an agent's own figures is also made to its subtree figures, to the subtree figures
 * of each known ancestor (following `parentId` through `agents`) and to `total`.
 *
 * Events for an agent never spawned in this fold (a subscriber that joined late) do not throw: they
 * create a minimal entry, counted in `agentsSpawned`, with the event's `parentId`, a depth one below
 * its parent's (0 if top-level, 1 if the parent is unknown too) and the name from the event or else
 * the id. A `model.*` or `tool.*` event shows that the agent is running, so such an entry starts
 * `running` with its clock at that event; an entry first seen through `agent.started`, `agent.completed`
 * or `agent.failed` starts `pending` and takes that event as usual. Figures from before the first seen
 * event are unknown and not counted. A parent link that would close a cycle is dropped (set to null).
 */
export function applyEvent(state: MetricsSnapshot, event: TroupeEvent): MetricsSnapshot {
  const next: MetricsSnapshot = { total: { ...state.total }, agents: state.agents };
  foldEvent(next, event);
  return next;
}

/**
 * Folds one event into `state` in place: {@link applyEvent} without the fresh `total`. The runtime keeps its own
 * metrics this way (one fold for every event, nothing allocated for it) and copies `total` only for a snapshot it hands
 * out (`runtime.metrics()`, each value of `metrics$`).
 */
export function foldEvent(state: MetricsSnapshot, event: TroupeEvent): void {
  const { total, agents } = state;
  const known = agents[event.agentId];
  if (event.type === 'agent.spawned') return spawned(agents, total, known, event);
  if (event.type === 'message.sent' || event.type === 'message.delivered') return countMessage(agents, total, known, event);
  if (!known && (event.type.startsWith('message.') || event.type === 'blackboard.changed')) return;
  const agent = known ?? adopt(agents, total, event);
  if (agent.group) groupStep(agent, event);
  else agentStep(agents, total, agent, event);
}

/** A snapshot of live metrics: a fresh copy of `total`, the same live `agents` (see {@link MetricsSnapshot}). */
export function snapshotOf(state: MetricsSnapshot): MetricsSnapshot {
  return { total: { ...state.total }, agents: state.agents };
}

/** `agent.spawned`: a new entry (an agent or a group), or a known one renamed, re-parented or reopened (resumed). */
function spawned(agents: MetricsSnapshot['agents'], total: TotalMetrics, known: AgentMetrics | undefined, event: TroupeEventOf<'agent.spawned'>): void {
  if (known) {
    known.name = event.name;
    if (!closesCycle(agents, event.agentId, event.parentId)) known.parentId = event.parentId;
    if (known.depth !== event.depth) moveDepth(agents, event.agentId, known, event.depth);
    if (known.state === 'completed' || known.state === 'failed') reopen(known, total);
  } else if (event.group) {
    addGroup(agents, event);
  } else {
    addAgent(agents, total, event.agentId, event.parentId, event.name, event.depth);
  }
}

/**
 * Gives an agent moved to another depth (resumed under another caller) its new depth, and every agent below it its
 * depth one below its parent's. A walk over every entry, made only when an agent moves (rare).
 */
function moveDepth(agents: Record<string, AgentMetrics>, id: string, moved: AgentMetrics, depth: number): void {
  const by = depth - moved.depth;
  moved.depth = depth;
  for (const entry of Object.values(agents)) {
    if (entry === moved) continue;
    for (let up = entry.parentId; up !== null; up = agents[up]?.parentId ?? null) {
      if (up !== id) continue;
      entry.depth += by;
      break;
    }
  }
}

/** A message sent or delivered: counted for the run, and for the agent and its ancestors when the agent is known. */
function countMessage(
  agents: MetricsSnapshot['agents'],
  total: TotalMetrics,
  known: AgentMetrics | undefined,
  event: TroupeEventOf<'message.sent' | 'message.delivered'>,
): void {
  const field = event.type === 'message.sent' ? 'messagesOut' : 'messagesIn';
  total[field] += 1;
  if (!known) return;
  tick(agents, total, known, event.at);
  for (let up: AgentMetrics | undefined = known; up; up = parentOf(agents, up)) {
    if (up === known) known.own[field] += 1;
    up.subtree[field] += 1;
  }
}

/** A group's own events: it starts and ends; its figures are its members'. */
function groupStep(group: AgentMetrics, event: TroupeEvent): void {
  if (event.type === 'agent.started' && group.state === 'pending') {
    group.state = 'running';
    group.startedAt = event.at;
  } else if (event.type === 'agent.completed' || event.type === 'agent.failed') endGroup(group, event.type);
}

/** An agent's event: its state, and the usage and tool calls it adds to itself, its ancestors and the run. */
function agentStep(agents: MetricsSnapshot['agents'], total: TotalMetrics, agent: AgentMetrics, event: TroupeEvent): void {
  switch (event.type) {
    case 'agent.started':
      agent.name = event.name;
      if (agent.state === 'pending') {
        agent.state = 'running';
        // A resumed agent keeps the time it already ran: its clock starts that much earlier.
        agent.startedAt = event.at - agent.own.durationMs;
        startRunning(total);
      }
      break;
    case 'agent.completed':
    case 'agent.failed':
      agent.name = event.name;
      tick(agents, total, agent, event.at);
      ended(total, agent, event.type === 'agent.completed' ? 'completed' : 'failed');
      break;
    case 'model.response': {
      tick(agents, total, agent, event.at);
      const { inputTokens, outputTokens } = event.usage;
      const cost = event.costUsd;
      addUsage(agent.own, inputTokens, outputTokens, cost);
      addUsage(agent.subtree, inputTokens, outputTokens, cost);
      for (let up = parentOf(agents, agent); up; up = parentOf(agents, up)) addUsage(up.subtree, inputTokens, outputTokens, cost);
      addUsage(total, inputTokens, outputTokens, cost);
      break;
    }
    case 'tool.result': {
      tick(agents, total, agent, event.at);
      const error = event.status === 'error' ? 1 : 0;
      addTool(agent.own, error);
      addTool(agent.subtree, error);
      for (let up = parentOf(agents, agent); up; up = parentOf(agents, up)) addTool(up.subtree, error);
      addTool(total, error);
      break;
    }
    case 'tool.wait_ended': {
      // The call was counted by its `tool.result`; a wait that ended in error makes it a failed one.
      tick(agents, total, agent, event.at);
      if (event.status === 'error') {
        agent.own.toolErrors += 1;
        agent.subtree.toolErrors += 1;
        for (let up = parentOf(agents, agent); up; up = parentOf(agents, up)) up.subtree.toolErrors += 1;
        total.toolErrors += 1;
      }
      break;
    }
    default:
      tick(agents, total, agent, event.at);
  }
}

/** An agent that ends: out of the running count, and counted as completed or failed (once). */
function ended(total: TotalMetrics, agent: AgentMetrics, state: 'completed' | 'failed'): void {
  if (agent.state === 'running') total.agentsRunning -= 1;
  if (agent.state !== 'running' && agent.state !== 'pending') return;
  agent.state = state;
  if (state === 'completed') total.agentsCompleted += 1;
  else total.agentsFailed += 1;
}

/** Costs are summed on a grid of 1e-12 USD, so sums are exact integers of picodollars below ~$1,500. */
const COST_GRID = 1e12;

/**
 * Adds a cost without drift: the sum is snapped to the grid of 1e-12 USD the metrics keep costs on, so a sum made
 * elsewhere (an agent's own figures) equals the metrics' (`0.1 + 0.2` is `0.3`, not `0.30000000000000004`).
 */
export function addCost(sum: number, cost: number): number {
  return Math.round((sum + cost) * COST_GRID) / COST_GRID;
}

function addUsage(figures: Figures, inputTokens: number, outputTokens: number, cost: number): void {
  figures.inputTokens += inputTokens;
  figures.outputTokens += outputTokens;
  figures.costUsd = addCost(figures.costUsd, cost);
  figures.modelCalls += 1;
}

function addTool(figures: Figures, error: number): void {
  figures.toolCalls += 1;
  figures.toolErrors += error;
}

/** The known parent entry of an agent, or undefined at the top or when the parent was never seen. */
function parentOf(agents: Record<string, AgentMetrics>, agent: AgentMetrics): AgentMetrics | undefined {
  return agent.parentId === null ? undefined : agents[agent.parentId];
}

function startRunning(total: TotalMetrics): void {
  total.agentsRunning += 1;
  if (total.agentsRunning > total.peakRunning) total.peakRunning = total.agentsRunning;
}

/** Moves a running agent's clock to `at`, rolling the added milliseconds up to its ancestors and the total. */
function tick(agents: Record<string, AgentMetrics>, total: TotalMetrics, agent: AgentMetrics, at: number): void {
  if (agent.state !== 'running' || agent.startedAt === null) return;
  const added = at - agent.startedAt - agent.own.durationMs;
  if (!(added > 0)) return;
  agent.own.durationMs += added;
  agent.subtree.durationMs += added;
  for (let up = parentOf(agents, agent); up; up = parentOf(agents, up)) up.subtree.durationMs += added;
  total.durationMs += added;
}

/** Adds a group's entry: like an agent's, but not counted in `total`. */
function addGroup(agents: Record<string, AgentMetrics>, event: Extract<TroupeEvent, { type: 'agent.spawned' }>): void {
  const { agentId, parentId, name, depth } = event;
  const parent = closesCycle(agents, agentId, parentId) ? null : parentId;
  agents[agentId] = {
    name,
    state: 'pending',
    parentId: parent,
    depth,
    startedAt: null,
    own: emptyFigures(),
    subtree: emptyFigures(),
    group: true,
  };
}

/** A group ends; it is not counted among the agents. */
function endGroup(group: AgentMetrics, type: 'agent.completed' | 'agent.failed'): void {
  if (group.state === 'running' || group.state === 'pending') group.state = type === 'agent.completed' ? 'completed' : 'failed';
}

/** An ended agent resumed under the same id: pending again, and no longer counted as ended. */
function reopen(agent: AgentMetrics, total: TotalMetrics): void {
  if (agent.state === 'completed') total.agentsCompleted -= 1;
  else total.agentsFailed -= 1;
  agent.state = 'pending';
  agent.startedAt = null;
}

function addAgent(
  agents: Record<string, AgentMetrics>,
  total: TotalMetrics,
  id: string,
  parentId: string | null,
  name: string,
  depth: number,
): AgentMetrics {
  const agent: AgentMetrics = {
    name,
    state: 'pending',
    parentId: closesCycle(agents, id, parentId) ? null : parentId,
    depth,
    startedAt: null,
    own: emptyFigures(),
    subtree: emptyFigures(),
  };
  agents[id] = agent;
  total.agentsSpawned += 1;
  return agent;
}

/** True when `parentId`, or one of its known ancestors, is `id` itself (only malformed events do that). */
function closesCycle(agents: Record<string, AgentMetrics>, id: string, parentId: string | null): boolean {
  for (let up = parentId; up !== null; up = agents[up]?.parentId ?? null) {
    if (up === id) return true;
  }
  return false;
}

/** Creates the minimal entry of an agent first seen through an event other than `agent.spawned`. */
function adopt(
  agents: Record<string, AgentMetrics>,
  total: TotalMetrics,
  event: Exclude<TroupeEvent, { type: 'agent.spawned' }>,
): AgentMetrics {
  const parent = event.parentId === null ? undefined : agents[event.parentId];
  const depth = event.parentId === null ? 0 : parent ? parent.depth + 1 : 1;
  const name = 'name' in event ? event.name : event.agentId;
  const agent = addAgent(agents, total, event.agentId, event.parentId, name, depth);
  if (event.type.startsWith('model.') || event.type.startsWith('tool.')) {
    agent.state = 'running';
    agent.startedAt = event.at;
    startRunning(total);
  }
  return agent;
}
