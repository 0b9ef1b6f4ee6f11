import { emit } from 'xstate';
import type { ModelTurn } from '../actors/callModel.js';
import { startIdleTimer, stopIdleTimer } from '../actors/idleTimer.js';
import type { TroupeClock } from '../clock.js';
import type { TroupeEvent } from '../events/events.js';
import * as announcements from './agentAnnouncements.js';
import { assigned, type ChangeMaker } from './agentChanges.js';
import type { PostOffice } from '../messaging/PostOffice.js';
import { settled, stamp, stampEvent, withBatch, withMail, withTurn, type BatchEnd } from './agentContext.js';
import type { ActorHeader, AgentContext, AgentEvent, Announcement } from './agentTypes.js';

/** Where an agent's mail waits: the runtime's post office (an agent machine without one gets no mail). */
export type Mailbox = Pick<PostOffice, 'hasMail' | 'take'>;

/**
 * The agent machine's actions that read the time or set a timer, made for one clock (and the post office its turns
 * read their mail from). The machine's setup holds them made for the real clock; the runtime provides them made for
 * its own clock (`agentMachine.provide({ actions })`), so no action asks XState's actor system for its clock (a
 * private field). Its events are emitted by the actor, or handed to `announceTo` when given (see `announce` below); its
 * changes of the context are made with `make` (XState's `assign` unless the runtime says otherwise: see `inPlace`).
 */
export function clockedAgentActions(
  clock: TroupeClock,
  mailbox?: Mailbox,
  announceTo?: (event: TroupeEvent) => void,
  make: ChangeMaker = assigned,
) {
  const now = () => clock.now();
  return {
    /**
     * A turn begins, in one change (with `assign`, each change copies the context and the snapshot): the turn counted, the slot held,
     * the running time started on the first turn, and any mail that came read into the conversation.
     */
    beginTurn: make((context) => turnBegun(context, now(), mailbox)),
    /**
     * A batch's end and the next turn's beginning, in one change (an agent that holds its slot thinks again at once):
     * the batch recorded (`withBatch`), then the turn begun on the conversation with its tool messages.
     */
    endBatchAndBeginTurn: make((context, done: BatchEnd) => {
      const batch = withBatch(context, done);
      // `Object.assign`, not a spread followed by new keys: on Node 20 that costs a new hidden class (see Performance).
      return Object.assign(batch, turnBegun(context, now(), mailbox, batch.messages, batch.own));
    }),
    startIdleTimer: ({ context, self }: { context: AgentContext; self: Parameters<typeof startIdleTimer>[0] }) =>
      startIdleTimer(self, clock, context.input.idleTimeoutMs),
    stopIdleTimer: ({ self }: { self: Parameters<typeof stopIdleTimer>[0] }) => stopIdleTimer(self, clock),
    /** The final turn, in one change: its reply recorded, the answer kept and the agent's running time settled. */
    recordAnswer: make((context, turn: ModelTurn) => {
      const { messages, own } = withTurn(context, turn);
      return { messages, own: settled(own, context.startedAt, now()), output: turn.content };
    }),
    settle: make((context) => ({ own: settled(context.own, context.startedAt, now()) })),
    announceSpawned: announce(announcements.spawned),
    announceStarted: announce(announcements.started),
    announceApprovalRequested: announce(announcements.approvalRequested),
    announceApprovalGranted: announce(announcements.approvalGranted),
    announceApprovalDenied: announce(announcements.approvalDenied),
    announceModelRequest: announce(announcements.modelRequest),
    announceWaiting: announce(announcements.waiting),
    announceCompleted: announce(announcements.completed),
    announceFailed: announce(announcements.failed),
    /** `model.response`, for the turn the `callModel` actor returned (its done event's output). */
    announceReply: announceTo
      ? ({ context }: { context: AgentContext }, turn: ModelTurn) => announceTo(stamp(context, now(), announcements.modelResponse(context, turn)))
      : emit<AgentContext, AgentEvent, ModelTurn, AgentEvent, TroupeEvent>(({ context }, turn) =>
          stamp(context, now(), announcements.modelResponse(context, turn)),
        ),
  };

  /**
   * An action that announces the event `body` makes of the context (and the event that caused it): emitted by the
   * actor (`actor.on('*', …)` hears it), or, given `announceTo`, handed straight to it (what the runtime does: its
   * pipeline then needs no stream per agent, and XState no emit action per event).
   */
  function announce(body: (context: AgentContext, event: AgentEvent) => Announcement) {
    if (announceTo) return ({ context, event }: { context: AgentContext; event: AgentEvent }) => announceTo(stamp(context, now(), body(context, event)));
    return emit<AgentContext, AgentEvent, undefined, AgentEvent, TroupeEvent>(({ context, event }) => stamp(context, now(), body(context, event)));
  }
}

/**
 * What beginning a turn changes in an agent's context at `now`: the turn counted, the slot held, the running time
 * started on the first turn, and any mail that came read into the conversation (`messages`, taken from `mailbox`).
 * The `beginTurn` action assigns it; an agent begun in `running` has it in its initial context (see `SpawnLogic`).
 */
export function turnBegun(context: AgentContext, now: number, mailbox?: Mailbox, messages = context.messages, own = context.own): Partial<AgentContext> {
  const begun: Partial<AgentContext> = { turns: context.turns + 1, holdsSlot: true, startedAt: context.startedAt ?? now };
  if (!mailbox?.hasMail(context.input.id)) return begun;
  const { answers, mail } = mailbox.take(context.input.id);
  // A wait that ended in error (no reply in time, the replier ended) is a failed call, as its `tool.wait_ended` says.
  let failed = 0;
  for (let index = 0; index < answers.length; index++) if (answers[index]!.isError) failed += 1;
  // Set on `begun`, not spread into a copy with new keys (a new hidden class each time on Node 20: see Performance).
  if (failed > 0) begun.own = { ...own, toolErrors: own.toolErrors + failed };
  begun.messages = withMail(messages, answers, mail);
  return begun;
}

/** The group machine's one clocked action, `announce`, made for one clock (see {@link clockedAgentActions}). */
export function clockedGroupAnnounce<TContext extends { input: ActorHeader }, TEvent extends { type: string }>(
  clock: TroupeClock,
  announceTo?: (event: TroupeEvent) => void,
) {
  if (announceTo) return ({ context }: { context: TContext }, event: Announcement) => announceTo(stampEvent(context.input, clock.now(), event));
  return emit<TContext, TEvent, Announcement, TEvent, TroupeEvent>(({ context }, event) =>
    stampEvent(context.input, clock.now(), event),
  );
}
