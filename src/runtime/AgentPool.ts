import { createHash } from 'node:crypto';
import type { ResolvedAgent } from '../actors/agentEnvironment.js';
import { toolNamesOf } from '../catalog/resolveAgent.js';
import type { Clock } from '../clock.js';
import type { TimerKind } from './RuntimeClock.js';
import { ConfigurationError } from '../errors.js';
import type { ChatMessage } from '../models/Model.js';
import { describeUnknownKeys, unknownKeys } from '../unknownKeys.js';

/** Limits of the pool of idle agents. */
export interface PoolOptions {
  /** At most this many idle agents are kept per pool key; the oldest goes first. Default 4. */
  maxIdlePerKey?: number;
  /** An idle agent not reused for this long (on the runtime's clock) is let go. Default 10 minutes. */
  idleTimeoutMs?: number;
}

/** How the pool has done so far. */
export interface PoolStats {
  /** Tasks given to an idle agent from the pool. */
  hits: number;
  /** Tasks of a pooled kind that found no idle agent and got a new one. */
  misses: number;
  /** Idle agents let go: past the idle time, past the limit per key, or made stale by a changed definition. */
  evictions: number;
  /** Idle agents in the pool now. */
  idle: number;
}

/** An idle agent: its id and the conversation it ended with. */
export interface PooledAgent {
  id: string;
  messages: readonly ChatMessage[];
}

interface Entry extends PooledAgent {
  name: string;
  timer: unknown;
}

/**
 * Idle agents kept for their next task, by pool key: the agent's name, a hash of its system prompt and a hash of its
 * sorted tool list, so a changed definition (an edited agent file, say) gets a new key and its old agents are never
 * reused. Idle agents are let go after `idleTimeoutMs` on the runtime's clock, and beyond `maxIdlePerKey`.
 */
export class AgentPool {
  private readonly idle = new Map<string, Entry[]>();
  private readonly maxIdlePerKey: number;
  private readonly idleTimeoutMs: number;
  private readonly counts = { hits: 0, misses: 0, evictions: 0 };

  constructor(
    private readonly clock: Clock,
    options: PoolOptions = {},
  ) {
    // `null` would throw a TypeError below; a misspelled field (`maxIdle`) would leave its default in force unsaid.
    if (typeof options !== 'object' || options === null || Array.isArray(options)) {
      throw new ConfigurationError('pool must be an object with maxIdlePerKey or idleTimeoutMs.');
    }
    const unknown = unknownKeys(options, ['maxIdlePerKey', 'idleTimeoutMs']);
    if (unknown.length > 0) {
      throw new ConfigurationError(`pool: ${describeUnknownKeys(unknown, 'field')}; its fields are maxIdlePerKey and idleTimeoutMs.`);
    }
    const { maxIdlePerKey = 4, idleTimeoutMs = 10 * 60_000 } = options;
    if (!(Number.isInteger(maxIdlePerKey) && maxIdlePerKey >= 0)) {
      throw new ConfigurationError('pool.maxIdlePerKey must be a whole number ≥ 0.');
    }
    // A number, not just something above 0: a string ('60000') would be added to the clock's time as text.
    if (!(typeof idleTimeoutMs === 'number' && idleTimeoutMs > 0)) throw new ConfigurationError('pool.idleTimeoutMs must be a positive number.');
    this.maxIdlePerKey = maxIdlePerKey;
    this.idleTimeoutMs = idleTimeoutMs;
  }

  /**
   * The pool key of an agent definition: name, system prompt hash, tool list hash; and the conversation key it serves,
   * when a caller from code gave one (an agent pooled under one key is never handed to another's conversation).
   */
  key(agent: ResolvedAgent, conversationKey?: string): string {
    const tools = toolNamesOf(agent).sort().join('\n');
    const definition = `${agent.name}:${hash(agent.definition.systemPrompt)}:${hash(tools)}`;
    return conversationKey === undefined ? definition : `${definition}${CONVERSATION}${hash(conversationKey)}`;
  }

  /**
   * Takes an idle agent for a new task (the most recently idle one that `usable` accepts; others are let go),
   * counting a hit or a miss.
   */
  take(key: string, name: string, usable: (id: string) => boolean = () => true): PooledAgent | undefined {
    const entries = this.idle.get(key);
    let entry = entries?.pop();
    while (entry && !usable(entry.id)) {
      this.clock.clearTimeout(entry.timer);
      this.counts.evictions += 1;
      entry = entries?.pop();
    }
    if (entries?.length === 0) this.idle.delete(key);
    if (!entry) {
      this.counts.misses += 1;
      this.dropStale(name, key);
      return undefined;
    }
    this.clock.clearTimeout(entry.timer);
    this.counts.hits += 1;
    return { id: entry.id, messages: entry.messages };
  }

  /** Puts an agent that finished its task back, to wait for the next one (once: an agent is idle in one place). */
  put(key: string, name: string, agent: PooledAgent): void {
    if (this.maxIdlePerKey === 0) return;
    this.remove(agent.id);
    const entries = this.idle.get(key) ?? [];
    const entry: Entry = { id: agent.id, messages: agent.messages, name, timer: undefined };
    // Housekeeping: on the runtime's clock a background timer (it keeps no process alive, and a simulation does not wait
    // for it); on a plain clock, an unref'd one.
    entry.timer = (this.clock.setTimeout as (fn: () => void, ms: number, kind?: TimerKind) => unknown).call(
      this.clock,
      () => this.evict(key, entry),
      this.idleTimeoutMs,
      'background',
    );
    (entry.timer as { unref?: () => void } | undefined)?.unref?.();
    entries.push(entry);
    this.idle.set(key, entries);
    while (entries.length > this.maxIdlePerKey) this.evict(key, entries[0]!);
  }

  /** Takes an agent out of the pool without counting a hit (it was resumed by hand); true if it was idle here. */
  remove(id: string): boolean {
    for (const [key, entries] of this.idle) {
      const entry = entries.find((candidate) => candidate.id === id);
      if (!entry) continue;
      entries.splice(entries.indexOf(entry), 1);
      if (entries.length === 0) this.idle.delete(key);
      this.clock.clearTimeout(entry.timer);
      return true;
    }
    return false;
  }

  /** How the pool has done so far. */
  stats(): PoolStats {
    let idle = 0;
    for (const entries of this.idle.values()) idle += entries.length;
    return { ...this.counts, idle };
  }

  /** Lets every idle agent go and clears their timers. */
  clear(): void {
    for (const [key, entries] of this.idle) for (const entry of [...entries]) this.evict(key, entry);
  }

  /** Lets go of idle agents of this name kept under another key: their definition has changed since. */
  private dropStale(name: string, current: string): void {
    const definition = definitionPart(current);
    for (const [key, entries] of this.idle) {
      if (definitionPart(key) === definition) continue; // this key, or the same definition pooled for another conversation key
      for (const entry of [...entries]) if (entry.name === name) this.evict(key, entry);
    }
  }

  private evict(key: string, entry: Entry): void {
    const entries = this.idle.get(key);
    const index = entries?.indexOf(entry) ?? -1;
    if (!entries || index < 0) return;
    entries.splice(index, 1);
    if (entries.length === 0) this.idle.delete(key);
    this.clock.clearTimeout(entry.timer);
    this.counts.evictions += 1;
  }
}

function hash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 12);
}

/** Between a pool key's definition part and the conversation key it serves. */
const CONVERSATION = '@';

/** The part of a pool key that names the definition (what changes when its agent file changes). */
function definitionPart(key: string): string {
  const at = key.indexOf(CONVERSATION);
  return at < 0 ? key : key.slice(0, at);
}
