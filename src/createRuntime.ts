import { customAlphabet } from 'nanoid';
import { Observable, Subject, mergeAll, share, shareReplay, type Subscription } from 'rxjs';
import { createActor, toPromise, type InspectionEvent, type Observer } from 'xstate';
import type { ResolvedAgent } from './actors/agentEnvironment.js';
import { createCallModel } from './actors/callModel.js';
import { createRunTools } from './actors/runTools.js';
import { defineAgent, type Agent, type AgentDefinition } from './catalog/defineAgent.js';
import { realClock, type Clock } from './clock.js';
import { ConfigurationError, RuntimeClosedError, UnknownAgentError } from './errors.js';
import type { FailureReason, TroupeEvent } from './events/events.js';
import { foldMetrics } from './events/foldMetrics.js';
import { createMetrics, emptyFigures, type Figures, type MetricsSnapshot } from './events/metrics.js';
import { agentMachine, type AgentActorRef, type AgentBudget, type AgentOutcome } from './machines/agentMachine.js';
import type { AgentRecord } from './machines/agentTable.js';
import { supervisorMachine } from './machines/supervisorMachine.js';
import type { ChatMessage, Model } from './models/Model.js';
import { defaultPrices, type PriceTable } from './models/prices.js';
import { indexTools, type Tool } from './tools/defineTool.js';

/** The options of {@link createRuntime}. */
export interface RuntimeOptions {
  /** The model agents use unless their definition names another `Model`. */
  model?: Model;
  /** The agents that may be spawned, made with `defineAgent` (plain definitions are validated the same way). */
  agents: readonly (Agent | AgentDefinition)[];
  /** Tools agents may name in their `tools` list. */
  tools?: readonly Tool[];
  /** At most this many agents run at once; the rest wait in `pending` (default 5). */
  maxParallel?: number;
  /** Model turns an agent may take before it fails with `max_turns` (default 10). */
  maxTurns?: number;
  /** How long an agent may make no progress before it fails with `timeout` (default 5 minutes). */
  idleTimeoutMs?: number;
  /** At most this many tool calls of one turn run at once (default 3). */
  maxToolConcurrency?: number;
  /** The actor system's clock: pass XState's `SimulatedClock` to run in simulated time (default: real time). */
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
  /** The agent that spawns this one (for delegation); its subtree metrics include this agent's. */
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
}

/** An agent's figures: its own, and its subtree's (itself plus every agent it spawned, recursively). */
export interface ResultMetrics {
  own: Figures;
  subtree: Figures;
}

/** How an agent ended. Plain JSON. */
export interface AgentResult {
  /** The agent's id. */
  id: string;
  /** The name of its definition. */
  agent: string;
  /** `completed` with an `output`, or `failed` with a `reason` and an `error`. */
  status: 'completed' | 'failed';
  /** The final answer of a completed agent. */
  output?: string;
  /** Why a failed agent failed. */
  reason?: FailureReason;
  /** What went wrong, for a failed agent. */
  error?: string;
  /** Model turns taken. */
  turns: number;
  /** Tool calls executed (error results included). */
  toolCallsExecuted: number;
  /** Tokens, cost, calls and time. */
  metrics: ResultMetrics;
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
  /** The names of the agents that may be spawned. */
  readonly agentNames: readonly string[];
  /** Every event of every agent, merged. Hot: subscribe before spawning to see everything. */
  readonly events$: Observable<TroupeEvent>;
  /** Live metrics folded from `events$`; replays the latest snapshot to new subscribers. */
  readonly metrics$: Observable<MetricsSnapshot>;
  /** Spawns an agent; it starts when a slot is free under `maxParallel`. */
  spawn(agentName: string, task: string, options?: SpawnOptions): AgentHandle;
  /** Spawns an agent and waits for its result. */
  run(agentName: string, task: string, options?: SpawnOptions): Promise<AgentResult>;
  /** Cancels an agent and all its descendants; they fail with `cancelled`. Unknown ids throw. */
  cancel(id: string): void;
  /** The latest metrics snapshot. */
  metrics(): MetricsSnapshot;
  /** The supervisor's record of an agent (kept after it ends). */
  record(id: string): Readonly<AgentRecord> | undefined;
  /** Resolves when no agent is pending or running. */
  idle(): Promise<void>;
  /** Cancels every live agent, stops the supervisor and completes the streams; leaves no actor or timer. */
  shutdown(): Promise<void>;
}

const DEFAULTS = { maxParallel: 5, maxTurns: 10, idleTimeoutMs: 5 * 60_000, maxToolConcurrency: 3 } as const;
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
  const resolved = resolveAgents(options, settings.maxToolConcurrency);
  const prices: PriceTable = { ...defaultPrices, ...options.prices };
  const environment = {
    prices,
    resolve(name: string): ResolvedAgent {
      const agent = resolved.get(name);
      if (!agent) throw new UnknownAgentError(name, [...resolved.keys()]);
      return agent;
    },
  };
  const runId = options.runId ?? agentKey();
  const agentLogic = agentMachine.provide({
    actors: { callModel: createCallModel(environment), runTools: createRunTools(environment) },
  });

  const streams = new Subject<Observable<TroupeEvent>>();
  const events$ = streams.pipe(mergeAll(), share());
  const metrics$ = events$.pipe(foldMetrics(), shareReplay({ bufferSize: 1, refCount: false }));
  let latest: MetricsSnapshot = createMetrics();
  const waiting = new Map<string, (result: AgentResult) => void>();
  const watchers = new Map<string, HandleStream>();
  const idleWaiters: (() => void)[] = [];
  const subscriptions: Subscription[] = [];

  const supervisor = createActor(
    supervisorMachine.provide({
      actions: {
        observeAgent: ({ context }, { id }) => {
          const actor = context.agents.actor(id);
          if (actor) streams.next(eventsOf(actor));
        },
        reportOutcome: (_, { outcome }) => settle(outcome),
      },
    }),
    {
      id: 'supervisor',
      systemId: 'supervisor',
      input: { agentLogic, maxParallel: settings.maxParallel },
      clock: options.clock ?? realClock,
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
    const result = toResult(outcome, latest);
    const resolve = waiting.get(outcome.id);
    waiting.delete(outcome.id);
    resolve?.(result);
    const watcher = watchers.get(outcome.id);
    watchers.delete(outcome.id);
    watcher?.complete();
    if (table.active === 0) for (const wake of idleWaiters.splice(0)) wake();
  }

  function start(agentName: string, task: string, spawnOptions: SpawnOptions, watch: boolean): AgentHandle {
    if (closed) throw new RuntimeClosedError();
    const agent = resolved.get(agentName);
    if (!agent) throw new UnknownAgentError(agentName, [...resolved.keys()]);
    if (typeof task !== 'string' || task.trim() === '') {
      throw new ConfigurationError(`The task for "${agentName}" must be a non-empty string.`);
    }
    const parent = spawnOptions.parentId === undefined ? undefined : table.record(spawnOptions.parentId);
    if (spawnOptions.parentId !== undefined && !parent) throw new UnknownAgentError(spawnOptions.parentId);
    const definition = agent.definition;
    let id = `agent:${agentName}:${agentKey()}`;
    while (table.record(id)) id = `agent:${agentName}:${agentKey()}`;
    const result = new Promise<AgentResult>((resolve) => waiting.set(id, resolve));
    const watcher = watch ? new HandleStream() : undefined;
    if (watcher) watchers.set(id, watcher);
    supervisor.send({
      type: 'SPAWN',
      request: {
        priority: spawnOptions.priority,
        input: {
          id,
          name: agentName,
          runId,
          parentId: parent?.id ?? null,
          toolCallId: spawnOptions.toolCallId ?? null,
          depth: parent ? parent.depth + 1 : 0,
          task,
          systemPrompt: definition.systemPrompt,
          model: agent.modelName ?? agent.model.name,
          tools: [...agent.tools.keys()],
          maxTurns: positive(spawnOptions.maxTurns, 'maxTurns') ?? definition.maxTurns ?? settings.maxTurns,
          idleTimeoutMs:
            positive(spawnOptions.idleTimeoutMs, 'idleTimeoutMs') ?? definition.idleTimeoutMs ?? settings.idleTimeoutMs,
          ...(spawnOptions.budget ? { budget: spawnOptions.budget } : {}),
          ...(spawnOptions.history ? { history: spawnOptions.history } : {}),
        },
      },
    });
    return { id, result, events$: watcher ? watcher.observable : events$ };
  }

  return {
    runId,
    agentNames: Object.freeze([...resolved.keys()]),
    events$,
    metrics$,
    spawn: (agentName, task, spawnOptions = {}) => start(agentName, task, spawnOptions, true),
    run: (agentName, task, spawnOptions = {}) => start(agentName, task, spawnOptions, false).result,
    cancel(id) {
      if (!table.record(id)) throw new UnknownAgentError(id);
      supervisor.send({ type: 'CANCEL', id });
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

function toResult(outcome: AgentOutcome, metrics: MetricsSnapshot): AgentResult {
  const subtree = metrics.agents[outcome.id]?.subtree;
  return {
    id: outcome.id,
    agent: outcome.agent,
    status: outcome.status,
    ...(outcome.output === undefined ? {} : { output: outcome.output }),
    ...(outcome.reason === undefined ? {} : { reason: outcome.reason, error: outcome.error ?? '' }),
    turns: outcome.turns,
    toolCallsExecuted: outcome.toolCallsExecuted,
    metrics: { own: { ...outcome.own }, subtree: subtree ? { ...subtree } : { ...emptyFigures(), ...outcome.own } },
  };
}

interface Settings {
  maxParallel: number;
  maxTurns: number;
  idleTimeoutMs: number;
  maxToolConcurrency: number;
}

function readSettings(options: RuntimeOptions): Settings {
  if (!options || !Array.isArray(options.agents) || options.agents.length === 0) {
    throw new ConfigurationError('createRuntime needs at least one agent in `agents`.');
  }
  return {
    maxParallel: positive(options.maxParallel, 'maxParallel') ?? DEFAULTS.maxParallel,
    maxTurns: positive(options.maxTurns, 'maxTurns') ?? DEFAULTS.maxTurns,
    idleTimeoutMs: positive(options.idleTimeoutMs, 'idleTimeoutMs') ?? DEFAULTS.idleTimeoutMs,
    maxToolConcurrency: positive(options.maxToolConcurrency, 'maxToolConcurrency') ?? DEFAULTS.maxToolConcurrency,
  };
}

function positive(value: number | undefined, field: string): number | undefined {
  if (value === undefined) return undefined;
  if (!(typeof value === 'number' && value > 0)) throw new ConfigurationError(`${field} must be a positive number.`);
  return value;
}

/** An agent's definition with its model and tools looked up, validated once when the runtime is made. */
interface RuntimeAgent extends ResolvedAgent {
  readonly definition: Agent;
}

function resolveAgents(options: RuntimeOptions, maxToolConcurrency: number): Map<string, RuntimeAgent> {
  const shared = indexTools(options.tools ?? []);
  const agents = new Map<string, RuntimeAgent>();
  for (const given of options.agents) {
    const definition = defineAgent(given);
    if (agents.has(definition.name)) {
      throw new ConfigurationError(`Two agents are named "${definition.name}"; agent names must be unique.`);
    }
    const model = typeof definition.model === 'object' ? definition.model : options.model;
    if (!model) {
      throw new ConfigurationError(`Agent "${definition.name}" has no model: pass createRuntime({ model }).`);
    }
    const tools = indexTools(
      (definition.tools ?? []).map((tool) => {
        if (typeof tool !== 'string') return tool;
        const found = shared.get(tool);
        if (!found) {
          throw new ConfigurationError(
            `Agent "${definition.name}" lists the tool "${tool}", which is not in createRuntime({ tools }).`,
          );
        }
        return found;
      }),
    );
    agents.set(definition.name, {
      definition,
      name: definition.name,
      systemPrompt: definition.systemPrompt,
      model,
      ...(typeof definition.model === 'string' ? { modelName: definition.model } : {}),
      ...(definition.temperature === undefined ? {} : { temperature: definition.temperature }),
      tools,
      toolSchemas: [...tools.values()].map((tool) => tool.schema),
      maxToolConcurrency,
    });
  }
  return agents;
}
