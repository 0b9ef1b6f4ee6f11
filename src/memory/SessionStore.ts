import { hostname } from 'node:os';
import { z } from 'zod';
import { ConfigurationError, errorMessage, UnsupportedSchemaError } from '../errors.js';
import { FailureReason } from '../events/events.js';
import { ErrorInfo, errorFromText } from '../failure.js';
import { ChatMessage } from '../models/Model.js';
import type { Redactor } from '../redaction.js';
import { checkSchemaVersion, SESSION_SCHEMA_VERSION } from '../schemaVersion.js';
import { isRunning } from './fileLock.js';
import { JsonFileMemory } from './JsonFileMemory.js';
import { processStartTime, START_TOLERANCE_MS } from './processStart.js';
import type { MemoryPort } from './MemoryPort.js';

const HOST = hostname();
/** This process, as the owner of the sessions it runs: its pid, host, and when it started (pids are reused). */
const OWNER = { pid: process.pid, host: HOST, startedAt: Math.round(Date.now() - process.uptime() * 1000) };

/**
 * True when the process that owned a session is gone: on this host, its pid no longer runs, or the process that has
 * it now started at another time (an earlier process had it: pids are reused, and start over after a reboot). Where a
 * process's start cannot be told (not Linux), a running pid is taken for the owner. An owner on another host, or none
 * (a record written before owners), is never judged gone.
 */
function ownerGone(owner: SessionRecord['owner']): boolean {
  if (!owner || owner.host !== HOST) return false;
  if (owner.pid === process.pid) return Math.abs(owner.startedAt - OWNER.startedAt) > 1_000;
  if (!isRunning(owner.pid)) return true;
  const started = processStartTime(owner.pid);
  return started !== undefined && Math.abs(started - owner.startedAt) > START_TOLERANCE_MS;
}

/**
 * The sessions the runtimes of this process hold, by store (a `JsonFileMemory` by its file, so store objects on one
 * file share theirs; another store by itself): each agent from its launch to its end, and each session claimed for a
 * resume. A session this process marked pending or running, and no runtime of it holds, was left so (a write that
 * failed): a resume may take it.
 */
const HELD = { byFile: new Map<string, Set<string>>(), byStore: new WeakMap<object, Set<string>>() };

/** The ids held on a store, made on first use (the set of a store object goes with it). */
function heldOn(memory: MemoryPort<unknown>): Set<string> {
  if (!(memory instanceof JsonFileMemory)) {
    let ids = HELD.byStore.get(memory);
    if (!ids) HELD.byStore.set(memory, (ids = new Set()));
    return ids;
  }
  let ids = HELD.byFile.get(memory.file);
  if (!ids) HELD.byFile.set(memory.file, (ids = new Set()));
  return ids;
}

/** True when two owners are one process: the same host, pid and start. */
function sameOwner(owner: SessionRecord['owner'], other: typeof OWNER): boolean {
  return owner?.host === other.host && owner.pid === other.pid && Math.abs(owner.startedAt - other.startedAt) <= 1_000;
}

/** The key under which every session record is kept, in one object by agent id. */
export const SESSIONS_KEY = '__agent_sessions__';

const FiguresSchema = z.object({
  inputTokens: z.number(),
  outputTokens: z.number(),
  costUsd: z.number(),
  modelCalls: z.number(),
  toolCalls: z.number(),
  toolErrors: z.number(),
  // Sessions written before messaging have no message counts.
  messagesOut: z.number().default(0),
  messagesIn: z.number().default(0),
  durationMs: z.number(),
});

/**
 * One agent's session, as stored: who it is, where it hangs, how it went. Plain JSON. A record of a newer
 * `schemaVersion` than {@link SESSION_SCHEMA_VERSION} does not parse: it is left out of lists and left as it is.
 */
export const SessionRecord = z
  .object({
  /**
   * The record's format ({@link SESSION_SCHEMA_VERSION}); records written before the field are version 1, and every
   * record reads in today's shape.
   */
  schemaVersion: z.union([z.literal(1), z.literal(2), z.literal(3), z.literal(SESSION_SCHEMA_VERSION)]).default(1),
  /** The agent's id; its conversation is stored under this key too. */
  id: z.string(),
  /** The name of the agent's definition. */
  agentType: z.string(),
  /** The conversation it was started from: its parent agent's id, or the caller's key (`main`) for a top-level run. */
  parentConversationId: z.string().nullable(),
  /**
   * `interrupted`: it was pending or running in a process that is gone (killed, crashed); it may be resumed from its
   * last checkpoint.
   */
  state: z.enum(['pending', 'running', 'completed', 'failed', 'interrupted']),
  /** The process that runs (or ran) it: on this host, a pid that no longer runs means it was interrupted. */
  owner: z.object({ pid: z.number(), host: z.string(), startedAt: z.number() }).optional(),
  /** The task it was given last. */
  taskDescription: z.string(),
  /** Wall-clock ms (since 1970) when it was spawned (or last resumed). */
  startTime: z.number(),
  /** Wall-clock ms when it ended, or null while it runs. */
  endTime: z.number().nullable(),
  /** Its final answer, when it completed. */
  result: z.string().nullable(),
  /** What went wrong, when it failed: its code, side and message (a text in version 1). */
  error: z.union([ErrorInfo, z.string()]).nullable(),
  /** Why it failed, when it did. */
  reason: FailureReason.nullable().optional(),
  /** Its figures for the last run: its own and its subtree's. */
  metrics: z.object({ own: FiguresSchema, subtree: FiguresSchema }).nullable(),
  })
  .transform((record) => ({
    ...record,
    schemaVersion: SESSION_SCHEMA_VERSION,
    error: typeof record.error === 'string' ? errorFromText(record.error, record.reason) : record.error,
  }));
/** One agent's session, as stored. */
export type SessionRecord = z.infer<typeof SessionRecord>;

/** Sessions as the runtime shows them: read them, find them by parent, clean old ones up. */
export interface SessionManager {
  /** One session, or undefined; a record written by a newer troupe is refused with `UnsupportedSchemaError`. */
  get(id: string): Promise<SessionRecord | undefined>;
  /** Every session, oldest first. */
  list(): Promise<SessionRecord[]>;
  /** The sessions that are pending or running. */
  running(): Promise<SessionRecord[]>;
  /** The sessions started from this conversation (an agent id, or `main` for top-level runs). */
  byParent(id: string): Promise<SessionRecord[]>;
  /** The stored conversation of a session (without its system prompt). */
  conversation(id: string): Promise<ChatMessage[] | undefined>;
  /**
   * Removes sessions (records and conversations) that ended more than `maxAgeMs` ago, and those that never ended
   * (their process died) and started that long ago; returns their ids. A session still running, in this process or
   * in another live process of this host, is kept, however old. An age that is not a number (or is NaN) is refused
   * with `ConfigurationError`.
   */
  cleanup(maxAgeMs: number): Promise<string[]>;
  /**
   * Marks the sessions whose process is gone (pending or running there, their owner a process of this host that no
   * longer runs) as `interrupted` in the store, and returns their ids; `get` and `list` show them so already. With
   * `otherHosts: true` it also marks those whose owner ran on another host (or is not named), which troupe cannot check:
   * give it when you know those processes are gone (a container that was replaced runs under a new host name).
   */
  recover(options?: RecoverOptions): Promise<string[]>;
}

/** Options of {@link SessionManager.recover}. */
export interface RecoverOptions {
  /** Also mark the sessions owned by processes of other hosts (or of no named owner) as interrupted. Default false. */
  otherHosts?: boolean;
}

/**
 * The runtime's sessions in a {@link MemoryPort}: each agent's conversation under its id (`agent:{name}:{key}`) and
 * its record in `__agent_sessions__`. Records and conversations are parsed where they come in, so a session written
 * by another process (or by hand) that does not fit is left out rather than trusted.
 */
export class SessionStore implements SessionManager {
  private readonly pending = new Set<Promise<unknown>>();
  private readonly failures: unknown[] = [];
  /** Record changes not written yet, in order; written together at the end of the current tick. */
  private changes: ((sessions: Record<string, unknown>) => void)[] = [];
  private conversations = new Map<string, ChatMessage[]>();
  private scheduled = false;
  /**
   * True while a write of records and conversations is under way: what changes meanwhile waits and goes in the next
   * write, all together. A store that is slow to take (its lock held by another process) then costs one wait more, not
   * one a tick.
   */
  private writing = false;
  /** The last write: each write starts after the one before, so a store that does not queue keeps them in order. */
  private tail: Promise<unknown> = Promise.resolve();
  /** The sessions this process holds on this store (see {@link HELD}). */
  private readonly held: Set<string>;
  /** Sessions let go by the changes not written yet: let go too if their write fails (the store keeps them marked). */
  private lettingGo: string[] = [];
  /** Conversations of forgotten sessions, deleted from the store by the next write. */
  private deleting: string[] = [];

  /**
   * @param memory where sessions are kept.
   * @param options `now` for record times (default `Date.now`); `isLive` tells whether this process runs a session
   *   now, so `cleanup` never removes one of those; `redactor` replaces secrets in what is written (tasks, answers,
   *   errors, conversations), so none reaches the store. With `redactWhenRead` (for a store only this object reads and
   *   writes, in this process: the runtime's own in-memory store) secrets are replaced as records and conversations
   *   are read instead, so an agent that ends costs no walk over its conversation; what the reads give is the same.
   */
  constructor(
    private readonly memory: MemoryPort<unknown>,
    private readonly options: { now?: () => number; isLive?: (id: string) => boolean; redactor?: Redactor; redactWhenRead?: boolean } = {},
  ) {
    this.held = heldOn(memory);
  }

  /** A value with its secrets replaced, when the store has a redactor. */
  private redact<T>(value: T): T {
    return this.options.redactor ? this.options.redactor.redact(value) : value;
  }

  /** A value as it is written: redacted now, unless the store's reads redact it (`redactWhenRead`). */
  private stored<T>(value: T): T {
    return this.options.redactWhenRead ? value : this.redact(value);
  }

  /** A value as a read gives it: redacted now if it was written as it was (`redactWhenRead`). */
  private shown<T>(value: T): T {
    return this.options.redactWhenRead ? this.redact(value) : value;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  /** Records a new (or resumed) agent as pending. */
  spawned(record: Pick<SessionRecord, 'id' | 'agentType' | 'parentConversationId' | 'taskDescription'>): void {
    const session: SessionRecord = {
      schemaVersion: SESSION_SCHEMA_VERSION,
      id: record.id,
      agentType: record.agentType,
      parentConversationId: record.parentConversationId,
      taskDescription: this.stored(record.taskDescription),
      state: 'pending',
      owner: OWNER,
      startTime: this.now(),
      endTime: null,
      result: null,
      error: null,
      reason: null,
      metrics: null,
    };
    this.held.add(record.id);
    this.change((sessions) => {
      sessions[record.id] = session;
    });
  }

  /** Marks an agent as running. */
  started(id: string): void {
    this.change((sessions) => {
      const known = sessions[id] as SessionRecord | undefined;
      if (known) known.state = 'running'; // records are the store's own objects here: changed in place
    });
  }

  /**
   * Keeps the conversation of a running agent (its secrets replaced), so a session whose process dies can be resumed
   * from its last turn. The runtime calls it after each model turn when the store outlives the process.
   */
  checkpoint(id: string, conversation: readonly ChatMessage[]): void {
    this.conversations.set(id, this.stored(conversation[0]?.role === 'system' ? conversation.slice(1) : [...conversation]));
    if (!this.scheduled) {
      this.scheduled = true;
      queueMicrotask(() => {
        if (this.scheduled) this.write();
      });
    }
  }

  /**
   * Records how an agent ended, and keeps its conversation (under its id, and under `alsoUnder` if given), each with
   * its secrets replaced (so a session resumed from the store sees `[redacted]` where a secret was).
   */
  ended(
    id: string,
    ended: Pick<SessionRecord, 'state' | 'result' | 'error' | 'reason' | 'metrics'>,
    conversation: readonly ChatMessage[],
    alsoUnder?: string,
  ): void {
    const outcome = this.stored(ended);
    const messages = this.stored(conversation[0]?.role === 'system' ? conversation.slice(1) : [...conversation]);
    const endTime = this.now();
    this.conversations.set(id, messages);
    if (alsoUnder !== undefined) this.conversations.set(alsoUnder, messages);
    // Let go as its end is written (until then, the record says it runs), or once that write fails.
    this.changeLettingGo(id, (sessions) => {
      const known = sessions[id] as SessionRecord | undefined;
      if (known) Object.assign(known, outcome, { endTime, schemaVersion: SESSION_SCHEMA_VERSION });
    });
  }

  /** Removes sessions (records and conversations) from the store, as a runtime does with its own in-memory store. */
  forget(ids: readonly string[]): void {
    for (const id of ids) this.conversations.delete(id);
    this.change((sessions) => {
      for (const id of ids) {
        delete sessions[id];
        this.letGo(id);
      }
    });
    // Their conversations go with the records' next write, with every other run forgotten in the same tick: a
    // long-lived runtime forgets a run each time one finishes past its `retainFinished`.
    for (const id of ids) this.deleting.push(id);
  }

  /** Resolves when every write so far has landed; rejects with the first write that failed since the last flush. */
  async flush(): Promise<void> {
    await this.settled();
    const failure = this.failures.shift();
    this.failures.length = 0;
    if (failure !== undefined) throw failure;
  }

  /** Resolves when every write so far has landed, failed or not (failures stay for `flush` to report). */
  async settled(): Promise<void> {
    if (this.scheduled) this.write();
    while (this.pending.size > 0) await Promise.allSettled([...this.pending]);
  }

  /** Queues a change of the records; the changes of one tick go to the store in one update. */
  private change(apply: (sessions: Record<string, unknown>) => void): void {
    this.changes.push(apply);
    if (this.scheduled) return;
    this.scheduled = true;
    queueMicrotask(() => {
      if (this.scheduled) this.write();
    });
  }

  private write(): void {
    this.scheduled = false;
    if (this.writing) return; // the write under way takes these changes up when it ends
    const changes = this.changes;
    const conversations = this.conversations;
    const lettingGo = this.lettingGo;
    const deleting = this.deleting;
    this.changes = [];
    this.conversations = new Map();
    this.lettingGo = [];
    this.deleting = [];
    this.writing = true;
    this.track(async () => {
      try {
        // Every conversation's write settles before this write counts as done (a failed one does not cut the others
        // short), so `settled` and `flush` never resolve while a write is still under way in the store.
        const written = await Promise.allSettled([...conversations].map(([key, messages]) => this.memory.set(key, messages)));
        const failed = written.find((outcome) => outcome.status === 'rejected');
        if (failed) throw failed.reason;
        if (changes.length === 0) return;
        await this.memory.update(SESSIONS_KEY, (sessions) => {
          const map = recordsToWrite(sessions);
          for (const apply of changes) apply(map);
          return map;
        });
        // After the records: no record is ever left in the store whose conversation is already gone.
        if (deleting.length === 0) return;
        const deleted = await Promise.allSettled(deleting.map((id) => this.memory.delete(id)));
        const undeleted = deleted.find((outcome) => outcome.status === 'rejected');
        if (undeleted) throw undeleted.reason; // once every delete has settled
      } catch (error) {
        for (const id of lettingGo) this.letGo(id); // not written: the store's record stays as it was, unheld
        throw error;
      } finally {
        this.writing = false;
        // Queued while this write was under way: the next write starts now, before this one counts as done, so
        // `settled` waits for it too.
        if (this.changes.length > 0 || this.conversations.size > 0) this.write();
      }
    });
  }

  // Reads wait for the writes made so far: an agent that has ended reads as ended, with its conversation.
  async get(id: string): Promise<SessionRecord | undefined> {
    await this.settled();
    const value = asMap(await this.memory.get(SESSIONS_KEY))[id];
    const version = checkSchemaVersion(asMap(value).schemaVersion, SESSION_SCHEMA_VERSION);
    if (version.status === 'newer') throw new UnsupportedSchemaError('session', `session ${id}`, version.version, SESSION_SCHEMA_VERSION);
    const parsed = SessionRecord.safeParse(value);
    return parsed.success ? this.shown(this.seen(parsed.data)) : undefined;
  }

  /**
   * Takes a session for a resume, in one locked read-change-write of the store, so that two processes (or two
   * runtimes) never both resume it: one that has ended, was interrupted, or is left pending or running by this
   * process without running here, is marked `pending` in this process's name (`claimed: true`); one that another
   * live process runs is left as it is (`claimed: false`). Returns the record as it was, or undefined when the store
   * has none; a record of a newer troupe is refused with `UnsupportedSchemaError`. A resume that does not start after
   * all gives its claim back with {@link release}.
   */
  async claim(id: string): Promise<{ record: SessionRecord; claimed: boolean } | undefined> {
    const before = await this.get(id);
    if (!before) return undefined;
    if (!this.claimable(before)) return { record: before, claimed: false };
    let found: { record: SessionRecord; claimed: boolean } | undefined;
    await this.memory.update(SESSIONS_KEY, (sessions) => {
      const map = recordsToWrite(sessions);
      const parsed = SessionRecord.safeParse(map[id]);
      found = parsed.success ? { record: this.shown(this.seen(parsed.data)), claimed: this.claimable(this.seen(parsed.data)) } : undefined;
      if (found?.claimed) {
        map[id] = { ...asMap(map[id]), state: 'pending', owner: OWNER };
        this.held.add(id);
      }
      return map;
    });
    return found;
  }

  /** Gives back a session {@link claim} took for a resume that did not start: its record as it was, unless it runs here now. */
  release(id: string, record: SessionRecord): void {
    if (this.options.isLive?.(id)) return; // launched after all (by another resume of it here): it is that run's now
    this.changeLettingGo(id, (sessions) => {
      const now = sessions[id] as SessionRecord | undefined;
      if (now?.state === 'pending' && sameOwner(now.owner, OWNER)) sessions[id] = record;
    });
  }

  /**
   * This process no longer holds the session, unless it runs here again. Called as a change is applied, so the held
   * ids and the records in the store change together (under the store's lock, for a file).
   */
  private letGo(id: string): void {
    if (!this.options.isLive?.(id)) this.held.delete(id);
  }

  /** Queues a change that lets a session go (see {@link letGo}), and lets it go even if the change is never written. */
  private changeLettingGo(id: string, apply: (sessions: Record<string, unknown>) => void): void {
    this.lettingGo.push(id);
    this.change((sessions) => {
      apply(sessions);
      this.letGo(id);
    });
  }

  /** True when a resume may take the session: no live process runs it (this one may have left it marked, unheld). */
  private claimable(record: SessionRecord): boolean {
    if (record.state !== 'pending' && record.state !== 'running') return true;
    return sameOwner(record.owner, OWNER) && !this.held.has(record.id);
  }

  /** A record as it stands: one pending or running in a process of this host that is gone is `interrupted`. */
  private seen(record: SessionRecord): SessionRecord {
    if (record.state !== 'pending' && record.state !== 'running') return record;
    if (this.options.isLive?.(record.id)) return record;
    return ownerGone(record.owner) ? { ...record, state: 'interrupted' } : record;
  }

  /**
   * Marks in the store every session whose process is gone (pending or running there, its owner a process of this
   * host that no longer runs) as `interrupted`; returns their ids. They can then be resumed from their last turn.
   */
  async recover(options: RecoverOptions = {}): Promise<string[]> {
    await this.settled();
    const found: string[] = [];
    await this.memory.update(SESSIONS_KEY, (sessions) => {
      const map = recordsToWrite(sessions);
      for (const [id, value] of Object.entries(map)) {
        const parsed = SessionRecord.safeParse(value);
        if (!parsed.success || parsed.data.state === 'interrupted') continue;
        const elsewhere = options.otherHosts === true && this.ownedByOtherHost(parsed.data);
        if (!elsewhere && this.seen(parsed.data).state !== 'interrupted') continue;
        (value as { state: string }).state = 'interrupted';
        found.push(id);
      }
      return map;
    });
    return found;
  }

  async list(): Promise<SessionRecord[]> {
    await this.settled();
    const map = asMap(await this.memory.get(SESSIONS_KEY));
    return Object.values(map)
      .flatMap((value) => {
        const parsed = SessionRecord.safeParse(value);
        return parsed.success ? [this.shown(this.seen(parsed.data))] : [];
      })
      .sort((a, b) => a.startTime - b.startTime);
  }

  /**
   * The records `list` leaves out, each with why: written by a newer troupe (a newer `schemaVersion`), or not the shape
   * of a session record (written by hand, or by something else). They are left in the store as they are.
   */
  async unlisted(): Promise<{ id: string; why: string }[]> {
    await this.settled();
    const map = asMap(await this.memory.get(SESSIONS_KEY));
    return Object.entries(map).flatMap(([id, value]) => {
      const version = checkSchemaVersion(asMap(value).schemaVersion, SESSION_SCHEMA_VERSION);
      if (version.status === 'newer') return [{ id, why: `written by a newer troupe (schemaVersion ${version.version}; this one reads up to ${SESSION_SCHEMA_VERSION})` }];
      const parsed = SessionRecord.safeParse(value);
      if (parsed.success) return [];
      const issue = parsed.error.issues[0];
      return [{ id, why: `not a session record (${issue?.path.join('.') || 'record'}: ${issue?.message ?? 'invalid'})` }];
    });
  }

  async running(): Promise<SessionRecord[]> {
    return (await this.list()).filter((session) => session.state === 'pending' || session.state === 'running');
  }

  async byParent(id: string): Promise<SessionRecord[]> {
    return (await this.list()).filter((session) => session.parentConversationId === id);
  }

  async conversation(id: string): Promise<ChatMessage[] | undefined> {
    await this.settled();
    const parsed = z.array(ChatMessage).safeParse(await this.memory.get(id));
    return parsed.success ? this.shown(parsed.data) : undefined;
  }

  async cleanup(maxAgeMs: number): Promise<string[]> {
    // Compared with a time, NaN, a text or nothing at all would remove nothing, and say nothing of why.
    if (typeof maxAgeMs !== 'number' || Number.isNaN(maxAgeMs)) {
      throw new ConfigurationError(`cleanup needs maxAgeMs, an age in ms (7 * 86_400_000 is a week); it was given ${String(maxAgeMs)}.`);
    }
    await this.settled();
    const cutoff = this.now() - maxAgeMs;
    const removed: string[] = [];
    await this.memory.update(SESSIONS_KEY, (sessions) => {
      const map = recordsToWrite(sessions);
      for (const [id, value] of Object.entries(map)) {
        const parsed = SessionRecord.safeParse(value);
        // An ended session by its end; one that never ended (its process died) by its start, unless it still runs:
        // here, or in another process of this host that is alive (it would write its end into a record now gone).
        const last = parsed.success ? (parsed.data.endTime ?? parsed.data.startTime) : Infinity;
        if (last < cutoff && !this.options.isLive?.(id) && !(parsed.success && this.runsElsewhere(parsed.data))) {
          delete map[id];
          removed.push(id);
        }
      }
      return map;
    });
    for (const id of removed) await this.memory.delete(id);
    return removed;
  }

  /** True when a session is pending or running under an owner of another host, or under none named. */
  private ownedByOtherHost(record: SessionRecord): boolean {
    if (record.state !== 'pending' && record.state !== 'running') return false;
    return record.owner?.host !== HOST && !this.options.isLive?.(record.id) && !this.held.has(record.id);
  }

  /** True when a session pending or running names an owner of this host that still runs (this process included). */
  private runsElsewhere(record: SessionRecord): boolean {
    if (record.state !== 'pending' && record.state !== 'running') return false;
    return record.owner?.host === HOST && !ownerGone(record.owner);
  }

  private track(write: () => Promise<unknown>): void {
    const tracked = this.tail.then(write).then(
      () => {},
      (error: unknown) => {
        this.failures.push(error instanceof Error ? error : new Error(errorMessage(error)));
      },
    );
    this.tail = tracked;
    this.pending.add(tracked);
    void tracked.finally(() => this.pending.delete(tracked));
  }
}

/**
 * The sessions object to change in a write: a fresh one when the store holds none. Something else under the key (a
 * list, a text: written by hand or by another program) is refused with `ConfigurationError` and left as it is; a
 * write would have replaced it with this process's records.
 */
function recordsToWrite(value: unknown): Record<string, unknown> {
  if (value === undefined || value === null) return {};
  if (typeof value === 'object' && !Array.isArray(value)) return value as Record<string, unknown>;
  throw new ConfigurationError(
    `The store holds ${Array.isArray(value) ? 'a list' : `a ${typeof value}`} under "${SESSIONS_KEY}", not session records; it was left as it is. Move it, or give the runtime another store.`,
  );
}

/** The sessions object, or a fresh one when the store holds none (or something else) under the key. */
function asMap(value: unknown): Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>) : {};
}
