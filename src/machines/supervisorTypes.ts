import type { AnyActorRef } from 'xstate';
import type { AgentInput, AgentOutcome, ApprovalHold, agentMachine } from './agentMachine.js';
import type { ErrorInfo } from '../failure.js';
import type { AgentTable, SlotNotices } from './agentTable.js';
import type { GroupInput, groupMachine } from './groupMachine.js';
import type { FailureReason } from '../events/events.js';
import type { PostOffice } from '../messaging/PostOffice.js';
import type { Message } from '../messaging/Message.js';
import type { SpawnLogic } from './SpawnLogic.js';
import type { WakeLine } from './routing.js';

/** A request to spawn one agent (or to resume an ended one under its id). */
export interface SpawnRequest {
  /** The new agent's input (its id included). */
  input: AgentInput;
  /** Higher runs first among waiting agents; equal priorities run first come, first served. Default 0. */
  priority?: number;
  /** Hold the agent until a person approves (`APPROVE`) or denies (`DENY`) the delegation. */
  approval?: ApprovalHold;
  /** Deny the delegation at once: the agent fails with `denied` and this error. */
  deny?: string;
  /** The id of an agent that waits for this one to end, lending its slot meanwhile. */
  waiter?: string;
  /**
   * True for a failed agent started again under its id (a restart): the agents that waited for its failed attempt
   * (their runs unchanged) wait for this one again, lending their slots as before.
   */
  restart?: true;
  /**
   * Asked for from a tool call (a delegation): it may be made at the end of the task, with the other spawns asked for
   * in it (see `SpawnBatch`). A spawn from code is made at once: code may move a simulated clock right after it.
   */
  batched?: true;
}

/**
 * A request to open a group (a pattern run): it starts at once, takes no slot, and ends when the runtime sends
 * `GROUP.END` or `GROUP.FAIL` (or it is cancelled or stopped with its subtree).
 */
export interface GroupSpawnRequest {
  group: true;
  /** The group's input (its id included). */
  input: GroupInput;
}

/** The events the supervisor accepts. */
export type SupervisorEvent =
  | { type: 'SPAWN'; request: SpawnRequest | GroupSpawnRequest }
  /** A person approved the held agent `id`. */
  | { type: 'APPROVE'; id: string }
  /** The held agent `id` is denied. */
  | { type: 'DENY'; id: string; error: string; requestId?: string }
  /** Agent `id` waits for agent `on` to end, and lends its slot meanwhile. */
  | { type: 'WAIT'; id: string; on: string }
  /** Agent `id` stops waiting for agent `on` (it gave up before `on` ended). */
  | { type: 'UNWAIT'; id: string; on: string }
  | { type: 'CANCEL'; id: string; error?: string }
  /** Stop agent `id` and its descendants: each completes with its last answer, or fails with `cancelled`. */
  | { type: 'STOP'; id: string; error?: string }
  /** Route a message to its receivers' inboxes (a name, an id, a topic, or `runtime`). */
  | { type: 'MESSAGE.SEND'; message: Message }
  /** Under an inspector, the runtime's wake line: wake agent `id`, which routed `message` woke, if it still wakes. */
  | { type: 'MESSAGE.WAKE'; id: string; message: Message }
  /** Agent `id` waits for messages and gives its slot back. */
  | { type: 'SLOT.RELEASE'; id: string }
  /** Agent `id` woke from waiting and wants a slot to think. */
  | { type: 'SLOT.REQUEST'; id: string }
  /** The calls agent `id` waits on timed out: wake it. */
  | { type: 'WAKE'; id: string }
  /** Group `id` completes with this output; its live descendants are cancelled first. */
  | { type: 'GROUP.END'; id: string; output: string }
  /** Group `id` fails; its live descendants are cancelled first. */
  | { type: 'GROUP.FAIL'; id: string; reason: FailureReason; error: ErrorInfo }
  | { type: 'SHUTDOWN' }
  | { type: `xstate.done.actor.${string}`; output: AgentOutcome }
  | { type: `xstate.error.actor.${string}`; error: unknown };

/** The supervisor's input. */
export interface SupervisorInput {
  /** The agent logic to run (the agent machine with its actors provided). */
  agentLogic: typeof agentMachine;
  /** At most this many agents hold a slot (think or run tools) at once; the rest wait. */
  maxParallel: number;
  /** Inboxes, topics and waiting calls: where the supervisor routes messages. */
  postOffice: PostOffice;
  /** The logic of groups (pattern runs); default {@link groupMachine}. */
  groupLogic?: typeof groupMachine;
  /**
   * True when an inspector watches the actor system: every delivered message is then sent to its receiver as a
   * `MESSAGE` event, even when it only waits in the inbox (default false: only messages that wake a receiver are).
   */
  inspected?: boolean;
  /**
   * True: agents' parent is a child of the supervisor (`agentParent` of its actors, which passes every event on to the
   * supervisor unless provided otherwise) instead of the supervisor itself. The runtime sets it, and provides an
   * `agentParentLogic` that ends agents without a step of the supervisor, when no inspector watches.
   */
  agentParent?: boolean;
  /**
   * How running agents are told that their slot is lent to their sub-agents or given back: by default with `YIELD`
   * and `RESUME` events; the runtime gives `quietSlotNotices` when no inspector watches.
   */
  slotNotices?: SlotNotices;
  /**
   * The line the receivers a routed message wakes are woken through, one at a time (the runtime's). Without one, the
   * supervisor's `route` sends each its `MESSAGE` right after its step.
   */
  wakeLine?: WakeLine;
}

/**
 * What the supervisor keeps. Inspectors serialise it with every snapshot of the supervisor, so each part serialises
 * small, whatever the number of agents: the logic as the machines' ids, the table and the post office as a few counts
 * (their `toJSON`).
 */
export interface SupervisorContext {
  logic: SpawnLogic;
  maxParallel: number;
  agents: AgentTable;
  postOffice: PostOffice;
  inspected: boolean;
  /**
   * The parent of the agents it spawns, when not itself: the runtime's `agentParentLogic` actor, set by the runtime when
   * no inspector watches, so an agent's end costs no step of the supervisor (see `endAtOnce`).
   */
  agentParent?: AnyActorRef;
  /** The line receivers are woken through, when the runtime gives one (see {@link SupervisorInput.wakeLine}). */
  wakeLine?: WakeLine;
}
