import { emptyFigures, type Figures } from '../events/metrics.js';
import { ending, type ErrorInfo } from '../failure.js';
import type { AgentTable } from '../machines/agentTable.js';
import type { AgentOutcome, Announcement } from '../machines/agentTypes.js';
import { refusal, SHUTTING_DOWN, type SpawnRequest, type SupervisorEvent } from '../machines/supervisorMachine.js';
import { RESTARTABLE_REASONS, RestartWindow, type RestartLimit, type RestartMode } from '../restart.js';
import type { AgentResult } from './AgentResults.js';
import type { RunLimits } from './RunLimits.js';

/** What {@link Restarts} works with. */
export interface RestartsHost {
  /** The runtime's clock: the windows of restart intensities are measured on it. */
  readonly clock: { now(): number };
  readonly limits: RunLimits;
  /** The supervisor's book of agents (parents, siblings, live actors). */
  table(): AgentTable;
  /** Emits a runtime event about an agent (`agent.restarted`, `agent.escalated`). */
  announce(agentId: string, body: Announcement): void;
  /** Sends an event to the supervisor (`SPAWN` of a new attempt, `CANCEL` of a sibling). */
  send(event: SupervisorEvent): void;
  /** Gives the agent a fresh mailbox for its new attempt (the old one's unread mail is reported as dropped). */
  reopen(id: string): void;
  /** True once the runtime is shutting down: no new attempt can start. */
  closed(): boolean;
  /** Ends an agent whose new attempt cannot start, as the supervisor ends one it will not start (its result settled). */
  settle(outcome: AgentOutcome): void;
}

/** What earlier attempts of an agent spent, added to the result of its last one. */
export interface EarlierAttempts {
  turns: number;
  toolCallsExecuted: number;
  own: Figures;
}

/** How one live agent is restarted. */
interface Plan {
  mode: RestartMode;
  /** Its own restarts (in a `one-for-all` group the group's window counts instead). */
  window: RestartWindow;
  /** The launch to repeat: the same input (its `attempt` raised), priority and waiter. */
  request: SpawnRequest;
  attempt: number;
  earlier?: EarlierAttempts;
  /** Set while it is cancelled to be restarted with a sibling (`one-for-all`): that sibling's id. */
  by?: string;
  /** Set once code cancelled or stopped it (or an agent above it): how, to end a new attempt already on its way. */
  halt?: Halt;
}

/** A cancel or stop from code, as the supervisor gets it. */
export type Halt = Extract<SupervisorEvent, { type: 'CANCEL' | 'STOP' }>;

/** Returned by {@link Restarts.ended} when the agent was started again: its result is not settled yet. */
export const RESTARTED = 'restarted';

/**
 * Restarts failed agents (`restart: 'on-failure'`) and escalates what a restart may not mend.
 *
 * An agent whose run fails with `error` or `timeout` is started again under the same id, from the same input it was
 * launched with (its task, and the history it was given: a fresh conversation, not the failed one, whose last turns may
 * be what went wrong). The same id keeps everything that waits on it as it is: the caller's `handle.result`, a parent's
 * `assign_task` (the supervisor makes the parent wait again, lending its slot), `task_output`, its place in the tree,
 * and its figures in the metrics (which add up over attempts, as a resumed agent's do). The caller sees only the last
 * attempt's outcome; the result's figures count every attempt (what the call cost).
 *
 * At most `max` restarts within `withinMs` on the runtime's clock (the agent's, or its `one-for-all` group's, counted
 * together); one more is refused, and so is one a run limit refuses (`maxAgents`: a restart counts as an agent started;
 * a spent budget). Then the failure is the result, and `agent.escalated` says why.
 *
 * In a `one-for-all` group, the restart of a member cancels its siblings still pending or running (agents only; nested
 * groups are left) and starts each again the same way when its cancel lands (`agent.restarted` with `by`).
 */
export class Restarts {
  private readonly plans = new Map<string, Plan>();
  /** The windows of `one-for-all` groups, by group id. */
  private readonly groups = new Map<string, RestartWindow>();

  constructor(private readonly host: RestartsHost) {}

  /**
   * An agent was launched (or resumed): keeps how to start it again when its mode is `on-failure` or it is a member of
   * a `one-for-all` group; forgets an earlier plan of the same id otherwise.
   */
  launched(request: SpawnRequest, mode: RestartMode, limit: RestartLimit): void {
    const { id, parentId } = request.input;
    const inGroup = parentId !== null && this.groups.has(parentId);
    if (mode === 'never' && !inGroup) {
      this.plans.delete(id);
      return;
    }
    const { approval, deny, waiter, ...again } = request;
    // The parent waits again through the supervisor (`restart`): its wait on the failed attempt is carried over.
    this.plans.set(id, { mode, window: new RestartWindow(limit), request: { ...again, restart: true }, attempt: 1 });
  }

  /** A `one-for-all` group was opened. */
  groupOpened(id: string, limit: RestartLimit): void {
    this.groups.set(id, new RestartWindow(limit));
  }

  /**
   * Code cancelled or stopped the agent, or an agent above it (`runtime.cancel`, `runtime.stop`): it is not started
   * again. Its run may have failed a moment before (a cancel made as `agent.failed` or `agent.restarted` is heard, when
   * the failed attempt has no actor left to take it): then that failure is its result, or, when its new attempt is
   * already on its way, that attempt gets the same cancel or stop as it starts.
   */
  halt(halt: Halt): void {
    const plan = this.plans.get(halt.id);
    if (plan) plan.halt = halt;
  }

  /** A group ended. */
  groupEnded(id: string): void {
    this.groups.delete(id);
  }

  /**
   * An agent's run ended: starts it again and returns {@link RESTARTED}, or forgets its plan and returns what its
   * earlier attempts spent (undefined if none), for its result. Nothing is restarted once the runtime is `closed`.
   */
  ended(outcome: AgentOutcome, closed: boolean): EarlierAttempts | typeof RESTARTED | undefined {
    const plan = this.plans.get(outcome.id);
    if (!plan) return undefined;
    if (outcome.status === 'failed' && !closed && plan.halt === undefined) {
      if (plan.by !== undefined) return this.restartWithSibling(plan, outcome);
      if (plan.mode === 'on-failure' && RESTARTABLE_REASONS.has(outcome.reason ?? '')) return this.restartAfterFailure(plan, outcome);
    }
    this.plans.delete(outcome.id);
    return plan.earlier;
  }

  /** A failed attempt: restarted when the intensity and the run's limits allow, else escalated. */
  private restartAfterFailure(plan: Plan, outcome: AgentOutcome): EarlierAttempts | typeof RESTARTED | undefined {
    const { id } = outcome;
    const groupId = plan.request.input.parentId;
    const group = groupId === null ? undefined : this.groups.get(groupId);
    const window = group ?? plan.window;
    const now = this.host.clock.now();
    const restarts = window.within(now);
    const refused = restarts >= window.limit.max ? undefined : this.host.limits.restartRefusal(id);
    if (restarts >= window.limit.max || refused !== undefined) {
      this.escalate(outcome, window, restarts, refused);
      this.plans.delete(id);
      return plan.earlier;
    }
    window.admit(now);
    this.restart(plan, outcome);
    if (group) this.restartSiblings(groupId!, id);
    return RESTARTED;
  }

  /** A member cancelled for a sibling's restart: started again (not counted in the window; run limits still hold). */
  private restartWithSibling(plan: Plan, outcome: AgentOutcome): EarlierAttempts | typeof RESTARTED | undefined {
    const by = plan.by!;
    plan.by = undefined;
    const refused = this.host.limits.restartRefusal(outcome.id);
    if (refused !== undefined) {
      const window = this.groups.get(plan.request.input.parentId ?? '') ?? plan.window;
      this.escalate(outcome, window, window.within(this.host.clock.now()), refused);
      this.plans.delete(outcome.id);
      return plan.earlier;
    }
    this.restart(plan, outcome, by);
    return RESTARTED;
  }

  /** Starts a new attempt under the same id: `agent.restarted`, a fresh mailbox, the same input, `SPAWN`. */
  private restart(plan: Plan, outcome: AgentOutcome, by?: string): void {
    const { id } = outcome;
    this.host.limits.restarted(id);
    plan.attempt += 1;
    plan.earlier = addAttempt(plan.earlier, outcome);
    this.host.announce(id, {
      type: 'agent.restarted',
      name: outcome.agent,
      attempt: plan.attempt,
      reason: outcome.reason ?? 'error',
      error: errorOf(outcome),
      ...(by === undefined ? {} : { by }),
    });
    // Code shut the runtime down as it heard of the restart (an `events$` subscriber of `agent.restarted`): the
    // supervisor may have closed already and would drop the new attempt's SPAWN, leaving the agent's result unsettled
    // and its session `running`. The attempt is refused as one launched during a shutdown is.
    if (this.host.closed()) {
      this.host.settle(refusal({ id, name: outcome.agent }, SHUTTING_DOWN));
      return;
    }
    this.host.reopen(id);
    const input = { ...plan.request.input, attempt: plan.attempt };
    this.host.send({ type: 'SPAWN', request: { ...plan.request, input } });
    // Code cancelled it as it heard of the restart, before this attempt was made: the cancel is for this attempt.
    if (plan.halt) this.host.send(plan.halt);
  }

  /** Cancels the group's other members still pending or running, each to be restarted when its cancel lands. */
  private restartSiblings(groupId: string, by: string): void {
    const table = this.host.table();
    for (const sibling of table.record(groupId)?.children ?? []) {
      const plan = this.plans.get(sibling);
      if (sibling === by || !plan || plan.by !== undefined || !table.actor(sibling)) continue;
      plan.by = by;
      this.host.send({ type: 'CANCEL', id: sibling, error: `Restarted with ${by} (one-for-all).` });
    }
  }

  /** `agent.escalated`: the failure goes to the caller as it is. */
  private escalate(outcome: AgentOutcome, window: RestartWindow, restarts: number, refused: string | undefined): void {
    this.host.announce(outcome.id, {
      type: 'agent.escalated',
      name: outcome.agent,
      restarts,
      max: window.limit.max,
      withinMs: window.limit.withinMs,
      reason: outcome.reason ?? 'error',
      error: errorOf(outcome),
      ...(refused === undefined ? {} : { refused }),
    });
  }
}

/** Adds what the earlier attempts spent to the last attempt's result (its own figures; the subtree counts them already). */
export function withEarlierAttempts(result: AgentResult, earlier: EarlierAttempts | undefined): AgentResult {
  if (!earlier) return result;
  result.turns += earlier.turns;
  result.toolCallsExecuted += earlier.toolCallsExecuted;
  result.metrics.own = sum(result.metrics.own, earlier.own);
  return result;
}

function addAttempt(earlier: EarlierAttempts | undefined, outcome: AgentOutcome): EarlierAttempts {
  return {
    turns: (earlier?.turns ?? 0) + outcome.turns,
    toolCallsExecuted: (earlier?.toolCallsExecuted ?? 0) + outcome.toolCallsExecuted,
    own: sum(earlier?.own ?? emptyFigures(), outcome.own),
  };
}

function sum(a: Figures, b: Figures): Figures {
  const total = emptyFigures();
  for (const key of Object.keys(total) as (keyof Figures)[]) total[key] = a[key] + b[key];
  total.costUsd = Math.round(total.costUsd * 1e12) / 1e12;
  return total;
}

function errorOf(outcome: AgentOutcome): ErrorInfo {
  return outcome.error ?? ending('unexpected', 'The agent failed without saying why.', 'system');
}
