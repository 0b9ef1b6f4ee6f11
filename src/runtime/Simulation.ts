import { DeadlockError, TimeLimitError } from '../errors.js';
import type { AgentActorRef } from '../machines/agentMachine.js';
import type { AgentRecord, AgentTable } from '../machines/agentTable.js';
import type { PostOffice } from '../messaging/PostOffice.js';
import type { RuntimeClock } from './RuntimeClock.js';

/** Options of `runtime.runUntilIdle()`. */
export interface RunUntilIdleOptions {
  /** Give up (reject) once simulated time has moved this far from the start (default: 30 days). */
  limitMs?: number;
}

/** Where a run stood when nothing was left to do. */
export interface IdleReport {
  /** The clock's time. */
  at: number;
  /** Resident agents waiting for their next message (they are alive, not stuck). */
  waiting: string[];
}

/** What {@link runUntilIdle} looks at. */
export interface SimulationParts {
  readonly clock: RuntimeClock;
  readonly postOffice: PostOffice;
  table(): AgentTable;
  /** Grows with every event: tells work that moves on from work that is stuck. */
  progress(): number;
  /**
   * True while work the runtime knows of runs in real time outside the simulation (an MCP server starting or answering
   * a call): an idle timeout waits for it, however long it takes (its own limits end it).
   */
  outsideWork?(): boolean;
}

/**
 * How many turns of real time (a millisecond each) a run gets, without any event, before simulated time jumps to an
 * idle timeout while agents still work: a model or tool that works in real time (a real server, a file) may finish.
 */
const GRACE_TURNS = 100;

const DEFAULT_LIMIT_MS = 30 * 86_400_000;

/**
 * Runs until nothing is left to do. In each round it lets the work of the current instant finish (promise callbacks
 * and anything queued for the event loop); then, if timers are set, a simulated clock jumps to the next one (a real
 * clock is waited for). It resolves when every live agent is parked (a resident waiting for its next message) and no
 * timer is set, and rejects with a `DeadlockError` when some parked agents wait for messages, replies, sub-agents or
 * a person that nothing left can bring.
 */
export async function runUntilIdle(parts: SimulationParts, options: RunUntilIdleOptions = {}): Promise<IdleReport> {
  const { clock } = parts;
  const limitMs = options.limitMs ?? DEFAULT_LIMIT_MS;
  const limit = clock.now() + limitMs;
  let stalled = 0;
  let seen = parts.progress();
  for (;;) {
    await settleInstant();
    if (clock.realTimeWork) {
      // Work that takes no simulated time runs in real time (a file tool's reads and writes): time stands still for it.
      await realTick();
      continue;
    }
    const next = clock.nextTimerAt();
    if (next !== undefined && clock.simulated) {
      if (parts.progress() !== seen) [seen, stalled] = [parts.progress(), 0];
      // The next timer is an idle timeout, yet agents still work: give them real time before it fires.
      const outside = parts.outsideWork?.() === true;
      if (clock.nextTimerKind() === 'watchdog' && (outside || stalled < GRACE_TURNS) && someBusy(parts)) {
        if (!outside) stalled += 1;
        await realTick();
        continue;
      }
      // Something is due later: jump to it.
      if (next > limit) throw new TimeLimitError(limitMs, clock.now());
      stalled = 0;
      clock.advanceTo(next);
      continue;
    }
    if (next === undefined && !someBusy(parts)) {
      await settleInstant(); // nothing due and nobody busy: make sure, then report
      if (clock.nextTimerAt() === undefined && !someBusy(parts)) return report(parts, [...parts.table().liveAgents()]);
      continue;
    }
    // Real time, or work in flight without a timer (a real model, a file): give it a moment of real time.
    await realTick();
  }
}

/** True when some live agent is not parked: it thinks, acts, or waits for something with a timer. */
function someBusy(parts: SimulationParts): boolean {
  const table = parts.table();
  for (const [id, actor] of table.liveAgents()) if (parkedIn(actor, table.record(id)) === undefined) return true;
  return false;
}

/** One millisecond of real time. */
function realTick(): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, 1));
}

/** Every live agent that waits without a timer, with where it waits and, for a message wait, what for. */
export function waitingAgents(parts: Pick<SimulationParts, 'postOffice' | 'table'>): { id: string; state: string; waitsFor?: string }[] {
  const table = parts.table();
  const waiting: { id: string; state: string; waitsFor?: string }[] = [];
  for (const [id, actor] of table.liveAgents()) {
    const state = parkedIn(actor, table.record(id));
    if (state === undefined) continue;
    const waitsFor = state === 'running.waiting' ? (parts.postOffice.describeWaits(id) ?? 'a message') : undefined;
    waiting.push(waitsFor === undefined ? { id, state } : { id, state, waitsFor });
  }
  return waiting;
}

/** The idle report, or the deadlock: parked agents that wait for something nothing left can bring. */
function report(parts: SimulationParts, live: [string, AgentActorRef][]): IdleReport {
  const at = parts.clock.now();
  const waiting: string[] = [];
  const stuck: { id: string; state: string; waitsFor?: string }[] = [];
  const table = parts.table();
  for (const [id, actor] of live) {
    const state = parkedIn(actor, table.record(id))!;
    // Waiting for any message is idle; waiting for a reply, for one agent's message, sub-agents or a person is stuck.
    if (state === 'running.waiting' && !parts.postOffice.waitsForSomeone(id)) waiting.push(id);
    else if (state === 'running.waiting') stuck.push({ id, state, waitsFor: parts.postOffice.describeWaits(id) ?? 'a message' });
    else stuck.push({ id, state });
  }
  if (stuck.length > 0) throw new DeadlockError(stuck, at);
  return { at, waiting };
}

/**
 * Where an agent waits without a timer (for a message, a reply, its sub-agents or a person), or for a slot (queued, or
 * woken and asking for one), or undefined if it is busy. An agent waiting for a slot is parked too: when every other
 * live agent is parked and no timer is set, nobody will free a slot for it (the slots are held by agents that wait
 * for a person), and the run must end in a deadlock rather than wait for ever.
 *
 * An agent that lent its slot to the sub-agents it waits for is parked in `running.acting.waitingForAgents`; without an
 * inspector it is told so quietly and stays in `running.acting.working` (see `quietSlotNotices`), where its record in
 * the supervisor's table says it holds no slot: it is named the same, so both ways end the same.
 */
function parkedIn(actor: AgentActorRef, record: AgentRecord | undefined): string | undefined {
  const snapshot = actor.getSnapshot();
  if (snapshot.status !== 'active') return undefined;
  if (snapshot.matches({ running: 'waiting' })) return 'running.waiting';
  if (snapshot.matches({ running: { acting: 'waitingForAgents' } })) return 'running.acting.waitingForAgents';
  if (record?.holdsSlot !== true && snapshot.matches({ running: { acting: 'working' } })) return 'running.acting.waitingForAgents';
  if (snapshot.matches({ running: { acting: 'waitingForPerson' } })) return 'running.acting.waitingForPerson';
  if (snapshot.matches({ pending: 'awaitingApproval' })) return 'pending.awaitingApproval';
  if (snapshot.matches({ pending: 'queued' })) return 'pending.queued';
  if (snapshot.matches({ running: 'waitingForSlot' })) return 'running.waitingForSlot';
  return undefined;
}

/** Lets everything due at this instant finish: promise callbacks, then two turns of the event loop. */
async function settleInstant(): Promise<void> {
  await new Promise<void>((resolve) => setImmediate(resolve));
  await new Promise<void>((resolve) => setImmediate(resolve));
}
