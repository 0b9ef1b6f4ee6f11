import { INBOX_FIELDS, nestedFieldsProblem } from '../unknownKeys.js';
import type { ResolvedAgent } from '../actors/agentEnvironment.js';
import type { ErrorInfo } from '../failure.js';
import type { AgentCatalog } from '../catalog/AgentCatalog.js';
import { AGENT_NAME } from '../catalog/defineAgent.js';
import { toolNamesOf } from '../catalog/resolveAgent.js';
import { ConfigurationError, DelegationError, RuntimeClosedError, UnknownAgentError } from '../errors.js';
import type { FailureReason, TroupeEvent } from '../events/events.js';
import { emptyFigures, type MetricsSnapshot } from '../events/metrics.js';
import type { AgentOutcome } from '../machines/agentMachine.js';
import type { AgentRecord, AgentTable } from '../machines/agentTable.js';
import type { AgentInput, Announcement } from '../machines/agentTypes.js';
import type { ChatMessage } from '../models/Model.js';
import type { SpawnRequest, SupervisorEvent } from '../machines/supervisorMachine.js';
import type { SessionStore } from '../memory/SessionStore.js';
import { isTopicName } from '../messaging/Message.js';
import type { PostOffice } from '../messaging/PostOffice.js';
import type { RandomSource } from '../random.js';
import { checkRestart, restartLimit, type RestartMode } from '../restart.js';
import { checkRetry, retryPolicy } from '../retry.js';
import type { Redactor } from '../redaction.js';
import type { AgentPool } from './AgentPool.js';
import { resultOf, type AgentResult, type AgentResults } from './AgentResults.js';
import type { Approvals } from './Approvals.js';
import type { Launch } from './Delegator.js';
import { HandleStream } from './HandleStream.js';
import type { Messenger } from './Messenger.js';
import { RESTARTED, Restarts, type Halt, withEarlierAttempts } from './Restarts.js';
import type { AgentHandle, GroupOptions, SpawnOptions } from './Runtime.js';
import type { Retention } from './Retention.js';
import type { RunLimits } from './RunLimits.js';
import { checkBudget, positive, type Settings } from './settings.js';

/** A launch with the options a spawn from code may add. */
export type LaunchRequest = Launch &
  Omit<SpawnOptions, 'parentId'> & {
    watch?: boolean;
    /** For a resumed session whose parent is not an agent of this runtime: the parent it was stored with. */
    parentConversationId?: string | null;
  };

/** What the runtime remembers of a live run, besides the supervisor's record. */
interface LiveRun {
  /** The definition it runs with: a file changed meanwhile does not change a running agent. */
  agent: ResolvedAgent;
  /** Its pool key, for an agent that goes back to the pool when it completes. */
  poolKey?: string;
  /** For a top-level agent: the key its conversation is stored under too. */
  conversationKey?: string;
  /** The conversation it was launched with (none for a fresh agent without history), kept if it is refused before its first turn. */
  launchedWith: readonly ChatMessage[];
  /** Its mailbox, opened anew for each attempt when it is restarted. */
  mailbox: { readonly inbox: { capacity: number; overflow: 'reject' | 'drop-oldest' }; readonly topics: readonly string[] };
}

/** The parts of the runtime a launcher works with. */
export interface LauncherParts {
  readonly settings: Settings;
  /** The run's limits: agents per run, pending agents, subtree budgets. */
  readonly limits: RunLimits;
  /** What keeps the memory of finished runs bounded. */
  readonly retention: Retention;
  /** True when sessions outlive the process (a store was given): each model turn's conversation is checkpointed. */
  readonly checkpoints: boolean;
  readonly runId: string;
  readonly catalog: AgentCatalog;
  readonly results: AgentResults;
  readonly approvals: Approvals;
  readonly sessions: SessionStore;
  readonly pool: AgentPool;
  readonly postOffice: PostOffice;
  readonly messenger: Messenger;
  readonly random: RandomSource;
  /** Replaces secrets in what a result reports of a failure. */
  readonly redactor: Redactor;
  /** The runtime's clock (restart windows are measured on it). */
  readonly clock: { now(): number };
  /** Emits a runtime event about an agent. */
  announce(agentId: string, body: Announcement): void;
  /** Every event, merged. */
  readonly events$: import('rxjs').Observable<TroupeEvent>;
  /** The latest metrics. */
  metrics(): MetricsSnapshot;
  /** The supervisor's book of agents. */
  table(): AgentTable;
  /** Sends an event to the supervisor. */
  send(event: SupervisorEvent): void;
  /** Told when agents are launched and when none is live any more (the process's end is watched while there are). */
  readonly activity?: { busy(): void; idle(): void };
}

/** How a group ends: with its combined output, or failed. */
export type GroupEnd = { status: 'completed'; output: string } | { status: 'failed'; reason: FailureReason; error: ErrorInfo };

/** Resident agents get this many turns unless their definition or spawn says otherwise. */
export const RESIDENT_MAX_TURNS = 1_000;

/**
 * Starts agents and settles them when they end: checks a launch, makes the agent's input and sends `SPAWN`; when the
 * supervisor reports an outcome, records the session, returns a `persist` agent to the pool, closes its mailbox and
 * resolves its result.
 */
export class Launcher {
  private readonly watchers = new Map<string, HandleStream>();
  /** How many of `watchers` want events now (see {@link HandleStream}): none, and no event is looked up for them. */
  private wantingWatchers = 0;
  private readonly wanting = (wanting: boolean) => {
    this.wantingWatchers += wanting ? 1 : -1;
  };
  private readonly live = new Map<string, LiveRun>();
  /** Live runs by agent name: an agent made during the run is only removed once none of its runs is live. */
  private readonly liveRuns = new Map<string, number>();
  private readonly idleWaiters: (() => void)[] = [];
  private readonly randoms = new Map<string, RandomSource>();
  /** Live groups, with the session parent their children's sessions hang under (a group has no session). */
  private readonly groups = new Map<string, string>();
  /** Set once the runtime is shut down: no more launches. */
  closed = false;
  /** Restarts of failed agents, and escalations. */
  private readonly restarts: Restarts;
  /** Each definition's limits for the launches that override none of them (most do not): made once per definition. */
  private readonly definitionLimits = new WeakMap<ResolvedAgent['definition'], Limits>();

  constructor(private readonly parts: LauncherParts) {
    this.restarts = new Restarts({
      clock: parts.clock,
      limits: parts.limits,
      table: parts.table,
      announce: parts.announce,
      send: parts.send,
      reopen: (id) => this.reopen(id),
      closed: () => this.closed,
      settle: (outcome) => this.settle(outcome),
    });
  }

  /**
   * Code cancelled or stopped an agent (or group) and its subtree: none of them is restarted, not even one whose failed
   * attempt ended a moment before (see `Restarts.halt`).
   */
  halt(halt: Halt): void {
    const table = this.parts.table();
    const error = halt.error ?? (halt.type === 'CANCEL' ? `Cancelled (${halt.id} was cancelled).` : undefined);
    for (const id of table.subtree(halt.id)) this.restarts.halt({ type: halt.type, id, ...(error === undefined ? {} : { error }) });
  }

  /** The definition a live agent runs with, or the catalog's. */
  resolve(name: string, id: string): ResolvedAgent {
    return this.live.get(id)?.agent ?? this.parts.catalog.resolve(name);
  }

  /** The seeded random stream of one agent (made on first use; a resumed or pooled run's is made at its launch). */
  randomFor(id: string): RandomSource {
    let random = this.randoms.get(id);
    if (!random) this.randoms.set(id, (random = this.parts.random.fork(id)));
    return random;
  }

  /** True while a run of agent `id` is live (or was launched a moment ago). */
  isLive(id: string): boolean {
    return this.parts.table().actor(id) !== undefined || this.parts.results.running(id);
  }

  /** Resolves when no agent is pending or running. */
  idle(): Promise<void> {
    if (this.parts.table().active === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  /** Wakes everything waiting for `idle()` (when no agent is live, and at shutdown). */
  wakeIdleWaiters(): void {
    this.parts.activity?.idle();
    for (const wake of this.idleWaiters.splice(0)) wake();
  }

  /** True while some handle's stream wants events: the launcher then passes them on to user code. */
  get passesEventsOn(): boolean {
    return this.wantingWatchers > 0;
  }

  /** How many events the runtime has seen (what `runUntilIdle` watches for progress). */
  eventsSeen = 0;

  /**
   * Keeps sessions in step with each event and hands it, redacted, to the handles watching its agent or an ancestor (a
   * tap of the event pipeline: it reads the event's type and ids as they came).
   */
  observe(event: TroupeEvent, redacted: () => TroupeEvent): void {
    this.eventsSeen += 1;
    if (event.type === 'agent.started' && !this.groups.has(event.agentId)) {
      this.parts.sessions.started(event.agentId);
      this.parts.limits.running(event.agentId);
    }
    if (event.type === 'model.response' && this.parts.checkpoints) this.checkpoint(event.agentId);
    if (this.wantingWatchers === 0) return;
    const table = this.parts.table();
    let id: string | null = event.agentId;
    while (id !== null) {
      this.watchers.get(id)?.next(redacted);
      id = table.record(id)?.parentId ?? null;
    }
  }

  /** An agent's limits for one launch: its definition's, made once, when the request overrides none. */
  private limitsFor(request: LaunchRequest, definition: ResolvedAgent['definition']): Limits {
    for (let i = 0; i < LIMIT_FIELDS.length; i++) {
      if (request[LIMIT_FIELDS[i]!] !== undefined) return limitsOf(request, definition, this.parts.settings);
    }
    let limits = this.definitionLimits.get(definition);
    if (limits === undefined) {
      limits = limitsOf(request, definition, this.parts.settings);
      this.definitionLimits.set(definition, limits);
    }
    return limits;
  }

  /** Saves an agent's conversation as it stands once its turn is recorded (after the step that announced it). */
  private checkpoint(id: string): void {
    queueMicrotask(() => {
      const actor = this.parts.table().actor(id);
      if (actor) this.parts.sessions.checkpoint(id, actor.getSnapshot().context.messages);
    });
  }

  /** Starts an agent (or resumes an ended one, or reuses a pooled one): checks, makes the input, sends `SPAWN`. */
  launch(request: LaunchRequest): AgentHandle {
    const { results, pool, sessions } = this.parts;
    const table = this.parts.table();
    if (this.closed) throw new RuntimeClosedError();
    const agent = this.agentNamed(request.agent);
    if (typeof request.task !== 'string' || request.task.trim() === '') {
      throw new ConfigurationError(`The task for "${request.agent}" must be a non-empty string.`);
    }
    const parent = request.parentId == null ? undefined : table.record(request.parentId);
    if (request.parentId != null && !parent) throw new UnknownAgentError(request.parentId);
    const definition = agent.definition;
    // Every check before the first change, so a refused launch leaves nothing behind.
    const limits = this.limitsFor(request, definition);
    checkBudget(request.budget, 'budget');
    const byAgent = parent !== undefined && parent.group !== true;
    this.parts.limits.check(parent?.id ?? null, byAgent);
    const { inbox, topics } = limits;
    let { resume, history } = request;
    if (resume !== undefined && this.isLive(resume)) {
      // A run of it is live (or was launched a moment ago), so it cannot be resumed now.
      throw new DelegationError('still_running', `Agent ${resume} is still running; it can be resumed once it has ended.`);
    }
    if (resume !== undefined) pool.remove(resume); // resumed by hand: no longer idle in the pool
    const persist = request.persist ?? definition.persist === true;
    // A pooled agent serves one conversation key (from code) only: another caller's key never gets its conversation.
    const poolKey = persist ? pool.key(agent, request.conversationKey) : undefined;
    // A caller that gives the conversation to start from (`history`, or its own with `shareContext`) gets a fresh
    // agent: a pooled one's conversation would take its place.
    if (poolKey !== undefined && resume === undefined && history === undefined) {
      const pooled = pool.take(poolKey, agent.name, (candidate) => !this.isLive(candidate));
      if (pooled) ({ id: resume, messages: history } = { id: pooled.id, messages: [...pooled.messages] });
    }
    const id = resume ?? this.freshId(`agent:${agent.name}`);
    // A resumed or pooled agent runs again under its id: a stream of its own for this run (by how long its conversation
    // is), or every run of it would draw again what its first run drew (the same latencies, choices and backoffs).
    if (resume !== undefined) this.randoms.set(id, this.parts.random.fork(`${id}#${history?.length ?? 0}`));
    this.parts.limits.launched(id, parent?.id ?? null, byAgent, request.budget);
    this.parts.retention.opened(id, parent?.id ?? null);
    // A resumed agent's figures in the metrics go on from its earlier runs: its result counts from where they were.
    const before = resume === undefined ? undefined : this.parts.metrics().agents[id];
    const result = results.begin(id, before && { ...before.subtree }, before && { ...before.own });
    // Where the session hangs: its parent agent; else the conversation it was stored under (a resumed session from
    // an earlier process); else the caller's key, `main` by default, which also keeps the run's conversation.
    const stored = request.conversationKey === undefined ? request.parentConversationId : undefined;
    // (A group keeps no session: under a group, the session hangs where the group's would.)
    const sessionParent =
      (parent && this.groups.get(parent.id)) ?? parent?.id ?? (stored !== undefined ? stored : (request.conversationKey ?? 'main'));
    const conversationKey =
      !parent && sessionParent !== null && !sessionParent.startsWith('agent:') ? sessionParent : undefined;
    // The limits are the mailbox's options (its inbox and topics), shared and read only.
    const run: LiveRun = { agent, mailbox: limits, launchedWith: history ?? NO_MESSAGES };
    if (poolKey !== undefined) run.poolKey = poolKey;
    if (conversationKey !== undefined) run.conversationKey = conversationKey;
    this.live.set(id, run);
    this.parts.activity?.busy();
    this.liveRuns.set(agent.name, (this.liveRuns.get(agent.name) ?? 0) + 1);
    sessions.spawned({ id, agentType: agent.name, parentConversationId: sessionParent, taskDescription: request.task });
    // A resumed session's saved conversation takes its new task at once: if the process dies before the first turn is
    // saved, the session's resume goes on with that task, not from the end of the earlier run without it.
    if (resume !== undefined && history !== undefined && this.parts.checkpoints) {
      sessions.checkpoint(id, [...history, { role: 'user', content: request.task }]);
    }
    this.parts.postOffice.open(id, agent.name, inbox, topics);
    const watcher = request.watch ? new HandleStream(this.wanting) : undefined;
    if (watcher) this.watchers.set(id, watcher);
    const approval = request.approval ? { requestId: `approval:${this.parts.random.key()}`, ...request.approval } : undefined;
    if (approval) {
      this.parts.approvals.open({
        requestId: approval.requestId,
        agentId: id,
        callerId: request.parentId ?? '',
        agent: agent.name,
        task: request.task,
        risk: approval.risk,
        ...(approval.reason === undefined ? {} : { reason: approval.reason }),
      });
    }
    const spawn: SpawnRequest = {
      priority: request.priority,
      input: inputOf(request, agent, limits, { id, runId: this.parts.runId, parent, resumed: resume !== undefined, history }),
    };
    if (approval) spawn.approval = approval;
    if (request.deny !== undefined) spawn.deny = request.deny;
    if (request.waiter !== undefined) spawn.waiter = request.waiter;
    if (request.batched === true) spawn.batched = true;
    this.restarts.launched(spawn, limits.restart, limits.restartIntensity);
    this.parts.send({ type: 'SPAWN', request: spawn });
    return { id, result, events$: watcher ? watcher.observable : this.parts.events$ };
  }

  /**
   * Opens a group (a pattern run) under `parentId`: an actor with a lifecycle, events and metrics like an agent's, that
   * runs no model and takes no slot. Its children name its id as their parent; `endGroup` ends it.
   */
  launchGroup(name: string, task: string, options: GroupOptions = {}): { id: string; result: Promise<AgentResult> } {
    const table = this.parts.table();
    if (this.closed) throw new RuntimeClosedError();
    if (!AGENT_NAME.test(name)) throw new ConfigurationError(`A group's name must match ${AGENT_NAME} (got "${name}").`);
    if (typeof task !== 'string') throw new ConfigurationError(`The task of group "${name}" must be a string.`);
    const parent = options.parentId == null ? undefined : table.record(options.parentId);
    if (options.parentId != null && !parent) throw new UnknownAgentError(options.parentId);
    if (options.restart !== undefined && options.restart !== 'one-for-all') {
      throw new ConfigurationError(`A group's restart must be "one-for-all" (got "${String(options.restart)}").`);
    }
    checkRestart(undefined, options.restartIntensity);
    const id = this.freshId(`group:${name}`);
    if (options.restart === 'one-for-all') this.restarts.groupOpened(id, restartLimit(options.restartIntensity));
    const result = this.parts.results.begin(id);
    this.parts.limits.groupOpened(id, parent?.id ?? null);
    this.parts.retention.opened(id, parent?.id ?? null);
    this.groups.set(id, parent ? (this.groups.get(parent.id) ?? parent.id) : 'main');
    const { runId } = this.parts;
    const toolCallId = options.toolCallId ?? null;
    const input = { id, name, runId, parentId: parent?.id ?? null, toolCallId, depth: depthUnder(parent), task };
    this.parts.send({ type: 'SPAWN', request: { group: true, input } });
    return { id, result };
  }

  /** Ends a live group (what still runs under it is cancelled first); a group that has ended ignores it. */
  endGroup(id: string, end: GroupEnd): void {
    if (!this.groups.has(id)) return; // it has ended (or the runtime has shut down)
    this.parts.send(
      end.status === 'completed'
        ? { type: 'GROUP.END', id, output: end.output }
        : { type: 'GROUP.FAIL', id, reason: end.reason, error: end.error },
    );
  }

  /** What happens when an agent (or a group) ends (the supervisor's `reportOutcome`). */
  settle(outcome: AgentOutcome): void {
    if (this.groups.has(outcome.id)) {
      this.settleGroup(outcome);
      return;
    }
    this.parts.limits.running(outcome.id); // ended before it ran, if it never did
    const { approvals, results, sessions, pool, catalog } = this.parts;
    approvals.drop(outcome.id);
    // A failed attempt may be started again: then nothing ends (its caller waits on, its session goes on).
    const earlier = this.restarts.ended(outcome, this.closed);
    if (earlier === RESTARTED) return;
    const entry = this.parts.metrics().agents[outcome.id];
    const result = this.redacted(withEarlierAttempts(resultOf(outcome, entry?.subtree, results.baseline(outcome.id)), earlier));
    // Messages are counted by the runtime, not by the agent: its own counts come from the metrics (this run's: a resumed
    // agent's entry holds its earlier runs' too).
    if (entry) {
      const before = results.ownBaseline(outcome.id);
      const { messagesOut, messagesIn } = entry.own;
      result.metrics.own = { ...result.metrics.own, messagesOut: messagesOut - before.messagesOut, messagesIn: messagesIn - before.messagesIn };
    }
    const run = this.live.get(outcome.id);
    this.live.delete(outcome.id);
    this.randoms.delete(outcome.id);
    // Calls still waiting for messages keep an empty tool message: a resumed or pooled agent must not read it as an answer.
    const messages = withWaitsCutShort(outcome.messages, this.parts.postOffice.unreadWaits(outcome.id));
    this.parts.messenger.unread(outcome.id, this.parts.postOffice.close(outcome.id));
    this.parts.messenger.ended(outcome.id);
    sessions.ended(
      outcome.id,
      {
        state: outcome.status,
        result: outcome.output ?? null,
        error: outcome.error ?? null,
        reason: outcome.reason ?? null,
        metrics: result.metrics,
      },
      // A run denied, cancelled or stopped before its first model turn never took its task up: the session keeps the
      // conversation it was launched with, so a later resume does not hand the model a task nobody let it do.
      run && refusedBeforeStart(outcome) ? run.launchedWith : messages,
      // A run's conversation is stored under its key (`main`) too once it completed; not a cancelled or failed one.
      outcome.status === 'completed' ? run?.conversationKey : undefined,
    );
    if (run?.poolKey && outcome.status === 'completed') pool.put(run.poolKey, outcome.agent, { id: outcome.id, messages });
    results.settle(result);
    const watcher = this.watchers.get(outcome.id);
    this.watchers.delete(outcome.id);
    watcher?.complete();
    const runs = (this.liveRuns.get(outcome.agent) ?? 1) - 1;
    if (runs > 0) this.liveRuns.set(outcome.agent, runs);
    else this.liveRuns.delete(outcome.agent);
    if (catalog.lifecycleOf(outcome.agent) === 'temporary') this.forget(outcome.agent);
    this.parts.retention.ended(outcome.id);
    if (this.parts.table().active === 0) this.wakeIdleWaiters();
  }

  /** A group ended: its result (own figures zero, its subtree's from the metrics); no session, pool or mailbox. */
  private settleGroup(outcome: AgentOutcome): void {
    this.groups.delete(outcome.id);
    this.restarts.groupEnded(outcome.id);
    this.parts.results.settle(this.redacted(resultOf(outcome, this.parts.metrics().agents[outcome.id]?.subtree, emptyFigures())));
    this.parts.retention.ended(outcome.id);
    if (this.parts.table().active === 0) this.wakeIdleWaiters();
  }

  /** A fresh mailbox for a restarted agent's new attempt: the old one's unread mail is reported as dropped. */
  private reopen(id: string): void {
    const run = this.live.get(id);
    const { postOffice, messenger } = this.parts;
    messenger.unread(id, postOffice.close(id));
    messenger.ended(id); // requests to the failed attempt are not answered by the next one, which never saw them
    if (run) postOffice.open(id, run.agent.name, run.mailbox.inbox, run.mailbox.topics);
  }

  /**
   * A result whose error message has its secrets replaced: the message of a model's or tool's error may quote a key
   * or a header. The answer is the agent's own and stays as it is (its copies in events and sessions are redacted).
   */
  private redacted(result: AgentResult): AgentResult {
    if (result.error) result.error = this.parts.redactor.redact(result.error);
    return result;
  }

  /** An id no agent or group of this runtime has had: `<prefix>:<key>`, the key from the seeded random source. */
  private freshId(prefix: string): string {
    const table = this.parts.table();
    let id = `${prefix}:${this.parts.random.key()}`;
    while (table.record(id)) id = `${prefix}:${this.parts.random.key()}`;
    return id;
  }

  /** Removes an agent made during the run, unless one of its runs is still live (it goes when the last one ends). */
  forget(name: string): void {
    if (!this.liveRuns.has(name)) this.parts.catalog.remove(name);
  }

  /** The agent of that name, its file read again if it changed; a refused file or an unknown name throws. */
  private agentNamed(name: string): ResolvedAgent {
    const { catalog } = this.parts;
    const refused = catalog.files?.refresh(name);
    const agent = catalog.get(name);
    if (agent) return agent;
    throw refused ?? new UnknownAgentError(name, catalog.names());
  }
}

/** The depth of a child of `parent`: one below an agent, the same as a group (a pattern adds no delegation depth). */
function depthUnder(parent: { depth: number; group?: true } | undefined): number {
  if (!parent) return 0;
  return parent.group ? parent.depth : parent.depth + 1;
}

/** The fields of a launch request that override its definition's limits (see `limitsOf`). */
const LIMIT_FIELDS = ['resident', 'maxTurns', 'idleTimeoutMs', 'historyLimit', 'inbox', 'retry', 'restart', 'restartIntensity', 'subscribe'] as const;

/** An agent's limits and mailbox, as `limitsOf` makes them; read only (one may serve every launch of a definition). */
type Limits = Readonly<ReturnType<typeof limitsOf>>;

/** An agent's limits and mailbox for one launch: the request's, else its definition's, else the runtime's. */
function limitsOf(request: Pick<LaunchRequest, (typeof LIMIT_FIELDS)[number]>, definition: ResolvedAgent['definition'], settings: Settings) {
  const resident = request.resident ?? definition.resident === true;
  const maxTurns = positive(request.maxTurns, 'maxTurns') ?? definition.maxTurns ?? (resident ? RESIDENT_MAX_TURNS : settings.maxTurns);
  const idleTimeoutMs = positive(request.idleTimeoutMs, 'idleTimeoutMs') ?? definition.idleTimeoutMs ?? settings.idleTimeoutMs;
  const historyLimit = positive(request.historyLimit, 'historyLimit') ?? definition.historyLimit;
  if (historyLimit !== undefined && !Number.isInteger(historyLimit)) throw new ConfigurationError('historyLimit must be a whole number.');
  const inboxFields = request.inbox === undefined || request.inbox === null ? undefined : nestedFieldsProblem(request.inbox, INBOX_FIELDS, 'inbox');
  if (inboxFields) throw new ConfigurationError(inboxFields);
  const inbox = {
    capacity: positive(request.inbox?.capacity, 'inbox.capacity') ?? definition.inbox?.capacity ?? settings.inbox.capacity,
    overflow: request.inbox?.overflow ?? definition.inbox?.overflow ?? settings.inbox.overflow,
  };
  if (!Number.isInteger(inbox.capacity)) throw new ConfigurationError('inbox.capacity must be a whole number.');
  if (inbox.overflow !== 'reject' && inbox.overflow !== 'drop-oldest') {
    throw new ConfigurationError('inbox.overflow must be "reject" or "drop-oldest".');
  }
  const retry = retryPolicy(checkRetry(request.retry, 'retry'), definition.retry, settings.retry);
  checkRestart(request.restart, request.restartIntensity);
  const restart: RestartMode = request.restart ?? definition.restart ?? 'never';
  const restartIntensity = restartLimit(request.restartIntensity, definition.restartIntensity);
  const topics = [...(definition.subscribe ?? []), ...(request.subscribe ?? [])];
  for (const topic of topics) {
    if (!isTopicName(topic)) {
      throw new ConfigurationError(`"${topic}" is not a topic name (give the name, without "topic:").`);
    }
  }
  return { resident, maxTurns, idleTimeoutMs, historyLimit, inbox, topics, retry, restart, restartIntensity };
}

/** The input of a launched agent's actor: who it is, where it hangs, its prompt, model, tools and limits. */
function inputOf(
  request: LaunchRequest,
  agent: ResolvedAgent,
  limits: Limits,
  placed: { id: string; runId: string; parent: AgentRecord | undefined; resumed: boolean; history: ChatMessage[] | undefined },
): AgentInput {
  const { parent, history } = placed;
  const input: AgentInput = {
    id: placed.id,
    name: agent.name,
    runId: placed.runId,
    parentId: parent?.id ?? null,
    toolCallId: request.toolCallId ?? null,
    depth: depthUnder(parent),
    task: request.task,
    systemPrompt: agent.definition.systemPrompt,
    model: agent.modelName ?? agent.model.name,
    tools: toolNamesOf(agent),
    maxTurns: limits.maxTurns,
    idleTimeoutMs: limits.idleTimeoutMs,
    retry: limits.retry,
  };
  // Optional fields set one by one: a spread of `cond ? {} : { field }` makes an object each, for every agent.
  if (request.description !== undefined) input.description = request.description;
  if (request.background) input.background = true;
  if (placed.resumed) input.resumed = true;
  if (limits.resident) input.resident = true;
  if (request.budget) input.budget = request.budget;
  if (limits.historyLimit !== undefined) input.historyLimit = limits.historyLimit;
  if (history) input.history = history;
  if (agent.definition.requiredToolCalls?.length) input.requiredToolCalls = [...agent.definition.requiredToolCalls];
  return input;
}

const NO_MESSAGES: readonly ChatMessage[] = [];

/** True for a run refused before it took its task up: denied, or cancelled (or stopped) before its first turn. */
function refusedBeforeStart(outcome: AgentOutcome): boolean {
  return outcome.turns === 0 && (outcome.reason === 'denied' || outcome.reason === 'cancelled');
}

/**
 * An ended agent's conversation with the tool message of each call whose wait it never read (`callIds`) saying so:
 * the message stays empty until the wait's answer is read, and empty it would read as a wait that brought nothing.
 */
function withWaitsCutShort(messages: readonly ChatMessage[], callIds: readonly string[]): readonly ChatMessage[] {
  if (callIds.length === 0) return messages;
  const next = [...messages];
  for (const callId of callIds) {
    // The latest message of that call: a model may give calls of different turns one id.
    const index = next.findLastIndex((message) => message.role === 'tool' && message.toolCallId === callId);
    const message = next[index];
    if (message?.role !== 'tool' || message.content !== '') continue;
    next[index] = { ...message, content: 'Error: cut short: the run ended before this wait for messages did; nothing it waited for was read.', isError: true };
  }
  return next;
}
