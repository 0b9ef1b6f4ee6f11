import { addCost } from '../events/metrics.js';
import type { TroupeEvent } from '../events/events.js';
import { LiveTree, type LiveAgent } from './LiveTree.js';

/** The figures of a run over time, one point per time bucket (the last value in it), all arrays of one length. */
export interface RunSeries {
  /** The bucket's time: ms since the run's first event. */
  readonly t: number[];
  /** Agents started and not ended (waiting ones included). */
  readonly running: number[];
  /** Tokens so far, input and output. */
  readonly tokens: number[];
  /** Cost so far, in USD. */
  readonly costUsd: number[];
  /** Messages sent so far. */
  readonly messages: number[];
}

/** At most this many points a series keeps: past it, buckets double in width and neighbours merge. */
const MAX_POINTS = 600;

/**
 * What the web inspector shows of a run, folded from its events one at a time (O(1) each): the agent tree (a
 * {@link LiveTree}), where each agent is in its machine (`state`: a path such as `running.acting.working`, as far as
 * events tell it), the events of each agent's conversation and the messages between agents (as indices into the
 * events folded), and the run's figures over time. Replaying to a moment is folding the events up to it into a new
 * model.
 */
export class RunModel {
  readonly tree = new LiveTree();
  /** How many events were folded (the index the next one gets). */
  count = 0;
  /** The time of the first event folded: the series count from it. */
  startedAt: number | undefined;
  /** The time of the latest event folded. */
  lastAt = 0;
  /** Indices of every `message.sent`, in order. */
  readonly messages: number[] = [];
  /** The index of each message's `message.sent`, by message id. */
  readonly #sent = new Map<string, number>();
  /** Every event type seen, for the log's filter. */
  readonly types = new Set<string>();
  readonly series: RunSeries = { t: [], running: [], tokens: [], costUsd: [], messages: [] };
  readonly #states = new Map<string, string>();
  readonly #entries = new Map<string, number[]>();
  /** For an agent waiting on sub-agents it started in a tool call: how many still run. */
  readonly #waitsOn = new Map<string, number>();
  /** Sub-agents whose callers wait on them, until they end. */
  readonly #awaited = new Set<string>();
  #bucketMs = 1;
  #totals = { tokens: 0, costUsd: 0, messages: 0 };

  /** An agent's (or group's) node. */
  agent(id: string): LiveAgent | undefined {
    return this.tree.get(id);
  }

  /** Where an agent is in its machine, such as `running.thinking` (`pending.queued` before it starts). */
  stateOf(id: string): string | undefined {
    return this.#states.get(id);
  }

  /** The indices of the events about an agent (its conversation, its messages, its end), in order. */
  entriesOf(id: string): readonly number[] {
    return this.#entries.get(id) ?? [];
  }

  /** The index of the `message.sent` of a message, by its id. */
  sentIndex(messageId: string): number | undefined {
    return this.#sent.get(messageId);
  }

  /** Folds the next event in. */
  apply(event: TroupeEvent): void {
    const index = this.count;
    this.count += 1;
    this.startedAt ??= event.at;
    this.lastAt = Math.max(this.lastAt, event.at);
    this.types.add(event.type);
    this.tree.apply(event);
    const entries = this.#entries.get(event.agentId);
    if (entries) entries.push(index);
    else this.#entries.set(event.agentId, [index]);
    this.#follow(event);
    if (event.type === 'model.response') {
      this.#totals.tokens += event.usage.inputTokens + event.usage.outputTokens;
      this.#totals.costUsd = addCost(this.#totals.costUsd, event.costUsd); // on the metrics' grid: no drift
    } else if (event.type === 'message.sent') {
      this.messages.push(index);
      this.#sent.set(event.message.id, index);
      this.#totals.messages += 1;
    }
    this.#sample(event.at);
  }

  /** Moves the agent (and its caller, for a sub-agent it waits on) to the state the event shows. */
  #follow(event: TroupeEvent): void {
    const id = event.agentId;
    const node = this.tree.get(id);
    if (!node) return;
    const state = node.group ? groupState(event) : agentState(event, this.#states.get(id));
    if (state !== undefined) this.#states.set(id, state);
    if (event.parentId === null) return;
    if (event.type === 'agent.spawned' && !event.background && !this.#awaited.has(id)) {
      this.#awaited.add(id);
      this.#waitOn(event.parentId, +1);
    } else if ((event.type === 'agent.completed' || event.type === 'agent.failed') && this.#awaited.delete(id)) {
      this.#waitOn(event.parentId, -1);
    }
  }

  /** A caller acting on a tool call waits while sub-agents it started run. */
  #waitOn(callerId: string, by: 1 | -1): void {
    const caller = this.tree.get(callerId);
    if (!caller || caller.group) return;
    const waiting = Math.max(0, (this.#waitsOn.get(callerId) ?? 0) + by);
    this.#waitsOn.set(callerId, waiting);
    const state = this.#states.get(callerId) ?? '';
    if (!state.startsWith('running.acting')) return;
    this.#states.set(callerId, waiting > 0 ? 'running.acting.waitingForAgents' : 'running.acting.working');
  }

  /** Keeps the figures at `at` as the last point of its bucket; too many points double the buckets' width. */
  #sample(at: number): void {
    const { series } = this;
    const t = at - (this.startedAt ?? at);
    const last = series.t.length - 1;
    const running = this.tree.totals.running;
    const point = [t, running, this.#totals.tokens, this.#totals.costUsd, this.#totals.messages] as const;
    const lists = [series.t, series.running, series.tokens, series.costUsd, series.messages];
    const sameBucket = last >= 0 && Math.floor(series.t[last]! / this.#bucketMs) === Math.floor(t / this.#bucketMs);
    lists.forEach((list, column) => (sameBucket ? (list[last] = point[column]!) : list.push(point[column]!)));
    if (series.t.length > MAX_POINTS) this.#widen();
  }

  /** Doubles the buckets' width and keeps the last point of each new bucket. */
  #widen(): void {
    this.#bucketMs *= 2;
    const { series } = this;
    const lists = [series.t, series.running, series.tokens, series.costUsd, series.messages];
    let kept = 0;
    for (let index = 0; index < series.t.length; index += 1) {
      const next = series.t[index + 1];
      const closes = next === undefined || Math.floor(next / this.#bucketMs) !== Math.floor(series.t[index]! / this.#bucketMs);
      if (!closes) continue;
      for (const list of lists) list[kept] = list[index]!;
      kept += 1;
    }
    for (const list of lists) list.length = kept;
  }
}

/** The state of an agent's machine that an event shows it in, or undefined when the event does not move it. */
function agentState(event: TroupeEvent, now: string | undefined): string | undefined {
  switch (event.type) {
    case 'agent.spawned':
      return 'pending.queued';
    // A delegation's approval holds the pending sub-agent; a tool call's holds its running caller.
    case 'approval.requested':
      return event.tool === undefined ? 'pending.awaitingApproval' : 'running.acting.waitingForPerson';
    case 'approval.granted':
    case 'approval.denied':
      return now?.startsWith('running') ? 'running.acting.working' : event.type === 'approval.granted' ? 'pending.queued' : now;
    case 'agent.started':
    case 'model.request':
      return 'running.thinking';
    case 'model.response':
      return event.toolCalls > 0 ? 'running.acting.working' : now;
    case 'tool.call':
      return now?.startsWith('running.acting') ? now : 'running.acting.working';
    case 'agent.waiting':
      return 'running.waiting';
    default:
      return endState(event);
  }
}

/** The state of a group's machine (pending → running → completed | failed) that an event shows. */
function groupState(event: TroupeEvent): string | undefined {
  switch (event.type) {
    case 'agent.spawned':
      return 'pending';
    case 'agent.started':
      return 'running';
    default:
      return endState(event);
  }
}

/** The final state an agent's or a group's end shows (both machines name them alike). */
function endState(event: TroupeEvent): 'completed' | 'failed' | undefined {
  if (event.type === 'agent.completed') return 'completed';
  return event.type === 'agent.failed' ? 'failed' : undefined;
}
