import { customAlphabet } from 'nanoid';
import type { Subscription } from 'rxjs';
import { createActor, toPromise } from 'xstate';
import type { AgentEnvironment, ResolvedAgent } from './actors/agentEnvironment.js';
import { createCallModel } from './actors/callModel.js';
import { createRunTools } from './actors/runTools.js';
import { AgentCatalog } from './catalog/AgentCatalog.js';
import { AgentFiles } from './catalog/AgentFiles.js';
import { realClockFromNow } from './clock.js';
import { ConfigurationError, DelegationError, RuntimeClosedError, UnknownAgentError, UnknownRequestError } from './errors.js';
import { agentEvents } from './events/agentEvents.js';
import type { TroupeEvent } from './events/events.js';
import { createEventPipeline } from './events/eventPipeline.js';
import { createMetrics, emptyFigures, type MetricsSnapshot } from './events/metrics.js';
import { agentMachine, type AgentOutcome } from './machines/agentMachine.js';
import { supervisorMachine } from './machines/supervisorMachine.js';
import { InMemoryMemory } from './memory/InMemoryMemory.js';
import { SessionStore } from './memory/SessionStore.js';
import { defaultPrices, type PriceTable } from './models/prices.js';
import { AgentPool } from './runtime/AgentPool.js';
import { AgentResults, resultOf } from './runtime/AgentResults.js';
import { Approvals } from './runtime/Approvals.js';
import { Delegator, type Launch } from './runtime/Delegator.js';
import { HandleStream } from './runtime/HandleStream.js';
import type { AgentHandle, Runtime, RuntimeOptions, SpawnOptions } from './runtime/Runtime.js';
import { positive, readSettings } from './runtime/settings.js';

export type { AgentResult, ResultMetrics } from './runtime/AgentResults.js';
export type { AgentHandle, Runtime, RuntimeOptions, SpawnOptions } from './runtime/Runtime.js';

const agentKey = customAlphabet('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', 10);

/** A launch with the options a spawn from code may add. */
type LaunchRequest = Launch &
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
}

/**
 * Creates a runtime: an actor system whose root is the supervisor, with the given agents (in code, and in agent
 * files), tools and model.
 *
 * @example
 * const runtime = createRuntime({ model: new ScriptedModel(['Hello!']), agents: [greeter] });
 * const result = await runtime.run('greeter', 'Say hello.');
 * await runtime.shutdown();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const settings = readSettings(options);
  const projectDir = options.projectAgentDir ?? 'agents';
  const files =
    options.agentDirs?.length || projectDir !== false
      ? new AgentFiles(options.agentDirs ?? [], projectDir === false ? [] : [projectDir])
      : undefined;
  const catalog = new AgentCatalog(options.agents ?? [], {
    ...(options.model ? { model: options.model } : {}),
    ...(files ? { files } : {}),
    tools: options.tools ?? [],
    maxToolConcurrency: settings.maxToolConcurrency,
    maxDepth: settings.maxDepth,
  });
  const prices: PriceTable = { ...defaultPrices, ...options.prices };
  const clock = options.clock ?? realClockFromNow();
  const runId = options.runId ?? agentKey();
  const results = new AgentResults();
  const approvals = new Approvals();
  const sessions = new SessionStore(options.store ?? new InMemoryMemory({ copy: false }), {
    isLive: (id) => table.actor(id) !== undefined || results.running(id),
  });
  const pool = new AgentPool(clock, options.pool);

  const { streams, events$, metrics$ } = createEventPipeline();
  let latest: MetricsSnapshot = createMetrics();
  const watchers = new Map<string, HandleStream>();
  const live = new Map<string, LiveRun>();
  /** Live runs by agent name: an agent made during the run is only removed once none of its runs is live. */
  const liveRuns = new Map<string, number>();
  const idleWaiters: (() => void)[] = [];
  const subscriptions: Subscription[] = [];

  const delegator: Delegator = new Delegator({
    catalog,
    results,
    approvals,
    sessions,
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
    resolve: (name, id) => live.get(id)?.agent ?? catalog.resolve(name),
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
          if (actor) streams.add(agentEvents(actor));
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
  subscriptions.push(events$.subscribe((event) => observe(event)));
  supervisor.start();
  let closed = false;
  let shutdownPromise: Promise<void> | undefined;

  /** Keeps sessions in step with events, and hands each event to the handles watching its agent or an ancestor. */
  function observe(event: TroupeEvent): void {
    if (event.type === 'agent.started') sessions.started(event.agentId);
    if (watchers.size === 0) return;
    let id: string | null = event.agentId;
    while (id !== null) {
      watchers.get(id)?.next(event);
      id = table.record(id)?.parentId ?? null;
    }
  }

  function settle(outcome: AgentOutcome): void {
    approvals.drop(outcome.id);
    const result = resultOf(outcome, latest.agents[outcome.id]?.subtree, results.baseline(outcome.id));
    const run = live.get(outcome.id);
    live.delete(outcome.id);
    sessions.ended(
      outcome.id,
      {
        state: outcome.status,
        result: outcome.output ?? null,
        error: outcome.error ?? null,
        reason: outcome.reason ?? null,
        metrics: result.metrics,
      },
      outcome.messages,
      // A run's conversation is stored under its key (`main`) too once it completed; not a cancelled or failed one.
      outcome.status === 'completed' ? run?.conversationKey : undefined,
    );
    if (run?.poolKey && outcome.status === 'completed') pool.put(run.poolKey, outcome.agent, { id: outcome.id, messages: outcome.messages });
    results.settle(result);
    const watcher = watchers.get(outcome.id);
    watchers.delete(outcome.id);
    watcher?.complete();
    const runs = (liveRuns.get(outcome.agent) ?? 1) - 1;
    if (runs > 0) liveRuns.set(outcome.agent, runs);
    else liveRuns.delete(outcome.agent);
    if (catalog.lifecycleOf(outcome.agent) === 'temporary') forget(outcome.agent);
    if (table.active === 0) for (const wake of idleWaiters.splice(0)) wake();
  }

  /** Removes an agent made during the run, unless one of its runs is still live (it goes when the last one ends). */
  function forget(name: string): void {
    if (!liveRuns.has(name)) catalog.remove(name);
  }

  /** The agent of that name, its file read again if it changed; a refused file or an unknown name throws. */
  function agentNamed(name: string): ResolvedAgent {
    const refused = catalog.refresh(name);
    const agent = catalog.get(name);
    if (agent) return agent;
    throw refused ?? new UnknownAgentError(name, catalog.names());
  }

  /** Starts an agent (or resumes an ended one, or reuses a pooled one): checks, makes the input, sends `SPAWN`. */
  function launch(request: LaunchRequest): AgentHandle {
    if (closed) throw new RuntimeClosedError();
    const agent = agentNamed(request.agent);
    if (typeof request.task !== 'string' || request.task.trim() === '') {
      throw new ConfigurationError(`The task for "${request.agent}" must be a non-empty string.`);
    }
    const parent = request.parentId == null ? undefined : table.record(request.parentId);
    if (request.parentId != null && !parent) throw new UnknownAgentError(request.parentId);
    const definition = agent.definition;
    // Every check before the first change, so a refused launch leaves nothing behind.
    const maxTurns = positive(request.maxTurns, 'maxTurns') ?? definition.maxTurns ?? settings.maxTurns;
    const idleTimeoutMs = positive(request.idleTimeoutMs, 'idleTimeoutMs') ?? definition.idleTimeoutMs ?? settings.idleTimeoutMs;
    const isLive = (id: string) => table.actor(id) !== undefined || results.running(id);
    let { resume, history } = request;
    if (resume !== undefined && isLive(resume)) {
      // A run of it is live (or was launched a moment ago), so it cannot be resumed now.
      throw new DelegationError('still_running', `Agent ${resume} is still running; it can be resumed once it has ended.`);
    }
    if (resume !== undefined) pool.remove(resume); // resumed by hand: no longer idle in the pool
    const persist = request.persist ?? definition.persist === true;
    const poolKey = persist ? pool.key(agent) : undefined;
    if (poolKey !== undefined && resume === undefined) {
      const pooled = pool.take(poolKey, agent.name, (candidate) => !isLive(candidate));
      if (pooled) ({ id: resume, messages: history } = { id: pooled.id, messages: [...pooled.messages] });
    }
    let id = resume;
    if (id === undefined) {
      id = `agent:${agent.name}:${agentKey()}`;
      while (table.record(id)) id = `agent:${agent.name}:${agentKey()}`;
    }
    const result = results.begin(id, resume === undefined ? undefined : { ...(latest.agents[id]?.subtree ?? emptyFigures()) });
    // Where the session hangs: its parent agent; else the conversation it was stored under (a resumed session from
    // an earlier process); else the caller's key, `main` by default, which also keeps the run's conversation.
    const stored = request.conversationKey === undefined ? request.parentConversationId : undefined;
    const sessionParent = parent?.id ?? (stored !== undefined ? stored : (request.conversationKey ?? 'main'));
    const conversationKey =
      !parent && sessionParent !== null && !sessionParent.startsWith('agent:') ? sessionParent : undefined;
    live.set(id, {
      agent,
      ...(poolKey === undefined ? {} : { poolKey }),
      ...(conversationKey === undefined ? {} : { conversationKey }),
    });
    liveRuns.set(agent.name, (liveRuns.get(agent.name) ?? 0) + 1);
    sessions.spawned({ id, agentType: agent.name, parentConversationId: sessionParent, taskDescription: request.task });
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
          ...(resume === undefined ? {} : { resumed: true }),
          systemPrompt: definition.systemPrompt,
          model: agent.modelName ?? agent.model.name,
          tools: [...agent.tools.keys()],
          maxTurns,
          idleTimeoutMs,
          ...(request.budget ? { budget: request.budget } : {}),
          ...(history ? { history } : {}),
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
    get agentFileErrors() {
      return Object.freeze([...catalog.fileErrors]);
    },
    events$,
    metrics$,
    sessions,
    spawn: (agentName, task, spawnOptions = {}) => spawnFromCode(agentName, task, spawnOptions, true),
    run: (agentName, task, spawnOptions = {}) => spawnFromCode(agentName, task, spawnOptions, false).result,
    async resume(id, task, resumeOptions = {}) {
      const { agentType, history, parentId } = await delegator.session(id);
      const liveParent = resumeOptions.parentId ?? (parentId !== null && table.record(parentId) ? parentId : null);
      return launch({
        ...resumeOptions,
        agent: agentType,
        task,
        parentId: liveParent,
        ...(liveParent === null ? { parentConversationId: parentId } : {}),
        resume: id,
        history,
        watch: true,
      });
    },
    taskOutput: (id, outputOptions) => delegator.taskOutput(id, outputOptions),
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
    poolStats: () => pool.stats(),
    metrics: () => latest,
    record: (id) => table.record(id),
    idle() {
      if (table.active === 0) return Promise.resolve();
      return new Promise<void>((resolve) => idleWaiters.push(resolve));
    },
    flush: () => sessions.flush(),
    shutdown() {
      if (shutdownPromise) return shutdownPromise;
      closed = true;
      supervisor.send({ type: 'SHUTDOWN' });
      // Clean up however the supervisor ended (a crashed one included), then report its failure, if any.
      shutdownPromise = toPromise(supervisor).then(
        () => undefined,
        (error: unknown) => error ?? new Error('The supervisor failed.'),
      ).then(async (failure) => {
        pool.clear();
        streams.complete();
        for (const subscription of subscriptions) subscription.unsubscribe();
        for (const wake of idleWaiters.splice(0)) wake();
        await sessions.flush();
        if (failure !== undefined) throw failure;
      });
      return shutdownPromise;
    },
  };
}
