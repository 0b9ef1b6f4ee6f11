import { customAlphabet } from 'nanoid';
import { Observable, Subject, type Subscription } from 'rxjs';
import { createActor, toPromise, type InspectionEvent, type Observer } from 'xstate';
import type { AgentEnvironment } from './actors/agentEnvironment.js';
import { createCallModel } from './actors/callModel.js';
import { createRunTools } from './actors/runTools.js';
import { AgentCatalog } from './catalog/AgentCatalog.js';
import type { Agent, AgentDefinition } from './catalog/defineAgent.js';
import { realClockFromNow, type Clock } from './clock.js';
import { ConfigurationError, DelegationError, RuntimeClosedError, UnknownAgentError, UnknownRequestError } from './errors.js';
import type { TroupeEvent } from './events/events.js';
import { createEventPipeline } from './events/eventPipeline.js';
import { createMetrics, emptyFigures, type Figures, type MetricsSnapshot } from './events/metrics.js';
import { agentMachine, type AgentActorRef, type AgentBudget, type AgentOutcome } from './machines/agentMachine.js';
import type { AgentRecord } from './machines/agentTable.js';
import { supervisorMachine } from './machines/supervisorMachine.js';
import type { ChatMessage, Model } from './models/Model.js';
import { defaultPrices, type PriceTable } from './models/prices.js';
import { AgentResults, type AgentResult } from './runtime/AgentResults.js';
import { Approvals, type PendingApproval } from './runtime/Approvals.js';
import type { DelegationPolicy, TaskOutput, TaskOutputOptions } from './runtime/Delegation.js';
import { Delegator, type Launch } from './runtime/Delegator.js';
import type { Tool } from './tools/defineTool.js';

export type { AgentResult, ResultMetrics } from './runtime/AgentResults.js';

/** The options of {@link createRuntime}. */
export interface RuntimeOptions {
  /** The model agents use unless their definition names another `Model`. */
  model?: Model;
  /** The agents that may be spawned, made with `defineAgent` (plain definitions are validated the same way). */
  agents: readonly (Agent | AgentDefinition)[];
  /** Tools agents may name in their `tools` list (the delegation tools are built in). */
  tools?: readonly Tool[];
  /** At most this many agents think or run tools at once; the rest wait in `pending` (default 5). */
  maxParallel?: number;
  /** Model turns an agent may take before it fails with `max_turns` (default 10). */
  maxTurns?: number;
  /** How long an agent may make no progress before it fails with `timeout` (default 5 minutes). */
  idleTimeoutMs?: number;
  /** At most this many tool calls of one turn run at once (default 3). */
  maxToolConcurrency?: number;
  /** Agents at this depth (top-level agents are at 0) get no delegation tools (default 3). */
  maxDepth?: number;
  /** Decides every delegation an agent asks for: allow, deny, or ask a person (default: allow all). */
  delegationPolicy?: DelegationPolicy;
  /**
   * The actor system's clock: pass XState's `SimulatedClock` to run in simulated time (default: real time, reading
   * 0 when the runtime is made, so event times are milliseconds since then).
   */
  clock?: Clock;
  /** An inspection observer handed to `createActor`: it sees the supervisor and every agent actor. */
  inspect?: Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /** Prices by model name, merged over {@link defaultPrices}. */
  prices?: PriceTable;
  /** The id stamped on every event (default: a new random id). */
  runId?: string;
}

/** Per-spawn options. */
export interface SpawnOptions {
  /** The agent that spawns this one; its subtree metrics include this agent's, and cancelling it cancels this one. */
  parentId?: string;
  /** The parent's tool call that started this agent. */
  toolCallId?: string;
  /** Higher starts first among waiting agents (default 0). */
  priority?: number;
  /** Overrides the definition's and runtime's `maxTurns`. */
  maxTurns?: number;
  /** Overrides the definition's and runtime's idle timeout. */
  idleTimeoutMs?: number;
  /** Spending limits: past them the agent fails with `budget`. */
  budget?: AgentBudget;
  /** Messages to start from, after the system prompt and before the task. */
  history?: ChatMessage[];
  /** A short summary of the task, shown in events and logs. */
  description?: string;
  /**
   * Marks a background sub-agent: nobody waits for it; get its result later from the handle or with
   * `runtime.taskOutput(id)`. (`spawn` never blocks either way; this is what events and inspectors show.)
   */
  background?: boolean;
}

/** What {@link Runtime.spawn} returns. */
export interface AgentHandle {
  /** The agent's id, `agent:<name>:<nanoid>`. */
  readonly id: string;
  /** Resolves when the agent ends, completed or failed; it never rejects. */
  readonly result: Promise<AgentResult>;
  /**
   * The events of this agent and the agents it spawns, until it ends. Subscribe before awaiting: events that
   * happened in the same tick as `spawn` are replayed to subscribers that arrive in that tick.
   */
  readonly events$: Observable<TroupeEvent>;
}

/** A running troupe: spawn agents, watch them, cancel them, shut down. */
export interface Runtime {
  /** The id stamped on every event. */
  readonly runId: string;
  /** The names of the agents that may be spawned now (agents made with `spawn_agent` included). */
  readonly agentNames: readonly string[];
  /** Every event of every agent, merged. Hot: subscribe before spawning to see everything. */
  readonly events$: Observable<TroupeEvent>;
  /** Live metrics folded from `events$`; replays the latest snapshot to new subscribers. */
  readonly metrics$: Observable<MetricsSnapshot>;
  /** Spawns an agent; it starts when a slot is free under `maxParallel`. */
  spawn(agentName: string, task: string, options?: SpawnOptions): AgentHandle;
  /** Spawns an agent and waits for its result. */
  run(agentName: string, task: string, options?: SpawnOptions): Promise<AgentResult>;
  /**
   * Continues an ended agent's session under the same id: its whole earlier conversation, then `task`. Throws a
   * `DelegationError` for an unknown id or an agent that has not ended.
   */
  resume(id: string, task: string, options?: Omit<SpawnOptions, 'history'>): AgentHandle;
  /** Says whether an agent still runs, or returns its result; `blocking` waits up to `timeoutMs`. */
  taskOutput(id: string, options?: TaskOutputOptions): Promise<TaskOutput>;
  /** Cancels an agent and all its descendants (background ones included); they fail with `cancelled`. */
  cancel(id: string): void;
  /** Lets a delegation that waits for a person go ahead. Throws `UnknownRequestError` if it is not waiting. */
  approve(requestId: string): void;
  /** Refuses a delegation that waits for a person: its sub-agent fails with `denied`, its caller gets an error. */
  deny(requestId: string, reason?: string): void;
  /** The delegations waiting for a person, oldest first. */
  pendingApprovals(): PendingApproval[];
  /** Removes the temporary agents made with `spawn_agent` that are left, cancelling any still running. */
  cleanupTemporary(): string[];
  /** The latest metrics snapshot. */
  metrics(): MetricsSnapshot;
  /** The supervisor's record of an agent (kept after it ends). */
  record(id: string): Readonly<AgentRecord> | undefined;
  /** Resolves when no agent is pending or running. */
  idle(): Promise<void>;
  /** Cancels every live agent, stops the supervisor and completes the streams; leaves no actor or timer. */
  shutdown(): Promise<void>;
}

const DEFAULTS = { maxParallel: 5, maxTurns: 10, idleTimeoutMs: 5 * 60_000, maxToolConcurrency: 3, maxDepth: 3 } as const;
const agentKey = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 10);

/**
 * Creates a runtime: an actor system whose root is the supervisor, with the given agents, tools and model.
 *
 * @example
 * const runtime = createRuntime({ model: new ScriptedModel(['Hello!']), agents: [greeter] });
 * const result = await runtime.run('greeter', 'Say hello.');
 * await runtime.shutdown();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const settings = readSettings(options);
  const catalog = new AgentCatalog(options.agents, {
    ...(options.model ? { model: options.model } : {}),
    tools: options.tools ?? [],
    maxToolConcurrency: settings.maxToolConcurrency,
    maxDepth: settings.maxDepth,
  });
  const prices: PriceTable = { ...defaultPrices, ...options.prices };
  const clock = options.clock ?? realClockFromNow();
  const runId = options.runId ?? agentKey();
  const results = new AgentResults();
  const approvals = new Approvals();

  const { streams, events$, metrics$ } = createEventPipeline();
  let latest: MetricsSnapshot = createMetrics();
  const watchers = new Map<string, HandleStream>();
  /** Live runs by agent name: an agent made during the run is only removed once none of its runs is live. */
  const liveRuns = new Map<string, number>();
  const idleWaiters: (() => void)[] = [];
  const subscriptions: Subscription[] = [];

  const delegator: Delegator = new Delegator({
    catalog,
    results,
    approvals,
    clock,
    maxDepth: settings.maxDepth,
    policy: options.delegationPolicy,
    record: (id) => table.record(id),
    launch: (request) => launch(request).id,
    forget,
    send: (event) => supervisor.send(event),
  });
  const environment: AgentEnvironment = {
    prices,
    resolve: (name) => catalog.resolve(name),
    toolSchemas: (agent, depth, agentId) => catalog.toolSchemas(agent, depth, agentId),
    toolFor: (agent, depth, toolName) => catalog.toolFor(agent, depth, toolName),
    plan: (tool, args) => catalog.plan(tool, args),
    delegation: (caller) => delegator.forCaller(caller),
  };
  const agentLogic = agentMachine.provide({
    actors: { callModel: createCallModel(environment), runTools: createRunTools(environment) },
  });

  const supervisor = createActor(
    supervisorMachine.provide({
      actions: {
        observeAgent: ({ context }, { id }) => {
          const actor = context.agents.actor(id);
          if (actor) streams.add(eventsOf(actor));
        },
        reportOutcome: (_, { outcome }) => settle(outcome),
      },
    }),
    {
      id: 'supervisor',
      systemId: 'supervisor',
      input: { agentLogic, maxParallel: settings.maxParallel },
      clock,
      ...(options.inspect ? { inspect: options.inspect } : {}),
    },
  );
  const table = supervisor.getSnapshot().context.agents;
  subscriptions.push(metrics$.subscribe((snapshot) => (latest = snapshot)));
  subscriptions.push(events$.subscribe((event) => route(event)));
  supervisor.start();
  let closed = false;
  let shutdownPromise: Promise<void> | undefined;

  /** Hands an event to the handles watching its agent or one of its ancestors. */
  function route(event: TroupeEvent): void {
    if (watchers.size === 0) return;
    let id: string | null = event.agentId;
    while (id !== null) {
      watchers.get(id)?.next(event);
      id = table.record(id)?.parentId ?? null;
    }
  }

  function settle(outcome: AgentOutcome): void {
    approvals.drop(outcome.id);
    results.settle(toResult(outcome, latest, results.baseline(outcome.id)), outcome.messages);
    const watcher = watchers.get(outcome.id);
    watchers.delete(outcome.id);
    watcher?.complete();
    const live = (liveRuns.get(outcome.agent) ?? 1) - 1;
    if (live > 0) liveRuns.set(outcome.agent, live);
    else liveRuns.delete(outcome.agent);
    if (catalog.lifecycleOf(outcome.agent) === 'temporary') forget(outcome.agent);
    if (table.active === 0) for (const wake of idleWaiters.splice(0)) wake();
  }

  /** Removes an agent made during the run, unless one of its runs is still live (it goes when the last one ends). */
  function forget(name: string): void {
    if (!liveRuns.has(name)) catalog.remove(name);
  }

  /** Starts an agent (or resumes an ended one): checks the request, makes the input, sends `SPAWN`. */
  function launch(request: Launch & Omit<SpawnOptions, 'parentId'> & { watch?: boolean }): AgentHandle {
    if (closed) throw new RuntimeClosedError();
    const agent = catalog.get(request.agent);
    if (!agent) throw new UnknownAgentError(request.agent, catalog.names());
    if (typeof request.task !== 'string' || request.task.trim() === '') {
      throw new ConfigurationError(`The task for "${request.agent}" must be a non-empty string.`);
    }
    const parent = request.parentId == null ? undefined : table.record(request.parentId);
    if (request.parentId != null && !parent) throw new UnknownAgentError(request.parentId);
    const definition = agent.definition;
    if (request.resume !== undefined && !results.ended(request.resume)) {
      // Its result is not in: a run of it is live (or was launched a moment ago), so it cannot be resumed now.
      throw new DelegationError('still_running', `Agent ${request.resume} is still running; it can be resumed once it has ended.`);
    }
    let id = request.resume;
    if (id === undefined) {
      id = `agent:${agent.name}:${agentKey()}`;
      while (table.record(id)) id = `agent:${agent.name}:${agentKey()}`;
    }
    const result = results.begin(id, request.resume === undefined ? undefined : { ...(latest.agents[id]?.subtree ?? emptyFigures()) });
    liveRuns.set(agent.name, (liveRuns.get(agent.name) ?? 0) + 1);
    const watcher = request.watch ? new HandleStream() : undefined;
    if (watcher) watchers.set(id, watcher);
    const approval = request.approval ? { requestId: `approval:${agentKey()}`, ...request.approval } : undefined;
    if (approval) {
      approvals.open({
        requestId: approval.requestId,
        agentId: id,
        callerId: request.parentId ?? '',
        agent: agent.name,
        task: request.task,
        risk: approval.risk,
        ...(approval.reason === undefined ? {} : { reason: approval.reason }),
      });
    }
    supervisor.send({
      type: 'SPAWN',
      request: {
        priority: request.priority,
        ...(approval ? { approval } : {}),
        ...(request.deny === undefined ? {} : { deny: request.deny }),
        ...(request.waiter === undefined ? {} : { waiter: request.waiter }),
        input: {
          id,
          name: agent.name,
          runId,
          parentId: parent?.id ?? null,
          toolCallId: request.toolCallId ?? null,
          depth: parent ? parent.depth + 1 : 0,
          task: request.task,
          ...(request.description === undefined ? {} : { description: request.description }),
          ...(request.background ? { background: true } : {}),
          ...(request.resume === undefined ? {} : { resumed: true }),
          systemPrompt: definition.systemPrompt,
          model: agent.modelName ?? agent.model.name,
          tools: [...agent.tools.keys()],
          maxTurns: positive(request.maxTurns, 'maxTurns') ?? definition.maxTurns ?? settings.maxTurns,
          idleTimeoutMs: positive(request.idleTimeoutMs, 'idleTimeoutMs') ?? definition.idleTimeoutMs ?? settings.idleTimeoutMs,
          ...(request.budget ? { budget: request.budget } : {}),
          ...(request.history ? { history: request.history } : {}),
        },
      },
    });
    return { id, result, events$: watcher ? watcher.observable : events$ };
  }

  function spawnFromCode(agentName: string, task: string, spawnOptions: SpawnOptions, watch: boolean): AgentHandle {
    return launch({ ...spawnOptions, agent: agentName, task, parentId: spawnOptions.parentId ?? null, watch });
  }

  return {
    runId,
    get agentNames() {
      return Object.freeze(catalog.names());
    },
    events$,
    metrics$,
    spawn: (agentName, task, spawnOptions = {}) => spawnFromCode(agentName, task, spawnOptions, true),
    run: (agentName, task, spawnOptions = {}) => spawnFromCode(agentName, task, spawnOptions, false).result,
    resume(id, task, resumeOptions = {}) {
      const record = table.record(id);
      const conversation = results.conversation(id);
      if (!record || !conversation) throw new DelegationError('unknown_session', `No agent session has the id "${id}".`);
      if (record.state === 'pending' || record.state === 'running') {
        throw new DelegationError('still_running', `Agent ${id} is still ${record.state}; it can be resumed once it has ended.`);
      }
      return launch({
        ...resumeOptions,
        agent: record.name,
        task,
        parentId: resumeOptions.parentId ?? record.parentId,
        resume: id,
        history: [...conversation],
        watch: true,
      });
    },
    taskOutput: (id, outputOptions) => delegator.taskOutput(id, outputOptions).then((output) => output),
    cancel(id) {
      if (!table.record(id)) throw new UnknownAgentError(id);
      supervisor.send({ type: 'CANCEL', id });
    },
    approve(requestId) {
      const approval = approvals.take(requestId);
      if (!approval) throw new UnknownRequestError(requestId);
      supervisor.send({ type: 'APPROVE', id: approval.agentId });
    },
    deny(requestId, reason = 'Denied by a person.') {
      const approval = approvals.take(requestId);
      if (!approval) throw new UnknownRequestError(requestId);
      supervisor.send({ type: 'DENY', id: approval.agentId, error: reason, requestId });
    },
    pendingApprovals: () => approvals.list(),
    cleanupTemporary() {
      const names = catalog.temporary();
      for (const actor of [...table.liveActors()]) {
        const record = table.record(actor.id);
        if (record && names.includes(record.name)) supervisor.send({ type: 'CANCEL', id: record.id, error: 'Temporary agents were cleaned up.' });
      }
      for (const name of names) forget(name); // a run still ending takes its agent with it when it ends
      return names;
    },
    metrics: () => latest,
    record: (id) => table.record(id),
    idle() {
      if (table.active === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    shutdown() {
      if (shutdownPromise) return shutdownPromise;
      closed = true;
      supervisor.send({ type: 'SHUTDOWN' });
      shutdownPromise = toPromise(supervisor).then(() => {
        streams.complete();
        for (const subscription of subscriptions) subscription.unsubscribe();
        for (const wake of idleWaiters.splice(0)) wake();
      });
      return shutdownPromise;
    },
  };
}

/** The events an agent actor emits, as an Observable that completes when the agent ends. */
function eventsOf(actor: AgentActorRef): Observable<TroupeEvent> {
  return new Observable<TroupeEvent>((subscriber) => {
    const listener = actor.on('*', (event) => subscriber.next(event as TroupeEvent));
    const ended = actor.subscribe({ complete: () => subscriber.complete(), error: () => subscriber.complete() });
    return () => {
      listener.unsubscribe();
      ended.unsubscribe();
    };
  });
}

/**
 * The events of one handle. Events that arrive before anyone subscribes are kept until the end of the tick in
 * which the agent was spawned, so `spawn(...).events$.subscribe(...)` sees the agent from its first event.
 */
class HandleStream {
  private readonly subject = new Subject<TroupeEvent>();
  private early: TroupeEvent[] | null = [];
  readonly observable = new Observable<TroupeEvent>((subscriber) => {
    for (const event of this.early ?? []) subscriber.next(event);
    if (this.subject.closed || this.subject.isStopped) {
      subscriber.complete();
      return;
    }
    return this.subject.subscribe(subscriber);
  });

  constructor() {
    queueMicrotask(() => (this.early = null));
  }

  next(event: TroupeEvent): void {
    this.early?.push(event);
    this.subject.next(event);
  }

  complete(): void {
    this.subject.complete();
  }
}

/** An outcome as a result: its own figures, and its subtree's for this run (since `baseline`). */
function toResult(outcome: AgentOutcome, metrics: MetricsSnapshot, baseline: Figures): AgentResult {
  const subtree = metrics.agents[outcome.id]?.subtree;
  return {
    id: outcome.id,
    agent: outcome.agent,
    status: outcome.status,
    ...(outcome.output === undefined ? {} : { output: outcome.output }),
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason, error: outcome.error ?? '' }),
    turns: outcome.turns,
    toolCallsExecuted: outcome.toolCallsExecuted,
    // `own` is the ended agent's own object (nothing changes it any more); `subtree` is copied from the live metrics.
    metrics: { own: outcome.own, subtree: subtree ? difference(subtree, baseline) : { ...outcome.own } },
  };
}

function difference(now: Figures, before: Figures): Figures {
  return {
    inputTokens: now.inputTokens - before.inputTokens,
    outputTokens: now.outputTokens - before.outputTokens,
    costUsd: Math.round((now.costUsd - before.costUsd) * 1e12) / 1e12,
    modelCalls: now.modelCalls - before.modelCalls,
    toolCalls: now.toolCalls - before.toolCalls,
    toolErrors: now.toolErrors - before.toolErrors,
    durationMs: now.durationMs - before.durationMs,
  };
}

interface Settings {
  maxParallel: number;
  maxTurns: number;
  idleTimeoutMs: number;
  maxToolConcurrency: number;
  maxDepth: number;
}

function readSettings(options: RuntimeOptions): Settings {
  if (!options || !Array.isArray(options.agents) || options.agents.length === 0) {
    throw new ConfigurationError('createRuntime needs at least one agent in `agents`.');
  }
  const { maxDepth } = options;
  if (maxDepth !== undefined && !(Number.isInteger(maxDepth) && maxDepth >= 0)) {
    throw new ConfigurationError('maxDepth must be a whole number ≥ 0 (0: no agent may delegate).');
  }
  if (options.delegationPolicy !== undefined && typeof options.delegationPolicy !== 'function') {
    throw new ConfigurationError('delegationPolicy must be a function of the delegation request.');
  }
  return {
    maxParallel: positive(options.maxParallel, 'maxParallel') ?? DEFAULTS.maxParallel,
    maxTurns: positive(options.maxTurns, 'maxTurns') ?? DEFAULTS.maxTurns,
    idleTimeoutMs: positive(options.idleTimeoutMs, 'idleTimeoutMs') ?? DEFAULTS.idleTimeoutMs,
    maxToolConcurrency: positive(options.maxToolConcurrency, 'maxToolConcurrency') ?? DEFAULTS.maxToolConcurrency,
    maxDepth: maxDepth ?? DEFAULTS.maxDepth,
  };
}

function positive(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && value > 0)) throw new ConfigurationError(`${field} must be a positive number.`);
  return value;
}
