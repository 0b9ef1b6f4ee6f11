import { RUNTIME_ADDRESS, type Message } from '../messaging/Message.js';
import type { RouteReport } from '../messaging/PostOffice.js';
import type { AgentActorRef } from './agentMachine.js';
import { giveWakeSlot } from './slots.js';
import type { SupervisorContext, SupervisorEvent } from './supervisorTypes.js';

/** The `MESSAGE` event the supervisor sends a receiver. */
export type MessageEvent = { type: 'MESSAGE'; message: Message; slot?: true };

/** True when a message wakes the agent: it waits in `running.waiting`, and now has what it waits for. */
function wakes(context: SupervisorContext, id: string, actor: AgentActorRef): boolean {
  // Read from the state value itself: `matches` makes a state path and more for every message routed.
  const value = actor.getSnapshot().value as string | Record<string, unknown>;
  return typeof value === 'object' && value.running === 'waiting' && context.postOffice.ready(id);
}

/**
 * Routes one message through the post office, which puts a copy into each receiver's inbox (or into its call waiting
 * for it), and hands `tell` the `MESSAGE` event for each receiver that should get one. A receiver that is busy, or waits
 * for other mail, would ignore the event: it gets one only when someone inspects the system (to see every message pass
 * from actor to actor) or when it wakes (with a slot, when one is free). Returns what routing did.
 */
export function routeMessage(
  context: SupervisorContext,
  message: Message,
  tell: (actor: AgentActorRef, event: MessageEvent) => void,
): RouteReport {
  const report = context.postOffice.route(message, (id) => context.agents.record(id) !== undefined);
  for (const delivery of report.deliveries) {
    if (delivery.outcome !== 'delivered' || delivery.to === RUNTIME_ADDRESS) continue;
    const actor = context.agents.actor(delivery.to);
    if (!actor || !(context.inspected || wakes(context, delivery.to, actor))) continue;
    const copy = delivery.message;
    tell(actor, giveWakeSlot(context, delivery.to) ? { type: 'MESSAGE', message: copy, slot: true } : { type: 'MESSAGE', message: copy });
  }
  return report;
}

/**
 * The supervisor's `route` as the runtime provides it when no inspector watches: the route is reported at once, then
 * each receiver it wakes is sent its `MESSAGE` straight from the action, in the order an `enqueueActions` would have
 * sent them after the step (which costs a dozen closures and an action to resolve per message), unless it ended as the
 * route was reported.
 */
export function routeAtOnce(report: (report: RouteReport) => void) {
  return ({ context, event }: { context: SupervisorContext; event: SupervisorEvent }): void => {
    if (event.type !== 'MESSAGE.SEND') return;
    let woken: [AgentActorRef, MessageEvent][] | undefined;
    report(routeMessage(context, event.message, (actor, message) => (woken ??= []).push([actor, message])));
    // A receiver that code stopped as it heard of the route (an `events$` handler on `message.delivered`) has ended:
    // its copy is in its inbox, and the slot it was given went back as it ended.
    for (const [actor, message] of woken ?? []) if (actor.getSnapshot().status === 'active') actor.send(message);
  };
}
