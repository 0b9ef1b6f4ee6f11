import type { AgentTable } from '../machines/agentTable.js';
import type { SupervisorActorRef } from '../machines/supervisorMachine.js';

/**
 * What each runtime that is not shut down does when the process runs out of work; true when it ended some agents.
 * One `beforeExit` listener serves them all, so a process with many runtimes adds one listener, not one each.
 */
const stallHandlers = new Set<() => boolean>();

function onBeforeExit(): void {
  let acted = false;
  for (const handler of [...stallHandlers]) {
    try {
      acted = handler() || acted;
    } catch {
      // A runtime that cannot be read any more (its supervisor failed) is left as it is: the process ends as it would.
    }
  }
  // One more turn of the event loop: if agents are still alive after what was ended settles, the process comes back
  // here (Node emits `beforeExit` again only once the loop has run).
  if (acted) setImmediate(() => {});
}

/**
 * Watches for the process running out of work (Node's `beforeExit`: no timer, socket, file or child left to wake
 * anything) while this runtime has live agents: `busy` as an agent is launched, `idle` once none is live, `close` at
 * shutdown. Only a busy runtime is held by the listener, so a runtime that is dropped without a shutdown once its agents
 * ended is not kept alive by it.
 */
export class ProcessEndWatch {
  private watching = false;
  private closed = false;

  constructor(private readonly stalled: () => boolean) {}

  /** An agent was launched: watch from now on. */
  busy(): void {
    if (this.watching || this.closed) return;
    this.watching = true;
    if (stallHandlers.size === 0) process.on('beforeExit', onBeforeExit);
    stallHandlers.add(this.stalled);
  }

  /** No agent is live: stop watching. */
  idle(): void {
    if (!this.watching) return;
    this.watching = false;
    stallHandlers.delete(this.stalled);
    if (stallHandlers.size === 0) process.off('beforeExit', onBeforeExit);
  }

  /** The runtime shut down: never watch again. */
  close(): void {
    this.closed = true;
    this.idle();
  }
}

/** Why an agent that waited for messages was stopped at the process's end (its failure, when it had no answer). */
export const STALLED_STOP = 'Stopped: the process had nothing left to do while the agent waited for messages, so nothing could send it one.';

/**
 * The runtime's answer to a process that ran out of work while agents are alive: nothing left in the process can wake
 * them, and the promises that wait for them (`run`, `request`, a handle's result) would never settle; Node would end
 * the process with them unsettled and say nothing. Agents that wait for messages are stopped first, as `runtime.stop`
 * stops them (a resident ends with its last answer, so `await runtime.run(resident, task)` gets it), which may let
 * the agents waiting on them go on; when none waits for messages, every live agent is cancelled with a message that
 * says why. A warning names the runtime's agents once. Returns true when it ended something.
 */
export function stopStalledAgents(parts: {
  table: () => AgentTable;
  supervisor: Pick<SupervisorActorRef, 'send'>;
  simulated: boolean;
  warned: { value: boolean };
}): boolean {
  const table = parts.table();
  const live = [...table.liveAgents()];
  if (live.length === 0) return false;
  if (!parts.warned.value) {
    parts.warned.value = true;
    const names = live.slice(0, 3).map(([id]) => id).join(', ') + (live.length > 3 ? `, and ${live.length - 3} more` : '');
    process.emitWarning(
      `troupe: the process ran out of work while ${live.length === 1 ? 'an agent was' : `${live.length} agents were`} still alive (${names}), ` +
        `with nothing left to wake ${live.length === 1 ? 'it' : 'them'}: agents waiting for messages are stopped (a resident ends with its last answer), ` +
        'then agents that still cannot go on are cancelled. Stop resident agents yourself (runtime.stop, runtime.shutdown)' +
        (parts.simulated ? ', and on a simulated clock await runs alongside runtime.runUntilIdle().' : '.'),
      { code: 'TROUPE_STALLED' },
    );
  }
  const idle = live.filter(([, actor]) => actor.getSnapshot().matches({ running: 'waiting' }));
  if (idle.length > 0) {
    for (const [id] of idle) parts.supervisor.send({ type: 'STOP', id, error: STALLED_STOP });
    return true;
  }
  const why = parts.simulated
    ? 'Cancelled: the process had nothing left to do while the agent waited on the simulated clock; await runs alongside runtime.runUntilIdle(), which moves it.'
    : 'Cancelled: the process had nothing left to do while the agent waited, so nothing could wake it.';
  const liveIds = new Set(live.map(([id]) => id));
  for (const id of liveIds) {
    const parentId = table.record(id)?.parentId ?? null;
    // The top of each live subtree: cancelling it cancels the agents under it, children first.
    if (parentId === null || !liveIds.has(parentId)) parts.supervisor.send({ type: 'CANCEL', id, error: why });
  }
  return true;
}
