import type { AgentActorRef } from './agentMachine.js';
import { AgentQueue, type AgentRun } from './agentQueue.js';
import type { GroupActorRef } from './groupMachine.js';

/** Where an agent is in its lifecycle. */
export type AgentState = 'pending' | 'running' | 'completed' | 'failed';

/** What the supervisor remembers of an agent, during its run and after. Plain data. */
export interface AgentRecord {
  /** The agent's id. */
  readonly id: string;
  /** The name of its definition. */
  readonly name: string;
  /** The agent that spawned it (or last resumed it), or null. */
  parentId: string | null;
  /** The parent's tool call that started it (this run), or null. */
  toolCallId?: string | null;
  /** 0 for a top-level agent. */
  depth: number;
  /** Its state as the supervisor last saw it. */
  state: AgentState;
  /** Counts its runs: 1 for the first, one more each time it is resumed under its id. */
  run: number;
  /** The ids of the agents it spawned (undefined until it spawns one). */
  children?: string[];
  /** True while it holds one of the `maxParallel` slots. */
  holdsSlot?: boolean;
  /** True while its delegation waits for a person's approval. */
  held?: boolean;
  /** True while it waits for messages in `running.waiting`, without a slot. */
  parked?: boolean;
  /** How many of its sub-agents it is waiting for now; it lends its slot while it waits. */
  waits?: number;
  /** The runs of agents waiting for this one to end (one entry per wait). */
  waiters?: AgentRun[];
  /**
   * For a failed agent: the runs that waited for it when it failed, so a restart (`SpawnRequest.restart`) makes them
   * wait for the new attempt. Cleared when it runs again.
   */
  endedWaiters?: AgentRun[];
  /** True for a group (a pattern run such as `sequence`): its children do the work; it never holds a slot. */
  group?: true;
}

/**
 * Spawns asked for and not yet made (see `SpawnBatch`): whatever asks the table about one of them, or about the live
 * agents as a whole, has them made first, so no reader sees the table without them.
 */
export interface PendingSpawns {
  /** How many spawns wait. */
  readonly size: number;
  /** True while the spawn of agent `id` waits. */
  has(id: string): boolean;
  /** Makes every waiting spawn now, in the order they were asked for. */
  flush(): void;
}

/**
 * How the supervisor tells a running agent that its slot was lent to the sub-agents it waits for, or given back to it.
 * By default with an event each (`YIELD`, `RESUME`: {@link slotEvents}), which an inspector sees; without an inspector
 * the runtime tells most agents without a step of theirs (`quietSlotNotices`).
 */
export interface SlotNotices {
  /** The agent's slot is lent to its sub-agents (the table no longer counts it as the agent's: see `record`). */
  lent(agent: AgentActorRef, record: AgentRecord): void;
  /** The agent has a slot again (the table counts it as the agent's: see `record`). */
  returned(agent: AgentActorRef, record: AgentRecord): void;
}

/** Slot notices as events to the agent: `YIELD` when its slot is lent, `RESUME` when it has one again. */
export const slotEvents: SlotNotices = {
  lent: (agent) => agent.send({ type: 'YIELD' }),
  returned: (agent) => agent.send({ type: 'RESUME' }),
};

/**
 * The supervisor's book of agents: a record for every agent it spawned (kept after the agent ends), the actor of
 * every live agent (released when it ends), the queue of agents waiting for a slot, and the agents that want
 * their slot back after waiting for their sub-agents. The supervisor keeps the actors here rather than as XState
 * children, so spawning and releasing cost the same with 10 live agents or 100,000. Groups (pattern runs) have a
 * record like an agent's, so their children can name them as parent and subtrees reach through them, and their
 * actors are kept apart from the agents' (they take no slot, have no mailbox and are never queued).
 */
export class AgentTable {
  private readonly records = new Map<string, AgentRecord>();
  private readonly actors = new Map<string, AgentActorRef>();
  private readonly groups = new Map<string, GroupActorRef>();
  /** Agents waiting for a slot to start. */
  readonly queue = new AgentQueue();
  /** Running agents that lent their slot and want it back; served before `queue`, first come first served. */
  readonly resuming: AgentRun[] = [];
  /** Agents now holding a slot. */
  running = 0;
  /** Spawns put off to the end of the current task, when the runtime batches them (see {@link PendingSpawns}). */
  pending: PendingSpawns | undefined;

  constructor(
    /** How agents are told that their slot is lent or given back (default: with events). */
    private readonly notices: SlotNotices = slotEvents,
  ) {}

  /** Agents and groups not yet ended (pending or running). */
  get active(): number {
    this.spawnPending();
    return this.actors.size + this.groups.size;
  }

  /** Makes the spawns that wait (see {@link PendingSpawns}), if any. */
  spawnPending(): void {
    if (this.pending !== undefined && this.pending.size > 0) this.pending.flush();
  }

  /** Makes the waiting spawns when agent `id`'s is among them: a reader of its record or actor sees it made. */
  private spawnIfPending(id: string): void {
    if (this.pending !== undefined && this.pending.size > 0 && this.pending.has(id)) this.pending.flush();
  }

  /**
   * Adds an agent (pending, or running when it began with a slot) with its actor; returns the record kept. An id that
   * is already known is an ended agent resumed with a new task: its record is used again, in the given state, under
   * the parent given now.
   */
  add(record: AgentRecord, actor: AgentActorRef): AgentRecord {
    const known = this.records.get(record.id);
    if (known) {
      this.unlink(known);
      known.parentId = record.parentId;
      known.toolCallId = record.toolCallId ?? null;
      known.depth = record.depth;
      known.state = record.state;
      known.run += 1;
      known.holdsSlot = false;
      known.held = false;
      known.waits = 0;
      known.waiters = undefined;
      if (known.endedWaiters) known.endedWaiters = undefined;
      this.link(known);
    } else {
      this.records.set(record.id, record);
      this.link(record);
    }
    this.actors.set(record.id, actor);
    return known ?? record;
  }

  /** Adds a running group with its actor (a group's id is new each time: groups are never resumed). */
  addGroup(record: AgentRecord & { group: true }, actor: GroupActorRef): void {
    this.records.set(record.id, record);
    this.link(record);
    this.groups.set(record.id, actor);
  }

  /** The record of an agent, live or ended. */
  record(id: string): AgentRecord | undefined {
    this.spawnIfPending(id);
    return this.records.get(id);
  }

  /**
   * The record of an agent known to have been made (one that runs, or an ancestor of one), without the check for
   * waiting spawns that {@link AgentTable.record} makes: for walks up a tree that run at every launch.
   */
  madeRecord(id: string): AgentRecord | undefined {
    return this.records.get(id);
  }

  /** The actor of a live agent. */
  actor(id: string): AgentActorRef | undefined {
    this.spawnIfPending(id);
    return this.actors.get(id);
  }

  /** The actor of a live group. */
  group(id: string): GroupActorRef | undefined {
    return this.groups.get(id);
  }

  /** The actor of a live agent or group, for what both accept (`CANCEL`, `STOP`). */
  member(id: string): AgentActorRef | GroupActorRef | undefined {
    this.spawnIfPending(id);
    return this.actors.get(id) ?? this.groups.get(id);
  }

  /** The ids of every live agent and group, in the order they were made. */
  liveIds(): string[] {
    this.spawnPending();
    return [...this.actors.keys(), ...this.groups.keys()];
  }

  /** Every live agent with its id (an actor's own id is its kind, `agent:<name>`; this is the agent's). */
  liveAgents(): IterableIterator<[string, AgentActorRef]> {
    this.spawnPending();
    return this.actors.entries();
  }

  /** The id of the live agent or group of this actor kind whose actor crashed (its snapshot in error), if any. */
  crashed(kind: string): string | undefined {
    for (const [id, actor] of this.actors) if (actor.id === kind && actor.getSnapshot().status === 'error') return id;
    for (const [id, group] of this.groups) if (group.id === kind && group.getSnapshot().status === 'error') return id;
    return undefined;
  }

  /** The runs that waited for a failed agent when it failed (for its restart); read once, then forgotten. */
  takeEndedWaiters(id: string): AgentRun[] {
    const record = this.records.get(id);
    const waiters = record?.endedWaiters ?? [];
    if (record?.endedWaiters) record.endedWaiters = undefined;
    return waiters;
  }

  /** Gives an agent a slot. */
  takeSlot(record: AgentRecord): void {
    record.holdsSlot = true;
    this.running += 1;
  }

  /** Lends a running agent's slot to the sub-agents it waits for, and tells it. */
  lendSlot(record: AgentRecord): void {
    this.freeSlot(record);
    const actor = this.actors.get(record.id);
    if (actor) this.notices.lent(actor, record);
  }

  /** Gives a running agent that lent its slot a slot again, and tells it. */
  returnSlot(record: AgentRecord): void {
    this.takeSlot(record);
    const actor = this.actors.get(record.id);
    if (actor) this.notices.returned(actor, record);
  }

  /** Takes an agent's slot away (it waits, or it ended). */
  freeSlot(record: AgentRecord): void {
    if (record.holdsSlot !== true) return;
    record.holdsSlot = false;
    this.running -= 1;
  }

  /** Marks an agent as ended and lets its actor go; returns the agents that were waiting for it. */
  release(id: string, state: 'completed' | 'failed'): AgentRun[] {
    const record = this.records.get(id);
    if (!record) return [];
    this.freeSlot(record);
    record.state = state;
    // Fields are only reset when they were set: records stay small for the many agents that never used them.
    if (record.held) record.held = false;
    if (record.parked) record.parked = false;
    if (record.waits) record.waits = 0;
    const waiters = record.waiters ?? [];
    if (record.waiters) record.waiters = undefined;
    // Kept for a restart, which makes them wait again (only a failed agent with waiters keeps any).
    if (state === 'failed' && waiters.length > 0) record.endedWaiters = waiters;
    this.actors.delete(id);
    if (record.group) this.groups.delete(id);
    return waiters;
  }

  /** Forgets an ended agent's (or group's) record, for good; a live one is kept. */
  forget(id: string): void {
    this.spawnIfPending(id);
    const record = this.records.get(id);
    if (!record || this.actors.has(id) || this.groups.has(id)) return;
    this.unlink(record);
    this.records.delete(id);
  }

  /** The agent and all its descendants, parents before children. */
  subtree(id: string): string[] {
    this.spawnPending();
    const ids: string[] = [];
    const stack = [id];
    while (stack.length > 0) {
      const next = stack.pop()!;
      const record = this.records.get(next);
      if (!record) continue;
      ids.push(next);
      if (record.children) stack.push(...record.children);
    }
    return ids;
  }

  /** A summary for inspectors and logs, instead of every record. */
  toJSON(): { agents: number; active: number; running: number; queued: number } {
    return { agents: this.records.size, active: this.active, running: this.running, queued: this.queue.size };
  }

  private link(record: AgentRecord): void {
    if (record.parentId === null) return;
    const parent = this.records.get(record.parentId);
    if (parent) (parent.children ??= []).push(record.id);
  }

  private unlink(record: AgentRecord): void {
    if (record.parentId === null) return;
    const siblings = this.records.get(record.parentId)?.children;
    const index = siblings?.indexOf(record.id) ?? -1;
    if (siblings && index >= 0) siblings.splice(index, 1);
  }
}
