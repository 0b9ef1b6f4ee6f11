import { assign, type ActionArgs } from 'xstate';
import { errorInfo, type ErrorInfo } from '../failure.js';
import type { BudgetSpentError } from '../errors.js';
import type { ModelTurn } from '../actors/callModel.js';
import {
  cancelled,
  denied,
  emptyAnswer,
  failure,
  idle,
  missingRequired,
  noAnswer,
  outOfTurns,
  requiredReminder,
  stopped,
  withAnswer,
  withBatch,
  withTurn,
  withoutPendingToolCalls,
  type BatchEnd,
} from './agentContext.js';
import type { AgentContext, AgentEvent, ApprovalHold } from './agentTypes.js';

/**
 * One change of an agent's context: what it sets, read from the context, the action's params and the event. It never
 * changes what it is given (new arrays and records, never a push); a {@link ChangeMaker} decides how it is applied.
 */
export type ContextChange<P> = (context: AgentContext, params: P, event: AgentEvent) => Partial<AgentContext>;

/** The action that applies a {@link ContextChange}. */
export type ChangeAction<P> = (args: ActionArgs<AgentContext, AgentEvent, AgentEvent>, params: P) => void;

/** How a {@link ContextChange} becomes an action: {@link assigned} or {@link inPlace}. */
export type ChangeMaker = <P = undefined>(change: ContextChange<P>) => ChangeAction<P>;

/**
 * XState's `assign`: each change makes a new context and a new snapshot (the state value, its nodes and tags made
 * again), so every snapshot an observer was given stays as it was. The agent machine's own setup uses it, and so does
 * the runtime when an inspector watches (the inspector keeps the snapshots it is sent).
 */
export const assigned: ChangeMaker = <P>(change: ContextChange<P>): ChangeAction<P> =>
  assign<AgentContext, AgentEvent, P, AgentEvent, never>(({ context, event }, params) => change(context, params, event));

/**
 * The change set on the agent's one context object, which lives as long as the agent: no copy of the context, no
 * snapshot made for it (each `assign` cost about 2.5 KB). What the runtime uses when no inspector watches: nothing
 * then keeps an agent's earlier snapshots (the runtime reads only the current one), so none can be seen to change.
 * What a change sets is new (arrays and records are never changed in place), so what was read from a context before,
 * a conversation or figures, stays as it was. Like any custom action, it runs when XState runs the actor's actions: in
 * the entry of the machine's initial states that is after the initial snapshot is made (the agent's initial context
 * is made whole by `initialContext` and `SpawnLogic` instead, and no initial entry changes it).
 */
export const inPlace: ChangeMaker = <P>(change: ContextChange<P>): ChangeAction<P> =>
  ({ context, event }, params) => {
    Object.assign(context, change(context, params, event));
  };

/** A change of the context that also gives the slot up (set on it, not spread into a copy: every parking turn makes one). */
function slotGivenUp(change: Partial<AgentContext>): Partial<AgentContext> {
  change.holdsSlot = false;
  return change;
}

/** After a batch that called `finish` too early: the batch recorded, then the reminder of the required tools. */
function withBatchAndReminder(context: AgentContext, done: BatchEnd): Pick<AgentContext, 'messages' | 'own' | 'required'> {
  const next = withBatch(context, done);
  return { ...next, messages: next.messages.concat(requiredReminder(next.required, true)) };
}

/**
 * The agent machine's actions that change its context and read neither the clock nor the budgets (those are
 * `clockedAgentActions` and `budgetActions`), made with `make`.
 */
export function agentChanges(make: ChangeMaker) {
  return {
    takeSlot: make(() => ({ holdsSlot: true })),
    yieldSlot: make(() => ({ holdsSlot: false })),
    /** Keeps the approval request a `HOLD` brings. */
    hold: make((context, _: undefined, event): Partial<AgentContext> => {
      const approval: ApprovalHold | null =
        event.type === 'HOLD' ? { requestId: event.requestId, risk: event.risk, reason: event.reason } : context.approval;
      return { approval };
    }),
    recordTurn: make((context, turn: ModelTurn) => withTurn(context, turn)),
    dropToolCalls: make((context) => ({ messages: withoutPendingToolCalls(context.messages) })),
    appendToolMessages: make((context, done: BatchEnd) => withBatch(context, done)),
    /** A final answer given too early: recorded, then the agent is told which required tools it has not called. */
    remindRequired: make((context, turn: ModelTurn) => {
      const { messages, own } = withTurn(context, turn);
      return { messages: messages.concat(requiredReminder(context.required, false)), own };
    }),
    /** `finish` called too early: the batch recorded, then the same reminder. */
    remindAfterFinish: make((context, done: BatchEnd) => withBatchAndReminder(context, done)),
    // Parking in `running.waiting` gives the slot up in the change of the step that parks: with `assign`, each change
    // copies the context and the snapshot, so a `yieldSlot` of its own on entering `waiting` would cost a copy every turn.
    parkAfterBatch: make((context, done: BatchEnd) => slotGivenUp(withBatch(context, done))),
    /** A resident's answer: recorded, and kept as its result so far. */
    recordResidentAnswer: make((context, turn: ModelTurn) => withAnswer(context, turn)),
    /** A resident's answer as it parks to wait for the next message (its slot given up). */
    parkWithAnswer: make((context, turn: ModelTurn) => slotGivenUp(withAnswer(context, turn))),
    recordFinish: make((context, done: { finish?: { answer?: string } }) => ({ output: done.finish?.answer ?? context.output })),
    personWaiting: make((context) => ({ waitingForPeople: context.waitingForPeople + 1 })),
    personAnswered: make((context) => ({ waitingForPeople: Math.max(0, context.waitingForPeople - 1) })),
    // Failures, each named for what ended the agent (the failure itself is made in agentContext.ts).
    failCancelled: make((context, _: undefined, event) => ({ failure: cancelled(context, event) })),
    failStopped: make((context, _: undefined, event) => ({ failure: stopped(context, event) })),
    failDenied: make((context, _: undefined, event) => ({ failure: denied(context, event) })),
    failOutOfTurns: make((context) => ({ failure: outOfTurns(context) })),
    failRequiredTools: make((context) => ({ failure: missingRequired(context) })),
    failBudgetSpent: make((_, error: BudgetSpentError) => ({ failure: failure('budget', 'budget_exceeded', 'user', error.message) })),
    /** A turn refused before the model was called (a spent budget) was never taken: it does not count as one. */
    dropRefusedTurn: make((context) => ({ turns: Math.max(0, context.turns - 1) })),
    failEmptyAnswer: make(() => ({ failure: emptyAnswer() })),
    failNoAnswer: make(() => ({ failure: noAnswer() })),
    failModelIdle: make((context) => ({ failure: idle(context, 'model') })),
    failToolsIdle: make((context) => ({ failure: idle(context, 'tool') })),
    /** The model call failed: the thrown error keeps its identity (code, side, status). */
    failModel: make((_, error: unknown) => ({ failure: { reason: 'error' as const, error: errorInfo(error, 'model') } })),
    /** The tool batch itself crashed (not one call: those become error results). */
    failTools: make((_, error: ErrorInfo) => ({ failure: { reason: 'error' as const, error } })),
  };
}
