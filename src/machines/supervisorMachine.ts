import { createActor, enqueueActions, setup, type ActorRefFrom, type AnyActorRef } from 'xstate';
import type { AgentActorRef, AgentInput, AgentOutcome } from './agentMachine.js';
import { AgentTable, type AgentRecord } from './agentTable.js';
import { SpawnLogic } from './SpawnLogic.js';
import { turnBegun } from './agentClock.js';
import { messageEventFor, routeMessage, wakes } from './routing.js';
import { agentParentLogic } from './agentParent.js';
import { abandonWait, beginWait, endWait, giveWakeSlot, park } from './slots.js';
import type { AgentRun } from './agentQueue.js';
import type { SpawnRequest, SupervisorContext, SupervisorEvent, SupervisorInput } from './supervisorTypes.js';
import { groupMachine, type GroupActorRef } from './groupMachine.js';
import { ending, errorInfo, type ErrorInfo } from '../failure.js';
import { emptyFigures } from '../events/metrics.js';
import type { RouteReport } from '../messaging/PostOffice.js';

export type { GroupSpawnRequest, SpawnRequest, SupervisorContext, SupervisorEvent, SupervisorInput } from './supervisorTypes.js';

const DONE = 'xstate.done.actor.';
const ERROR = 'xstate.error.actor.';

/** What the supervisor does when an agent's actor ends: release it, end the waits on it, report its outcome. */
const whenAgentEnds = [
  { type: 'release', params: ({ context, event }: { context: SupervisorContext; event: SupervisorEvent }) => ({ outcome: outcomeOf(context, event) }) },
  { type: 'reportOutcome', params: ({ context, event }: { context: SupervisorContext; event: SupervisorEvent }) => ({ outcome: outcomeOf(context, event) }) },
] as const;

/**
 * The supervisor: spawns every agent as an actor of its actor system (id `agent:<name>`, systemId the agent's own id
 * `agent:<name>:<key>`, parent: the supervisor), keeps a record of each with its parent and depth, starts pending
 * agents in priority then FIFO order while fewer than `maxParallel` hold a slot, cancels whole subtrees, and releases
 * each agent's actor when it ends (the record stays).
 *
 * Delegation: an agent spawned with an `approval` hold waits for `APPROVE` or `DENY`; one spawned with `deny`
 * fails at once. An agent that waits for its sub-agents (`waiter`, `WAIT`) lends its slot to them (`YIELD`), so
 * nested delegation never deadlocks under `maxParallel`; when the last of them ends it gets a slot back
 * (`RESUME`) before any pending agent starts.
 *
 * `open` accepts work; `SHUTDOWN` cancels every live agent and waits in `closing` until the last one has ended,
 * then the supervisor is `closed` (final) and leaves no actor or timer behind.
 *
 * Groups: a `SPAWN` of a {@link GroupSpawnRequest} makes a group actor (`groupLogic`), records it like an agent (its
 * children name it as parent; cancelling or stopping a subtree reaches through it) and starts it at once without a
 * slot. `GROUP.END` / `GROUP.FAIL` cancel what is still live under the group, then end it; its done event is handled
 * like an agent's.
 *
 * The runtime provides `reportOutcome` (called with each ended one's outcome) and `reportRoute`. Agents and groups
 * announce their events through the actions the runtime gives their logic, so the supervisor observes no actor.
 */
export const supervisorMachine = setup({
  types: {
    context: {} as SupervisorContext,
    input: {} as SupervisorInput,
    events: {} as SupervisorEvent,
  },
  // The agents' parent with `input.agentParent`; this one passes every event on to the supervisor (the runtime provides
  // one that ends agents without a step of the supervisor).
  actors: { agentParent: agentParentLogic((event, system) => system.get('supervisor')?.send(event)) },
  actions: {
    /** Provided by the runtime: deliver an ended agent's outcome. */
    reportOutcome: (_, _params: { outcome: AgentOutcome }) => {},
    /** Provided by the runtime: what routing a message did (for events, receipts and replies to code). */
    reportRoute: (_, _params: { report: RouteReport }) => {},
    releaseSlot: ({ context }, { id }: { id: string }) => park(context.agents, id),
    requestSlot: ({ context }, { id }: { id: string }) => {
      const record = context.agents.record(id);
      if (record) record.parked = false;
      if (record?.state === 'running' && !record.holdsSlot) context.agents.resuming.push({ id, run: record.run });
    },
    wake: ({ context }, { id }: { id: string }) => {
      context.agents.actor(id)?.send(giveWakeSlot(context, id) ? { type: 'WAKE', slot: true } : { type: 'WAKE' });
    },
    stopSubtree: ({ context }, { id, error }: { id: string; error?: string }) => {
      for (const agentId of context.agents.subtree(id).reverse()) {
        context.agents.member(agentId)?.send({ type: 'STOP', ...(error === undefined ? {} : { error }) });
      }
    },
    startGroup: ({ context }, { id }: { id: string }) => {
      const actor = context.agents.group(id);
      actor?.start();
      actor?.send({ type: 'START' });
    },
    /** Ends a live group: what still runs under it is cancelled first (children first), then it gets `END` or `FAIL`. */
    endGroup: ({ context }, { end }: { end: Extract<SupervisorEvent, { type: 'GROUP.END' | 'GROUP.FAIL' }> }) => {
      const { agents } = context;
      const group = agents.group(end.id);
      if (!group) return;
      const error = `Cancelled (${end.id} ended).`;
      for (const id of agents.subtree(end.id).slice(1).reverse()) agents.member(id)?.send({ type: 'CANCEL', error });
      if (end.type === 'GROUP.END') group.send({ type: 'END', output: end.output });
      else group.send({ type: 'FAIL', reason: end.reason, error: end.error });
    },
    admit: ({ context }, { request, admitted }: { request: SpawnRequest; admitted: Admitted }) => admit(context, request, admitted),
    approve: ({ context }, { id }: { id: string }) => {
      const record = context.agents.record(id);
      if (!record?.held) return;
      record.held = false;
      context.agents.actor(id)?.send({ type: 'APPROVE' });
      context.agents.queue.push(id, record.run);
    },
    deny: ({ context }, { id, error, requestId }: { id: string; error: string; requestId?: string }) => {
      context.agents.actor(id)?.send({ type: 'DENY', error, ...(requestId === undefined ? {} : { requestId }) });
    },
    wait: ({ context }, { id, on }: { id: string; on: string }) => beginWait(context.agents, id, on),
    unwait: ({ context }, { id, on }: { id: string; on: string }) => abandonWait(context.agents, id, on),
    startQueued: ({ context }) => startQueued(context),
    release: ({ context }, { outcome }: { outcome: AgentOutcome }) => release(context, outcome),
    /**
     * Routes one message (see `routeMessage`): a copy into each receiver's inbox, and a `MESSAGE` event from the
     * supervisor to each receiver it wakes (to every receiver under an inspector, which sees the message pass from actor
     * to actor). With the runtime's wake line (`context.wakeLine`) the receivers it wakes are woken through it, one at a
     * time (`MESSAGE.WAKE`, `wakeReceiver`), as without an inspector. The runtime hears what happened (`reportRoute`);
     * without an inspector it provides `routeAtOnce`.
     */
    route: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'MESSAGE.SEND') return;
      const line = context.wakeLine;
      let added = false;
      const report = routeMessage(context, event.message, (actor, copy, id) => {
        // A receiver the message wakes waits its turn on the runtime's line, as it would without an inspector.
        if (line && wakes(context, id, actor)) {
          line.add(actor, copy, id);
          added = true;
          return;
        }
        const message = messageEventFor(context, id, actor, copy);
        if (message) enqueue.sendTo(actor, message);
      });
      enqueue({ type: 'reportRoute', params: { report } } as never);
      if (added) enqueue(() => line!.start());
    }),
    /**
     * Wakes a receiver the runtime's wake line reached (see `WakeLine`): its `MESSAGE`, if it still wakes or an
     * inspector watches, with a slot if one is free; nothing for one that ended meanwhile.
     */
    wakeReceiver: enqueueActions(({ context, event, enqueue }) => {
      if (event.type !== 'MESSAGE.WAKE') return;
      const actor = context.agents.actor(event.id);
      if (actor?.getSnapshot().status !== 'active') return;
      const message = messageEventFor(context, event.id, actor, event.message);
      if (message) enqueue.sendTo(actor, message);
    }),
    cancelSubtree: ({ context }, { id, error }: { id: string; error?: string }) => {
      // Children first, so no parent ends while one of its sub-agents could still report to it.
      for (const agentId of context.agents.subtree(id).reverse()) {
        context.agents.member(agentId)?.send({ type: 'CANCEL', error: error ?? `Cancelled (${id} was cancelled).` });
      }
    },
    cancelAll: ({ context }) => {
      const { agents } = context;
      // Deepest first, as a cancelled subtree ends: no parent ends while one of its sub-agents could still report to it.
      for (const id of agents.liveIds().sort((a, b) => agents.record(b)!.depth - agents.record(a)!.depth)) {
        const actor = agents.actor(id);
        // A resident lives until it is stopped, shutdown included: it ends with its last answer, as a stop ends it.
        const resident = actor?.getSnapshot().context.input.resident === true;
        agents.member(id)?.send({ type: resident ? 'STOP' : 'CANCEL', error: 'The runtime shut down.' });
      }
    },
  },
  guards: {
    noLiveAgents: ({ context }) => context.agents.active === 0,
    isLastLiveAgent: ({ context }) => context.agents.active <= 1,
  },
}).createMachine({
  id: 'supervisor',
  context: ({ input, spawn }) => {
    const context: SupervisorContext = {
      logic: new SpawnLogic(input.agentLogic, input.groupLogic ?? groupMachine, (initial) => {
        const { postOffice } = input;
        // The initial context is the agent's own, just made: the first turn is set on it rather than on a copy.
        return Object.assign(initial, turnBegun(initial, postOffice.now(), postOffice));
      }),
      maxParallel: input.maxParallel,
      agents: new AgentTable(input.slotNotices),
      postOffice: input.postOffice,
      inspected: input.inspected === true,
      ...(input.wakeLine ? { wakeLine: input.wakeLine } : {}),
    };
    if (input.agentParent === true) context.agentParent = spawn('agentParent', { id: 'agents' });
    return context;
  },
  initial: 'open',
  states: {
    open: {
      on: {
        SPAWN: {
          // The agent's actor is made while the transition is resolved, not inside a custom action: making an
          // actor evaluates its machine's initial context, which XState expects outside custom actions.
          actions: enqueueActions(({ context, event, self, enqueue }) => {
            if ('group' in event.request) {
              const { input } = event.request;
              const { id, name, parentId, depth } = input;
              const group: GroupActorRef = createActor(context.logic.group, { id: `group:${name}`, systemId: id, parent: self, input });
              context.agents.addGroup({ id, name, parentId, depth, state: 'running', run: 1, group: true }, group);
              enqueue({ type: 'startGroup', params: { id } });
              return;
            }
            const admitted = makeAgent(context, self, event.request);
            enqueue({ type: 'admit', params: { request: event.request, admitted } });
            enqueue('startQueued');
          }),
        },
        APPROVE: { actions: [{ type: 'approve', params: ({ event }) => event }, 'startQueued'] },
        DENY: { actions: { type: 'deny', params: ({ event }) => event } },
        WAIT: { actions: [{ type: 'wait', params: ({ event }) => event }, 'startQueued'] },
        UNWAIT: { actions: [{ type: 'unwait', params: ({ event }) => event }, 'startQueued'] },
        CANCEL: { actions: { type: 'cancelSubtree', params: ({ event }) => ({ id: event.id, error: event.error }) } },
        STOP: { actions: { type: 'stopSubtree', params: ({ event }) => ({ id: event.id, error: event.error }) } },
        'MESSAGE.SEND': { actions: 'route' },
        'MESSAGE.WAKE': { actions: 'wakeReceiver' },
        'SLOT.RELEASE': { actions: [{ type: 'releaseSlot', params: ({ event }) => event }, 'startQueued'] },
        'SLOT.REQUEST': { actions: [{ type: 'requestSlot', params: ({ event }) => event }, 'startQueued'] },
        WAKE: { actions: { type: 'wake', params: ({ event }) => event } },
        'GROUP.END': { actions: { type: 'endGroup', params: ({ event }) => ({ end: event }) } },
        'GROUP.FAIL': { actions: { type: 'endGroup', params: ({ event }) => ({ end: event }) } },
        'xstate.done.actor.*': { actions: [...whenAgentEnds, 'startQueued'] },
        'xstate.error.actor.*': { actions: [...whenAgentEnds, 'startQueued'] },
        SHUTDOWN: [{ guard: 'noLiveAgents', target: 'closed' }, { target: 'closing' }],
      },
    },
    closing: {
      entry: 'cancelAll',
      on: {
        'MESSAGE.SEND': { actions: 'route' },
        'MESSAGE.WAKE': { actions: 'wakeReceiver' },
        SPAWN: {
          actions: {
            type: 'reportOutcome',
            params: ({ event }) => ({ outcome: refusal(event.request.input, SHUTTING_DOWN) }),
          },
        },
        'xstate.done.actor.*': [
          { guard: 'isLastLiveAgent', target: 'closed', actions: whenAgentEnds },
          { actions: whenAgentEnds },
        ],
        'xstate.error.actor.*': [
          { guard: 'isLastLiveAgent', target: 'closed', actions: whenAgentEnds },
          { actions: whenAgentEnds },
        ],
      },
    },
    closed: { type: 'final' },
  },
});

/** What making an agent tells its admission: who waited for the failed attempt it restarts, and whether it began running. */
export interface Admitted {
  /** The runs that waited for the failed attempt this one restarts: they wait for this one. */
  readonly again: readonly AgentRun[];
  /** True when the agent took a free slot as it was made and began in `running`. */
  readonly running: boolean;
}

/**
 * Makes an agent's actor (its id its kind, `agent:<name>`; its systemId its own id; the supervisor its parent) and
 * records it. Unwatched, an agent that a free slot awaits (no queue, nobody waiting for a slot back, no approval or
 * denial) takes the slot now and is made from the logic that begins in `running` (`SpawnLogic.running`): its first step
 * enters `running.thinking` at once, without `pending.queued` and a `START` after it. Under an inspector every agent
 * begins `pending` and gets its `START`, so the inspector draws the whole lifecycle.
 */
function makeAgent(context: SupervisorContext, self: AnyActorRef, request: SpawnRequest): Admitted {
  const { input } = request;
  const { agents } = context;
  // A restart: who waited for the failed attempt waits for this one (read before the record is reset).
  const again = request.restart ? agents.takeEndedWaiters(input.id) : [];
  const running =
    !context.inspected &&
    request.deny === undefined &&
    request.approval === undefined &&
    agents.running < context.maxParallel &&
    agents.resuming.length === 0 &&
    agents.queue.size === 0;
  // The actor's id is its kind (`agent:<name>`), its systemId its own id: XState remembers the transitions of every event
  // type it has seen, and each agent's done event is typed by its actor's id, so an id of its own would leave an entry
  // behind in the supervisor for every agent ever run.
  const parent = context.agentParent ?? self;
  const logic = running ? context.logic.running : context.logic.agent;
  const actor: AgentActorRef = createActor(logic, { id: `agent:${input.name}`, systemId: input.id, parent, input });
  const { id, name, parentId, toolCallId, depth } = input;
  const state = running ? 'running' : 'pending';
  const record: AgentRecord =
    toolCallId === null ? { id, name, parentId, depth, state, run: 1 } : { id, name, parentId, toolCallId, depth, state, run: 1 };
  const kept = agents.add(record, actor);
  if (running) agents.takeSlot(kept);
  return { again, running };
}

/**
 * Spawns an agent without a step of the supervisor (what the runtime does when no inspector watches the actor system):
 * the same as a `SPAWN` event's transition, made, admitted and started at once if a slot is free.
 */
export function spawnAtOnce(context: SupervisorContext, self: AnyActorRef, request: SpawnRequest): void {
  admit(context, request, makeAgent(context, self, request));
  startQueued(context);
}

/**
 * Ends an agent on the supervisor's table without a step of the supervisor (`event` its done or error event, taken by
 * the runtime's agent parent while the supervisor is open): the same as the supervisor's `xstate.done.actor.*`
 * transition (release it, report its outcome with `report`, start who waits for a slot).
 */
export function endAtOnce(context: SupervisorContext, event: SupervisorEvent, report: (outcome: AgentOutcome) => void): void {
  const outcome = outcomeOf(context, event);
  release(context, outcome);
  report(outcome);
  startQueued(context);
}

/** True for an actor's done or error event, as its parent gets it. */
export function isActorEnd(event: { type: string }): boolean {
  return event.type.startsWith(DONE) || event.type.startsWith(ERROR);
}

/** Releases an ended agent's actor and slot, and ends the waits on it. */
function release(context: SupervisorContext, outcome: AgentOutcome): void {
  const { agents } = context;
  for (const waiter of agents.release(outcome.id, outcome.status)) endWait(agents, waiter);
}

/**
 * Starts an agent's actor, then queues it (or holds it for approval, or denies it; one that began running holds its
 * slot already), and begins its caller's wait.
 */
function admit(context: SupervisorContext, request: SpawnRequest, { again, running }: Admitted): void {
  const { agents } = context;
  const { id } = request.input;
  const actor = agents.actor(id);
  actor?.start();
  if (request.deny !== undefined) {
    actor?.send({ type: 'DENY', error: request.deny });
  } else if (request.approval) {
    const record = agents.record(id);
    if (record) record.held = true;
    actor?.send({ type: 'HOLD', ...request.approval });
  } else if (!running) {
    agents.queue.push(id, agents.record(id)?.run ?? 1, request.priority);
  }
  // A denied agent ends at once: its caller need not lend its slot for it.
  if (request.waiter !== undefined && request.deny === undefined) beginWait(agents, request.waiter, id);
  for (const waiter of again) if (agents.record(waiter.id)?.run === waiter.run) beginWait(agents, waiter.id, id);
}

/** Gives free slots to agents that want theirs back first, then to queued agents in order. */
function startQueued(context: SupervisorContext): void {
  const { agents } = context;
  while (agents.running < context.maxParallel) {
    const resumer = agents.resuming.shift();
    if (resumer !== undefined) {
      const record = agents.record(resumer.id);
      // Skip agents that ended, were resumed anew, began waiting again, or now wait for messages (a parked agent
      // gets a slot when it wakes, not before).
      if (record?.state !== 'running' || record.run !== resumer.run || record.holdsSlot || record.parked || (record.waits ?? 0) > 0) {
        continue;
      }
      agents.returnSlot(record);
      continue;
    }
    const next = agents.queue.take();
    if (next === undefined) break;
    const { id } = next;
    const record = agents.record(id);
    const actor = agents.actor(id);
    // Skip entries of runs that ended while they waited (cancelled; their done event may still be in the
    // mailbox) or that belong to an earlier run of an agent resumed since, and agents held for approval.
    if (record?.state !== 'pending' || record.run !== next.run || record.held || !actor || actor.getSnapshot().status !== 'active') {
      continue;
    }
    record.state = 'running';
    agents.takeSlot(record);
    actor.send({ type: 'START' });
  }
}

/** The outcome carried by an agent's done event, or a failure made from its error event. */
function outcomeOf(context: SupervisorContext, event: SupervisorEvent): AgentOutcome {
  if (event.type.startsWith(DONE) && 'output' in event && typeof event.output === 'object') return event.output;
  // An actor's id is its kind (`agent:<name>`): the one that crashed is the live one of that kind in error.
  const kind = event.type.startsWith(ERROR) ? event.type.slice(ERROR.length) : 'unknown';
  const id = context.agents.crashed(kind) ?? kind;
  const error = errorInfo('error' in event ? event.error : event, 'system');
  return failedOutcome(id, kind.split(':')[1] ?? 'unknown', 'error', { ...error, message: `The agent's actor crashed: ${error.message}` });
}

/** Why an agent launched (or restarted) while the runtime shuts down never starts. */
export const SHUTTING_DOWN = 'The runtime is shutting down.';

/** The outcome of an agent (or group) the supervisor would not start: failed, `cancelled`, with `error` as its message. */
export function refusal(input: Pick<AgentInput, 'id' | 'name'>, error: string): AgentOutcome {
  return failedOutcome(input.id, input.name, 'cancelled', ending('cancelled', error, 'user'));
}

function failedOutcome(id: string, agent: string, reason: AgentOutcome['reason'], error: ErrorInfo): AgentOutcome {
  return {
    id,
    agent,
    status: 'failed',
    reason,
    error,
    turns: 0,
    toolCallsExecuted: 0,
    own: emptyFigures(),
    messages: [],
  };
}

/** The supervisor actor. */
export type SupervisorActorRef = ActorRefFrom<typeof supervisorMachine>;
