import { startIdleTimer, stopIdleTimer } from '../actors/idleTimer.js';
import type { Clock } from '../clock.js';
import type { AgentRun } from './agentQueue.js';
import type { AgentActorRef } from './agentMachine.js';
import type { AgentRecord, AgentTable, SlotNotices } from './agentTable.js';
import type { SupervisorContext } from './supervisorTypes.js';

// Slots: at most `maxParallel` agents hold one. An agent that waits for its sub-agents lends its slot and gets one back
// before queued agents start; an agent that waits for messages gives its slot back and gets one when it wakes.

/** Agent `id` parks in `running.waiting`: its slot is free for others; it gets one when it wakes. */
export function park(agents: AgentTable, id: string): void {
  const record = agents.record(id);
  if (!record) return;
  agents.freeSlot(record);
  if (record.state === 'running') record.parked = true;
}

/**
 * Parks agent `id` from its own step, without a `SLOT.RELEASE` step of the supervisor (what the runtime does when no
 * inspector watches the actor system): the slot is freed in the supervisor's table at once, and the supervisor is
 * asked to start someone with it only when someone waits for a slot (an agent queued, or one that wants its slot back).
 */
export function parkAtOnce(agents: AgentTable, id: string, startQueued: () => void): void {
  park(agents, id);
  if (agents.queue.size > 0 || agents.resuming.length > 0) startQueued();
}

/**
 * Gives a parked agent whose mail is ready a slot to wake with, when one is free (it thinks at once, without asking);
 * returns whether it did. An agent that is not parked, or not ready, gets none (it asks for one when it wakes).
 */
export function giveWakeSlot(context: SupervisorContext, id: string): boolean {
  const { agents } = context;
  const record = agents.record(id);
  if (!record?.parked || record.holdsSlot || agents.running >= context.maxParallel || !context.postOffice.ready(id)) return false;
  record.parked = false;
  agents.takeSlot(record);
  return true;
}

/** Agent `waiterId` starts waiting for `childId`; its first wait lends its slot. */
export function beginWait(agents: AgentTable, waiterId: string, childId: string): void {
  const waiter = agents.record(waiterId);
  const child = agents.record(childId);
  if (waiter?.state !== 'running' || !child || !agents.actor(childId)) return;
  const entry = { id: waiterId, run: waiter.run };
  // A list made with its first entry: one made empty and pushed to grows room for 17 (every sub-agent has a waiter).
  if (child.waiters) child.waiters.push(entry);
  else child.waiters = [entry];
  waiter.waits = (waiter.waits ?? 0) + 1;
  if (waiter.waits === 1 && waiter.holdsSlot) agents.lendSlot(waiter);
}

/** Agent `waiterId` gives up waiting for `childId` before it ended. */
export function abandonWait(agents: AgentTable, waiterId: string, childId: string): void {
  const list = agents.record(childId)?.waiters;
  const index = list?.findIndex((entry) => entry.id === waiterId) ?? -1;
  if (!list || index < 0) return; // the wait already ended
  const [entry] = list.splice(index, 1);
  if (entry) endWait(agents, entry);
}

/** A wait is over (the child ended, or the waiter gave up); with its last wait over, the waiter asks for a slot. */
export function endWait(agents: AgentTable, { id, run }: AgentRun): void {
  const waiter = agents.record(id);
  if (!waiter || waiter.run !== run || waiter.state !== 'running' || !waiter.waits) return;
  waiter.waits -= 1;
  if (waiter.waits === 0 && !waiter.holdsSlot) agents.resuming.push({ id, run });
}

/**
 * Slot notices without a step of the agent where its state would change only for an inspector to draw (what the
 * runtime gives when none watches). An agent whose slot is lent while its tools run stays in `acting.working` with its
 * idle timer paused, rather than stepping to `acting.waitingForAgents` (`YIELD`); given a slot back there, its idle
 * timer runs again, rather than stepping back (`RESUME`). Given one back while it waits for a person, it is not told
 * either. Its slot guards then ask the supervisor's table (`slotGuards`), not its context. Anywhere else (thinking,
 * waiting for a slot or for messages) it is told with the event, whose transition it needs. Two XState steps fewer per
 * delegating turn: about 14 KB each time.
 *
 * A slot is lent from a tool's body, never during the agent's own step. One may come back during it (its step tells
 * someone who frees a slot at once), when its snapshot still shows the state it is leaving: so an agent that seems to
 * be working is looked at again once the step is over (a microtask later), and told then as it is.
 */
export function quietSlotNotices(clock: Clock): SlotNotices {
  const working = { running: { acting: 'working' } } as const;
  const waitingForPerson = { running: { acting: 'waitingForPerson' } } as const;
  const tell = (agent: AgentActorRef, record: AgentRecord) => {
    const snapshot = agent.getSnapshot();
    if (snapshot.status !== 'active' || record.holdsSlot !== true) return; // ended, or lent again meanwhile
    if (snapshot.matches(working)) startIdleTimer(agent, clock, snapshot.context.input.idleTimeoutMs);
    else if (!snapshot.matches(waitingForPerson)) agent.send({ type: 'RESUME' });
  };
  return {
    lent(agent) {
      if (agent.getSnapshot().matches(working)) stopIdleTimer(agent, clock);
      else agent.send({ type: 'YIELD' });
    },
    returned(agent, record) {
      if (agent.getSnapshot().matches(working)) queueMicrotask(() => tell(agent, record));
      else tell(agent, record);
    },
  };
}
