import { RUNTIME_ADDRESS, type Message } from '../messaging/Message.js';
import type { RouteReport } from '../messaging/PostOffice.js';
import type { AgentActorRef } from './agentMachine.js';
import { giveWakeSlot } from './slots.js';
import type { SupervisorContext, SupervisorEvent } from './supervisorTypes.js';

/** The `MESSAGE` event the supervisor sends a receiver. */
export type MessageEvent = { type: 'MESSAGE'; message: Message; slot?: true };

/** True when a message wakes the agent: it waits in `running.waiting`, and now has what it waits for. */
export function wakes(context: SupervisorContext, id: string, actor: AgentActorRef): boolean {
  // Read from the state value itself: `matches` makes a state path and more for every message routed.
  const value = actor.getSnapshot().value as string | Record<string, unknown>;
  return typeof value === 'object' && value.running === 'waiting' && context.postOffice.ready(id);
}

/**
 * The `MESSAGE` event a receiver is sent for a message in its inbox: one that wakes it (with a slot, when one is free),
 * or, under an inspector, one for every message (to see it pass from actor to actor). Undefined when it would not
 * wake the receiver (it is busy, or waits for other mail) and no inspector watches: it reads the message at its next
 * turn.
 */
export function messageEventFor(context: SupervisorContext, id: string, actor: AgentActorRef, copy: Message): MessageEvent | undefined {
  if (!(context.inspected || wakes(context, id, actor))) return undefined;
  return giveWakeSlot(context, id) ? { type: 'MESSAGE', message: copy, slot: true } : { type: 'MESSAGE', message: copy };
}

/**
 * Routes one message through the post office, which puts a copy into each receiver's inbox (or into its call waiting
 * for it), and hands `tell` each receiver that got one and has an actor, with its copy: the caller decides what to
 * send it (see {@link messageEventFor}). Returns what routing did.
 */
export function routeMessage(
  context: SupervisorContext,
  message: Message,
  tell: (actor: AgentActorRef, copy: Message, id: string) => void,
): RouteReport {
  const report = context.postOffice.route(message, (id) => context.agents.record(id) !== undefined);
  for (const delivery of report.deliveries) {
    if (delivery.outcome !== 'delivered' || delivery.to === RUNTIME_ADDRESS) continue;
    const actor = context.agents.actor(delivery.to);
    if (actor) tell(actor, delivery.message, delivery.to);
  }
  return report;
}

/**
 * The supervisor's `route` as the runtime provides it when no inspector watches: the route is reported at once (its
 * events, the sender's receipt), then the receivers go on the runtime's {@link WakeLine}, which wakes them one at a
 * time (rather than through an `enqueueActions`, which costs a dozen closures and an action to resolve per message).
 */
export function routeAtOnce(report: (report: RouteReport) => void, line: WakeLine) {
  return ({ context, event }: { context: SupervisorContext; event: SupervisorEvent }): void => {
    if (event.type !== 'MESSAGE.SEND') return;
    let added = false;
    report(
      routeMessage(context, event.message, (actor, copy, id) => {
        // A receiver that is busy, or waits for other mail, is not woken: it reads the message at its next turn.
        if (!wakes(context, id, actor)) return;
        line.add(actor, copy, id);
        added = true;
      }),
    );
    if (added) line.start();
  };
}

/**
 * The most receivers a {@link WakeLine} wakes in one go: past this many, each next one is woken a microtask after the
 * one before.
 */
export const WOKEN_TOGETHER = 128;

/**
 * The receivers that routed messages wake, woken in the order they were routed: the first {@link WOKEN_TOGETHER} at
 * once (as the message is routed; the common message wakes one agent), each next one a microtask after the one
 * before. The runtime has one, watched or not: under an inspector the supervisor's `route` puts the receivers it wakes
 * on it too (see `supervisorMachine`), so a run wakes them at the same moments, and gives the same events in the same
 * order, either way. Whether a receiver wakes, and with a slot, is decided as it is woken (see
 * {@link messageEventFor}): an earlier wake may have taken the last free slot, or another message woken it already. A
 * receiver that ended meanwhile (code stopped it as it heard of the route) is skipped: its copy is in its inbox (a slot
 * is given only as a receiver is woken).
 *
 * Why not all at once: a price published to 10,000 waiting traders woke all of them in one loop, and each trader's
 * turn then went forward one microtask at a time, every trader's first step before any trader's second. So the state
 * of all 10,000 turns was alive at once, and outlived the young generation's collections: at 10,000 traders about
 * 20 KB of each 62 KB turn was promoted to the old generation, against 8 KB at 1,000. Woken a microtask apart, a
 * turn ends about 26 wakes after it began (the microtask steps of a scripted trader's turn), so only that many
 * turns are under way at once past the first wave, whatever the number of receivers.
 *
 * Why not one at a time from the first: receivers woken together go on together, each taking its first step, then
 * each its second, so one piece of code runs for all of them in a row. Woken a microtask apart, every step of every
 * turn under way ran in turn with the others', and the same steps cost more: a trader's turn at 100 traders took
 * 15 % longer, at 1,000 5 % longer (the promotion at 10,000 traders is the same either way).
 */
export class WakeLine {
  private readonly actors: (AgentActorRef | undefined)[] = [];
  private readonly copies: (Message | undefined)[] = [];
  private readonly ids: (string | undefined)[] = [];
  private next = 0;
  private running = false;

  constructor(
    /** The supervisor's context as the receiver is woken. */
    private readonly context: () => SupervisorContext,
    /**
     * How a receiver in line is woken when its turn comes; by default it is sent its `MESSAGE` (see
     * {@link messageEventFor}) at once. Under an inspector the runtime asks the supervisor (`MESSAGE.WAKE`), whose
     * step sends it, so the inspector draws it from the supervisor.
     */
    private readonly wake: (actor: AgentActorRef, copy: Message, id: string) => void = (actor, copy, id) => {
      const event = messageEventFor(this.context(), id, actor, copy);
      if (event) actor.send(event);
    },
  ) {}

  /** What an inspector shows of the line in the supervisor's context (which keeps it): how many wait in it. */
  toJSON(): { inLine: number } {
    return { inLine: this.ids.length - this.next };
  }

  /** Puts a receiver of `copy` in line; {@link WakeLine.start} starts waking. */
  add(actor: AgentActorRef, copy: Message, id: string): void {
    this.actors.push(actor);
    this.copies.push(copy);
    this.ids.push(id);
  }

  /** Wakes the first receivers in line now, unless the line is already at work; the rest follow a microtask apart. */
  start(): void {
    if (!this.running && this.next < this.ids.length) this.wakeNext(WOKEN_TOGETHER);
  }

  private readonly step = (): void => this.wakeNext(1);

  /**
   * Wakes the next `most` receivers in line (fewer if fewer wait). Each is forgotten as it is taken, so a long line
   * does not keep every message it has woken a receiver with; and the line's next step is queued before any of them
   * wakes, so a receiver that routes a message as it wakes puts its receivers behind them, as code that stops one does.
   */
  private wakeNext(most: number): void {
    const from = this.next;
    const count = Math.min(most, this.ids.length - from);
    this.next = from + count;
    this.running = this.next < this.ids.length;
    if (count === 1) {
      // The common case, one receiver (one message to one agent, or a step of the line): no copy of the line.
      const actor = this.actors[from]!;
      const copy = this.copies[from]!;
      const id = this.ids[from]!;
      this.actors[from] = this.copies[from] = this.ids[from] = undefined;
      this.goOn();
      this.wakeIfActive(actor, copy, id);
      return;
    }
    const actors = this.actors.slice(from, this.next);
    const copies = this.copies.slice(from, this.next);
    const ids = this.ids.slice(from, this.next);
    this.actors.fill(undefined, from, this.next);
    this.copies.fill(undefined, from, this.next);
    this.ids.fill(undefined, from, this.next);
    this.goOn();
    for (let index = 0; index < count; index++) this.wakeIfActive(actors[index]!, copies[index]!, ids[index]!);
  }

  /** Queues the line's next step, or empties the line when no receiver is left in it. */
  private goOn(): void {
    if (this.running) queueMicrotask(this.step);
    else this.actors.length = this.copies.length = this.ids.length = this.next = 0;
  }

  /** Wakes a receiver, unless it ended while it waited in line. */
  private wakeIfActive(actor: AgentActorRef, copy: Message, id: string): void {
    if (actor.getSnapshot().status === 'active') this.wake(actor, copy, id);
  }
}
