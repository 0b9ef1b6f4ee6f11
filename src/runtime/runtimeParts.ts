import type { ToolPolicy } from '../tools/toolApproval.js';
import type { MemoryPort } from '../memory/MemoryPort.js';
import type { Subscription } from 'rxjs';
import { createActor, toPromise, type EventObject, type InspectionEvent, type Observer } from 'xstate';
import { AgentWorks, createAgentWorker, workerParts } from '../actors/agentWorker.js';
import { renewIdleTimer } from '../actors/idleTimer.js';
import type { AgentEnvironment } from '../actors/agentEnvironment.js';
import { AgentCatalog } from '../catalog/AgentCatalog.js';
import { AgentFiles } from '../catalog/AgentFiles.js';
import { ToolAccess } from '../catalog/ToolAccess.js';
import { Workspace } from '../tools/files/Workspace.js';
import { realClockFromNow } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import type { TroupeEvent } from '../events/events.js';
import { createEventPipeline, type EventInput } from '../events/eventPipeline.js';
import type { MetricsSnapshot } from '../events/metrics.js';
import { createStatelyInspector, isStatelyInspector, type StatelyInspector } from '../inspect/statelyInspector.js';
import { createWebInspector, isWebInspector, type WebInspector } from '../inspect/webInspector.js';
import { stampEvent } from '../machines/agentContext.js';
import type { Announcement } from '../machines/agentTypes.js';
import { clockedAgentActions, clockedGroupAnnounce } from '../machines/agentClock.js';
import { agentChanges, assigned, inPlace } from '../machines/agentChanges.js';
import { agentMachine, type AgentOutcome } from '../machines/agentMachine.js';
import { groupMachine, type GroupContext, type GroupEvent } from '../machines/groupMachine.js';
import type { AgentTable } from '../machines/agentTable.js';
import type { AgentContext } from '../machines/agentTypes.js';
import { routeAtOnce, WakeLine } from '../machines/routing.js';
import { parkAtOnce, quietSlotNotices } from '../machines/slots.js';
import { batchEndGuards, budgetActions, budgetGuards, mailGuards, slotGuards, workActions } from '../machines/agentSetup.js';
import { endAtOnce, isActorEnd, spawnAtOnce, supervisorMachine, type SupervisorActorRef, type SupervisorContext, type SupervisorEvent } from '../machines/supervisorMachine.js';
import { agentParentLogic } from '../machines/agentParent.js';
import { SpawnBatch } from '../machines/spawnBatch.js';
import { InMemoryMemory } from '../memory/InMemoryMemory.js';
import { NoteStore } from '../memory/NoteStore.js';
import { SessionStore } from '../memory/SessionStore.js';
import { Blackboard } from '../messaging/Blackboard.js';
import { PostOffice, type RouteReport, type WaitAnswer } from '../messaging/PostOffice.js';
import { defaultPrices, type PriceTable } from '../models/prices.js';
import { RandomSource } from '../random.js';
import { Redactor } from '../redaction.js';
import { mcpSecrets, type McpServerConfig } from '../tools/mcp/McpServerConfig.js';
import { McpServers } from '../tools/mcp/McpServers.js';
import { recordEvents, type EventRecording } from '../views/recordEvents.js';
import { traceEvents } from '../views/traceEvents.js';
import { AgentPool } from './AgentPool.js';
import { AgentResults } from './AgentResults.js';
import { Approvals } from './Approvals.js';
import { Delegator, type DelegatorHost } from './Delegator.js';
import { Launcher } from './Launcher.js';
import { Retention } from './Retention.js';
import { RunLimits, type TurnSpend } from './RunLimits.js';
import { ProcessEndWatch, stopStalledAgents } from './ProcessEnd.js';
import { Messenger } from './Messenger.js';
import type { RuntimeOptions } from './Runtime.js';
import { RuntimeClock } from './RuntimeClock.js';
import { readSettings } from './settings.js';

/**
 * The runtime's redactor: the secrets given, and those of its MCP servers (an env token, an Authorization header),
 * which a failing server may quote in its error.
 */
function redactorFor(options: RuntimeOptions, mcpServers: ReadonlyMap<string, McpServerConfig>): Redactor {
  const given = options.secrets ?? [];
  return new Redactor({ secrets: Array.isArray(given) ? [...given, ...mcpSecrets(mcpServers.values())] : given });
}

/** Every part of one runtime, wired together (what `createRuntime` builds its public methods on). */
export type RuntimeParts = ReturnType<typeof buildParts>;

/** Makes every part of a runtime and wires them together; the supervisor is started last. */
export function buildParts(options: RuntimeOptions) {
  const settings = readSettings(options);
  const catalog = catalogFor(options, settings);
  const mcp = new McpServers(settings.mcpServers);
  const access = new ToolAccess(catalog, settings.maxDepth, mcp);
  const prices: PriceTable = { ...defaultPrices, ...options.prices };
  const clock = new RuntimeClock(options.clock ?? realClockFromNow());
  const random = options.seed === undefined ? RandomSource.unseeded() : new RandomSource(options.seed);
  const runId = options.runId ?? random.key();
  const results = new AgentResults();
  const approvals = new Approvals();
  const table = () => supervisor.getSnapshot().context.agents;
  // Secrets are replaced where data leaves the runtime: every event, results' errors and what sessions store.
  const redactor = redactorFor(options, settings.mcpServers);
  const inspection = inspectionFor(options, redactor, runId);
  const store = options.store ?? new InMemoryMemory({ copy: false });
  // The runtime's own in-memory store is read only through `sessions`: its reads replace the secrets, not its writes.
  const sessions = new SessionStore(store, { isLive: (id) => launcher.isLive(id), redactor, redactWhenRead: options.store === undefined });
  const pool = new AgentPool(clock, options.pool);
  const pipeline = createEventPipeline({ redactor });
  const { events$, internal$, metrics$ } = pipeline;
  const runtimeEvents = pipeline.input; // the runtime's events, and agents' and groups' (no stream each)
  const announceTo = (event: TroupeEvent) => runtimeEvents.next(event);
  let closed = false;
  const line = supervisorLine(() => supervisor, inspection.inspect === undefined, () => closed, (routed) => messenger.routed(routed));
  const announce = announcerFor(runId, clock, table, runtimeEvents);

  const { postOffice, blackboard, messenger } = messagingFor(options, { clock, catalog, send: line.send, table, announce, closed: () => closed, inspected: inspection.inspect !== undefined });
  const metrics = () => pipeline.live;
  const limits = new RunLimits({ table, metrics, maxAgents: settings.maxAgents, maxPending: settings.maxPending, runBudget: settings.budget });
  const retention = retentionFor(settings.retainFinished, { table, results, limits, metrics, sessions: options.store === undefined ? sessions : undefined });
  // The process running out of work while agents live stops them, so what awaits them settles (see ProcessEnd.ts).
  const warned = { value: false };
  const processEnd = new ProcessEndWatch(() => stopStalledAgents({ table, supervisor, simulated: clock.simulated, warned }));
  const launcher: Launcher = new Launcher({ settings, limits, retention, checkpoints: options.store !== undefined, runId, catalog, results, approvals, sessions, pool, postOffice, messenger, random, redactor, clock, announce, events$, metrics, table, send: line.send, activity: processEnd });
  const delegator = delegatorFor(options, { catalog, results, approvals, sessions, clock, inRealTime: (work) => clock.inRealTime(work), maxDepth: settings.maxDepth, table, launcher, send: line.send });
  const environment = environmentFor({ access, mcp, prices, launcher, delegator, messenger, blackboard, notes: notesFor(store, redactor, random, clock), runtimeEvents, clock, postOffice, limits, table, toolPolicy: options.toolPolicy, askPerson: personAskerFor(approvals, random, clock, runtimeEvents) });
  const unwatched = inspection.inspect ? undefined : unwatchedParts(environment, table, line);
  const supervisor = supervisorFor(inspection.inspect, {
    agentLogic: agentLogicFor(environment, postOffice, clock, limits, announceTo, unwatched),
    works: unwatched?.works,
    maxParallel: settings.maxParallel,
    clock, postOffice, announceTo, launcher, messenger, line,
  });
  // The runtime's own consumers, in this order, before any subscriber of events$. The trace is the first: an event is
  // in its file before anyone else (user code too) is told of it. The pipeline folds the metrics before all of them.
  const trace: EventRecording | undefined = options.trace ? traceEvents(internal$, options.trace, { runId }) : undefined;
  const subscriptions: Subscription[] = [
    pipeline.fold(),
    pipeline.tap((event, redacted) => launcher.observe(event, redacted), () => launcher.passesEventsOn),
  ];
  const recording = recordingAfter(trace, subscriptions, options.record, () => recordEvents(internal$, options.record!, { runId }));
  if (inspection.ui) subscriptions.push(inspection.ui.watch(internal$));
  supervisor.start();
  return {
    settings,
    runId,
    redactor,
    catalog,
    mcp,
    clock,
    results,
    approvals,
    sessions,
    pool,
    runtimeEvents,
    events$,
    metrics$,
    postOffice,
    blackboard,
    messenger,
    launcher,
    delegator,
    supervisor,
    subscriptions,
    recording,
    trace,
    ...inspection,
    latest: () => pipeline.live,
    close: () => {
      closed = true;
      launcher.closed = true;
      processEnd.close();
    },
  };
}

/**
 * What keeps the memory of finished runs bounded, and what forgetting a finished run drops: its records, results,
 * metrics entries and limits, and its sessions when the store is the runtime's own (in memory).
 */
function retentionFor(
  keep: number,
  parts: { table: () => AgentTable; results: AgentResults; limits: RunLimits; metrics: () => MetricsSnapshot; sessions: SessionStore | undefined },
): Retention {
  const { table, results, limits, metrics, sessions } = parts;
  return new Retention({
    keep,
    table,
    forget: (ids, root) => {
      const { agents } = metrics(); // the metrics fold's own record of agents, updated in place
      for (const id of ids) {
        table().forget(id);
        results.forget(id);
        delete agents[id];
      }
      limits.forget(ids, root);
      sessions?.forget(ids);
    },
  });
}

/**
 * Long-term notes (memory_save, memory_search) in the runtime's store, their secrets replaced like the sessions'. Keys
 * come from the seeded source; on a simulated clock a note's `savedAt` is the clock's time (`memory_search` shows its
 * date to the model, so the wall clock's day would make a seeded simulation differ from one day to the next).
 */
function notesFor(store: MemoryPort, redactor: Redactor, random: RandomSource, clock: RuntimeClock): NoteStore {
  const noteKeys = random.fork('notes');
  return new NoteStore(store, { redactor, makeId: () => noteKeys.key(), ...(clock.simulated ? { now: () => clock.now() } : {}) });
}

/** How the runtime announces its own events (messages, the blackboard): with the header of the agent's record. */
function announcerFor(runId: string, clock: RuntimeClock, table: () => AgentTable, runtimeEvents: EventInput) {
  return (agentId: string, body: Announcement) => {
    const record = table().record(agentId);
    const header = { runId, id: agentId, parentId: record?.parentId ?? null, toolCallId: record?.toolCallId ?? null };
    runtimeEvents.next(stampEvent(header, clock.now(), body));
  };
}

/** Delegation on behalf of agents: checks, policy, approvals, and launches through the launcher. */
function delegatorFor(
  options: RuntimeOptions,
  parts: Pick<DelegatorHost, 'catalog' | 'results' | 'approvals' | 'sessions' | 'clock' | 'inRealTime' | 'maxDepth' | 'send'> & {
    table: () => AgentTable;
    launcher: Launcher;
  },
): Delegator {
  const { table, launcher, ...host } = parts;
  return new Delegator({
    ...host,
    policy: options.delegationPolicy,
    record: (id) => table().record(id),
    launch: (request) => launcher.launch(request).id,
    forget: (name) => launcher.forget(name),
  });
}

/** The message path: the post office (inboxes, topics, waits), the blackboard, and the messenger that sends. */
function messagingFor(
  options: RuntimeOptions,
  parts: {
    clock: RuntimeClock;
    catalog: AgentCatalog;
    send: (event: SupervisorEvent) => void;
    table: () => AgentTable;
    announce: (agentId: string, body: Announcement) => void;
    closed: () => boolean;
    inspected: boolean;
  },
) {
  const { clock, catalog, send, table, announce } = parts;
  const postOffice = new PostOffice(
    clock,
    (id) => send({ type: 'WAKE', id }),
    (id, answer) => announce(id, waitEnded(answer)),
  );
  const blackboard = new Blackboard((change) =>
    announce(change.by, {
      type: 'blackboard.changed',
      key: change.key,
      ...(change.deleted ? { deleted: true } : { value: change.value }),
    }),
  );
  const messenger = new Messenger({
    clock,
    postOffice,
    policy: options.messagePolicy,
    send,
    record: (id) => table().record(id),
    contactsOf: (name) => catalog.get(name)?.definition.canMessage,
    announce,
    closed: parts.closed,
    inspected: parts.inspected,
  });
  return { postOffice, blackboard, messenger };
}

/** The `tool.wait_ended` of a wait whose answer an agent reads. */
function waitEnded(answer: WaitAnswer): Announcement {
  const { callId, tool, outcome, messages, durationMs } = answer;
  return {
    type: 'tool.wait_ended',
    callId,
    tool,
    outcome,
    status: answer.isError ? 'error' : 'ok',
    messages,
    durationMs,
    ...(answer.isError ? { error: answer.content.replace(/^Error: /, '') } : {}),
  };
}

/** What the agents' workers (model calls, tool batches) are given: agents, tools, services and the clock. */
function environmentFor(parts: {
  access: ToolAccess;
  mcp: McpServers;
  prices: PriceTable;
  launcher: Launcher;
  delegator: Delegator;
  messenger: Messenger;
  blackboard: Blackboard;
  notes: NoteStore;
  runtimeEvents: EventInput;
  clock: RuntimeClock;
  postOffice: PostOffice;
  limits: RunLimits;
  table: () => AgentTable;
  toolPolicy: ToolPolicy | undefined;
  askPerson: NonNullable<AgentEnvironment['askPerson']>;
}): AgentEnvironment {
  const { access, launcher, delegator, messenger, runtimeEvents, postOffice } = parts;
  return {
    prices: parts.prices,
    resolve: (name, id) => launcher.resolve(name, id),
    toolsReady: (agent) => (agent.mcp ? parts.mcp.ready(agent.mcp) : undefined),
    toolSchemas: (agent, depth, agentId) => access.offered(agent, depth, agentId),
    toolFor: (agent, depth, toolName) => access.toolFor(agent, depth, toolName),
    plan: (tool, args) => access.plan(tool, args),
    delegation: (caller) => delegator.forCaller(caller),
    messaging: (caller) => messenger.forCaller(caller),
    blackboard: parts.blackboard,
    notes: parts.notes,
    random: (agentId) => launcher.randomFor(agentId),
    announce: (event) => runtimeEvents.next(event),
    watched: () => runtimeEvents.watched(),
    clock: parts.clock,
    inRealTime: (work) => parts.clock.inRealTime(work),
    dropWait: (agentId, callId) => postOffice.cancelWait(agentId, callId),
    progressed: (agentId) => {
      const actor = parts.table().actor(agentId);
      if (actor) renewIdleTimer(actor, parts.clock);
    },
    reserveTurn: (agentId) => parts.limits.reserveTurn(agentId),
    ...(parts.toolPolicy === undefined ? {} : { toolPolicy: parts.toolPolicy }),
    askPerson: parts.askPerson,
  };
}

/**
 * How a tool call asks a person: its request kept in `approvals` (listed by `pendingApprovals`, answered by `approve` and
 * `deny`) and announced as `approval.requested` on the calling agent; withdrawn when the call's batch stops first.
 */
function personAskerFor(approvals: Approvals, random: RandomSource, clock: RuntimeClock, runtimeEvents: EventInput): NonNullable<AgentEnvironment['askPerson']> {
  const keys = random.fork('tool-approvals');
  return (ask, stop) =>
    new Promise((resolve, reject) => {
      const requestId = `approval:${keys.key()}`;
      const { header, agentName, tool, category, callId, task, risk, reason } = ask;
      const why = reason === undefined ? {} : { reason };
      approvals.openCall({ requestId, agentId: header.id, callerId: header.id, agent: agentName, task, risk, ...why, tool, category, callId }, (answer) =>
        resolve({ ...answer, requestId }),
      );
      runtimeEvents.next(stampEvent(header, clock.now(), { type: 'approval.requested', requestId, name: agentName, task, risk, ...why, tool, category, callId }));
      stop.catch((error: unknown) => {
        approvals.withdraw(requestId);
        reject(error);
      });
    });
}

/**
 * What agents do at once when no inspector watches: their work without a worker actor (see AgentWorks), their slot
 * given back without a step of the supervisor (see parkAtOnce), and whether they hold one as the supervisor's table
 * says (their slot guards: see quietSlotNotices). Watched by an inspector, these are events it sees.
 */
function unwatchedParts(environment: AgentEnvironment, table: () => AgentTable, line: SupervisorLine) {
  return {
    works: new AgentWorks(workerParts(environment)),
    park: (id: string) => parkAtOnce(table(), id, () => line.send({ type: 'SLOT.RELEASE', id })),
    holdsSlot: (id: string) => table().record(id)?.holdsSlot === true,
  };
}

/**
 * The agent machine with the runtime's actors, its clock, its post office's mail and the run's budgets. Unwatched (no
 * inspector), an agent gives its slot back with `park` instead of its `SLOT.RELEASE` event, does its work in `works`
 * without a worker actor (`workActions`), and changes its context in place rather than with `assign` (`inPlace`).
 */
function agentLogicFor(
  environment: AgentEnvironment,
  postOffice: PostOffice,
  clock: RuntimeClock,
  limits: RunLimits,
  announceTo: (event: TroupeEvent) => void,
  unwatched?: ReturnType<typeof unwatchedParts>,
) {
  const atOnce = unwatched
    ? { releaseSlot: ({ context }: { context: AgentContext }) => unwatched.park(context.input.id), ...workActions(unwatched.works) }
    : {};
  // Unwatched, agents are told of most lent and returned slots without an event (see quietSlotNotices): the table knows.
  const holds = unwatched ? (context: AgentContext) => unwatched.holdsSlot(context.input.id) : (context: AgentContext) => context.holdsSlot;
  const ready = (agentId: string) => postOffice.ready(agentId);
  const crosses = (agentId: string, turn: TurnSpend) => limits.crosses(agentId, turn);
  // Unwatched, nothing keeps an agent's earlier snapshots: its context changes in place (see inPlace).
  const make = unwatched ? inPlace : assigned;
  return agentMachine.provide({
    actors: { worker: createAgentWorker(environment) },
    guards: {
      ...mailGuards(ready),
      ...budgetGuards(crosses),
      ...slotGuards(holds),
      ...batchEndGuards(ready, holds),
    },
    actions: {
      ...agentChanges(make),
      ...clockedAgentActions(clock, postOffice, announceTo, make),
      ...budgetActions(crosses, make),
      ...atOnce,
    },
  });
}

/**
 * The inspection observer of the actor system and the Stately inspector (one the runtime starts for `inspect:
 * 'stately'`, which it closes at shutdown, or the caller's), and the web inspector (one the runtime starts for `ui:
 * true` or options, closed at shutdown too, or the caller's).
 */
function inspectionFor(options: RuntimeOptions, redactor: Redactor, runId: string) {
  const { ui } = options;
  const web: { ui?: WebInspector; ownsUi: boolean } =
    ui === undefined || ui === false
      ? { ownsUi: false }
      : isWebInspector(ui)
        ? { ui, ownsUi: false }
        : { ui: announced('web', createWebInspector({ title: `run ${runId}`, ...(ui === true ? {} : ui) })), ownsUi: true };
  return { ...statelyFor(options, redactor), ...web };
}

function statelyFor(options: RuntimeOptions, redactor: Redactor): { inspector?: StatelyInspector; inspect?: Inspect; ownsInspector: boolean } {
  const { inspect } = options;
  if (inspect === undefined) return { ownsInspector: false };
  if (isStatelyInspector(inspect)) return { inspector: inspect, inspect: inspect.inspect, ownsInspector: false };
  if (inspect !== 'stately') return { inspect, ownsInspector: false };
  const inspector = announced('Stately', createStatelyInspector({ redactor }));
  return { inspector, inspect: inspector.inspect, ownsInspector: true };
}

/** An inspector the runtime started, its page printed on stderr once it listens (or why it could not start). */
function announced<T extends { url: Promise<string> }>(name: 'web' | 'Stately', inspector: T): T {
  inspector.url.then(
    (url) => process.stderr.write(`troupe: watch the run in the ${name} inspector: open ${url}\n`),
    (error: unknown) => process.stderr.write(`troupe: the ${name} inspector could not start: ${error instanceof Error ? error.message : String(error)}\n`),
  );
  return inspector;
}

/** An XState inspection observer, as `createActor` takes it. */
type Inspect = Observer<InspectionEvent> | ((event: InspectionEvent) => void);

/** The supervisor actor (not started): it spawns the agents and groups, and reports their ends and routes. */
function supervisorFor(
  inspect: Inspect | undefined,
  parts: {
    agentLogic: ReturnType<typeof agentLogicFor>;
    /** Unwatched, the agents' work (see AgentWorks). */
    works: AgentWorks | undefined;
    maxParallel: number;
    clock: RuntimeClock;
    postOffice: PostOffice;
    /** Where agents and groups announce their events (the runtime's own stream, merged into `events$`). */
    announceTo: (event: TroupeEvent) => void;
    launcher: Launcher;
    messenger: Messenger;
    /** How the runtime reaches the supervisor (see supervisorLine). */
    line: SupervisorLine;
  },
) {
  const { agentLogic, works, clock, postOffice, launcher, messenger, line } = parts;
  const { report } = line;
  const settle = (outcome: AgentOutcome) => {
    // An agent stops its work as it leaves `running`; one whose actor crashed left no state, so its work stops here.
    works?.stop(outcome.id);
    report(() => launcher.settle(outcome));
  };
  // What sends events to agents in the supervisor's own step: an agent that ends meanwhile is ended by that step's
  // successor, as with the supervisor as its parent, rather than in the middle of it.
  const inStep = Object.fromEntries(
    STEPS_THAT_SEND.map((name) => {
      const action = supervisorMachine.implementations.actions[name] as (...args: unknown[]) => void;
      return [name, (...args: unknown[]) => report(() => action(...args))];
    }),
  );
  const groupLogic = groupMachine.provide({ actions: { announce: clockedGroupAnnounce<GroupContext, GroupEvent>(clock, parts.announceTo) } });
  return createActor(
    supervisorMachine.provide({
      actors: { agentParent: agentParentLogic((event) => line.take(event, settle)) },
      actions: {
        ...(inspect ? {} : inStep),
        reportOutcome: (_, { outcome }) => settle(outcome),
        reportRoute: (_, params) => report(() => messenger.routed(params.report)),
        // Unwatched, a message the supervisor gets (one sent while it is in a step, or closing) is routed without an
        // `enqueueActions` (see routeAtOnce); the receivers it wakes are sent their message from the supervisor's step.
        ...(inspect ? {} : { route: line.route }),
      },
    }),
    {
      id: 'supervisor',
      systemId: 'supervisor',
      input: {
        agentLogic,
        groupLogic,
        maxParallel: parts.maxParallel,
        postOffice,
        inspected: inspect !== undefined,
        // Unwatched, agents' parent is an actor that ends them without a step of the supervisor (see agentParentLogic),
        // and agents are told of most lent and returned slots without a step of theirs (see quietSlotNotices).
        agentParent: inspect === undefined,
        ...(inspect ? {} : { slotNotices: quietSlotNotices(clock) }),
        // Watched, the supervisor's `route` wakes receivers through the same line as `routeAtOnce` does unwatched.
        ...(inspect ? { wakeLine: line.wakeLine } : {}),
      },
      clock,
      ...(inspect ? { inspect } : {}),
    },
  );
}

/** The supervisor's actions that send events to agents (which may end at once) from its own step. */
const STEPS_THAT_SEND = ['admit', 'startQueued', 'approve', 'deny', 'wake', 'cancelSubtree', 'stopSubtree', 'cancelAll', 'endGroup', 'startGroup'] as const;

/** How the runtime's parts reach the supervisor (see {@link supervisorLine}). */
type SupervisorLine = ReturnType<typeof supervisorLine>;

/**
 * How the runtime's parts reach the supervisor: `send` an event; `report`, which runs what the supervisor's own step
 * does outside it (an outcome reported, a message routed, events sent to agents); `take`, what agents send their
 * parent; and `route`, the supervisor's `route` action when no inspector watches. Unwatched (`atOnce`), an agent is
 * spawned without a step of the supervisor (`spawnAtOnce`), its end is handled without one (`endAtOnce`), and a message
 * is routed without one (`route`, reporting to `routed`), except from inside the supervisor's step, where the event waits
 * for that step to end as XState would have it, and once the runtime closes (the supervisor counts the ends while it
 * shuts down).
 */
function supervisorLine(supervisor: () => SupervisorActorRef, atOnce: boolean, closed: () => boolean, routed: (report: RouteReport) => void) {
  let reporting = 0;
  /** The supervisor's context while work may skip its step; undefined when an event must go through it. */
  const open = (): SupervisorContext | undefined => {
    if (!atOnce || reporting > 0 || closed()) return undefined;
    const snapshot = supervisor().getSnapshot();
    return snapshot.value === 'open' ? snapshot.context : undefined;
  };
  // Watched, a receiver's turn in line is a step of the supervisor, which sends it its `MESSAGE` (drawn from it).
  const wakeLine = new WakeLine(
    () => supervisor().getSnapshot().context,
    atOnce ? undefined : (_actor, message, id) => supervisor().send({ type: 'MESSAGE.WAKE', id, message }),
  );
  const routeNow = routeAtOnce(routed, wakeLine);
  // The agents launched in one task are made together at its end (see SpawnBatch); everything else the supervisor
  // hears, and its table's answers, come after the spawns asked for before them.
  const spawns = new SpawnBatch((request) => {
    const context = open();
    if (context) spawnAtOnce(context, supervisor(), request);
    else supervisor().send({ type: 'SPAWN', request });
  });
  /** Runs `work` as the supervisor's step would: what it sends the supervisor meanwhile waits for it to end. */
  const report = <T>(work: () => T): T => {
    spawns.flush();
    reporting += 1;
    try {
      return work();
    } finally {
      reporting -= 1;
    }
  };
  /** A message routed (see routeAtOnce), its receivers woken, as the supervisor's step that routes it. */
  const route = (args: RouteArgs): void => report(() => routeNow(args));
  return {
    send(event: SupervisorEvent): void {
      // Put off whether an inspector watches or not, so the events come in the same order either way (made through
      // the supervisor's step when it watches); from inside a step of the supervisor, as that step would.
      if (event.type === 'SPAWN' && !('group' in event.request) && event.request.batched === true && reporting === 0 && !closed()) {
        const { agents } = supervisor().getSnapshot().context;
        agents.pending ??= spawns;
        return spawns.add(event.request);
      }
      spawns.flush();
      if (event.type === 'SPAWN' && !('group' in event.request)) {
        const context = open();
        if (context) return spawnAtOnce(context, supervisor(), event.request);
      }
      // A message costs the supervisor a step only where an inspector would draw it (and while that step runs).
      if (event.type === 'MESSAGE.SEND') {
        const context = open();
        if (context) return route({ context, event });
      }
      supervisor().send(event);
    },
    take(event: EventObject, settle: (outcome: AgentOutcome) => void): void {
      spawns.flush();
      const context = isActorEnd(event) ? open() : undefined;
      if (context) endAtOnce(context, event as SupervisorEvent, settle);
      else supervisor().send(event as SupervisorEvent);
    },
    report,
    route,
    wakeLine,
  };
}

/** What the supervisor's `route` action is called with. */
type RouteArgs = Parameters<ReturnType<typeof routeAtOnce>>[0];

/** The agents in code and in agent files, and the tools they may list (the file tools rooted at the workspace). */
function catalogFor(options: RuntimeOptions, settings: ReturnType<typeof readSettings>): AgentCatalog {
  const projectDir = options.projectAgentDir ?? 'agents';
  const files =
    options.agentDirs?.length || projectDir !== false
      ? new AgentFiles(options.agentDirs ?? [], projectDir === false ? [] : [projectDir])
      : undefined;
  if (options.strictAgentFiles !== undefined && typeof options.strictAgentFiles !== 'boolean') {
    throw new ConfigurationError('strictAgentFiles must be true or false.');
  }
  return new AgentCatalog(options.agents ?? [], {
    ...(options.model ? { model: options.model } : {}),
    ...(files ? { files } : {}),
    ...(options.workspace === undefined ? {} : { workspace: Workspace.open(options.workspace) }),
    ...(options.strictAgentFiles === undefined ? {} : { strictAgentFiles: options.strictAgentFiles }),
    tools: options.tools ?? [],
    maxToolConcurrency: settings.maxToolConcurrency,
    mcpServers: settings.mcpServers,
    ...(options.enableParallelExecution === undefined ? {} : { parallel: options.enableParallelExecution !== false }),
  });
}

/**
 * Shuts a runtime down: no more launches or messages, every live agent cancelled, and once the supervisor has ended
 * (however it ended, a crashed one included) the pool, streams, requests, recording, trace, session writes, the MCP
 * servers (their child processes ended) and the Stately and web inspectors the runtime started (not ones it was given)
 * are closed.
 */
export async function shutdown(parts: RuntimeParts): Promise<void> {
  // Delegations asked for in this task are made first, as they were asked for before the runtime closed: they are
  // cancelled with every live agent rather than refused once it has closed (see SpawnBatch).
  parts.supervisor.getSnapshot().context.agents.spawnPending();
  parts.close();
  parts.supervisor.send({ type: 'SHUTDOWN' });
  const failure = await toPromise(parts.supervisor).then(
    () => undefined,
    (error: unknown) => error ?? new Error('The supervisor failed.'),
  );
  parts.pool.clear();
  parts.messenger.close();
  parts.runtimeEvents.complete();
  if (parts.ownsUi) parts.ui?.end();
  for (const subscription of parts.subscriptions) subscription.unsubscribe();
  parts.launcher.wakeIdleWaiters();
  parts.clock.detach();
  // All are finished even if one fails; the first failure is reported.
  const [recorded, traced, flushed] = await Promise.allSettled([
    parts.recording?.close(),
    parts.trace?.close(),
    parts.sessions.flush(),
    parts.mcp.close(),
    parts.ownsInspector ? parts.inspector?.close() : undefined,
    parts.ownsUi ? parts.ui?.close() : undefined,
  ]);
  if (failure !== undefined) throw failure;
  if (flushed.status === 'rejected') throw flushed.reason;
  if (recorded.status === 'rejected') throw recorded.reason;
  if (traced.status === 'rejected') throw traced.reason;
}

/**
 * Starts the `record` recording, if one is asked for; when its file cannot be opened, ends the trace and the
 * subscriptions already made (nothing has run yet), then throws.
 */
function recordingAfter(
  trace: EventRecording | undefined,
  subscriptions: readonly Subscription[],
  path: string | undefined,
  start: () => EventRecording,
): EventRecording | undefined {
  if (!path) return undefined;
  try {
    return start();
  } catch (error) {
    for (const subscription of subscriptions) subscription.unsubscribe();
    void trace?.close().catch(() => {});
    throw error;
  }
}
