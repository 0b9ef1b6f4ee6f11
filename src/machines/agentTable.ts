import type { AgentActorRef } from './agentMachine.js';
import { AgentQueue } from './agentQueue.js';

/** Where an agent is in its lifecycle. */
export type AgentState = 'pending' | 'running' | 'completed' | 'failed';

/** What the supervisor remembers of an agent, during its run and after. Plain data. */
export interface AgentRecord {
  /** The agent's id. */
  readonly id: string;
  /** The name of its definition. */
  readonly name: string;
  /** The agent that spawned it, or null. */
  readonly parentId: string | null;
  /** 0 for a top-level agent. */
  readonly depth: number;
  /** Its state as the supervisor last saw it. */
  state: AgentState;
  /** The ids of the agents it spawned (undefined until it spawns one). */
  children?: string[];
}

/**
 * The supervisor's book of agents: a record for every agent it spawned (kept after the agent ends), the actor of
 * every live agent (released when it ends), and the queue of agents waiting for a slot. The supervisor keeps the
 * actors here rather than as XState children, so spawning and releasing cost the same with 10 live agents or
 * 100,000.
 */
export class AgentTable {
  private readonly records = new Map<string, AgentRecord>();
  private readonly actors = new Map<string, AgentActorRef>();
  /** Agents waiting for a slot. */
  readonly queue = new AgentQueue();
  /** Agents now running. */
  running = 0;

  /** Agents not yet ended (pending or running). */
  get active(): number {
    return this.actors.size;
  }

  /** Adds a new, pending agent with its actor. */
  add(record: AgentRecord, actor: AgentActorRef): void {
    this.records.set(record.id, record);
    this.actors.set(record.id, actor);
    if (record.parentId !== null) {
      const parent = this.records.get(record.parentId);
      if (parent) (parent.children ??= []).push(record.id);
    }
  }

  /** The record of an agent, live or ended. */
  record(id: string): AgentRecord | undefined {
    return this.records.get(id);
  }

  /** The actor of a live agent. */
  actor(id: string): AgentActorRef | undefined {
    return this.actors.get(id);
  }

  /** Every live agent's actor. */
  liveActors(): IterableIterator<AgentActorRef> {
    return this.actors.values();
  }

  /** Marks an agent as ended and lets its actor go; returns the state it was in. */
  release(id: string, state: 'completed' | 'failed'): AgentState | undefined {
    const record = this.records.get(id);
    if (!record) return undefined;
    const was = record.state;
    if (was === 'running') this.running -= 1;
    record.state = state;
    this.actors.delete(id);
    return was;
  }

  /** The agent and all its descendants, parents before children. */
  subtree(id: string): string[] {
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
}
