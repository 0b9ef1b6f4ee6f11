import type { PendingSpawns } from './agentTable.js';
import type { SpawnRequest } from './supervisorMachine.js';

/**
 * The spawns of one task, made together at its end: what the runtime does with the agents launched while no inspector
 * watches. A lead's turn of delegations launches its sub-agents one call at a time, each call's checks, context and
 * delegation between two launches; made as they were launched, each sub-agent's actor was created and took its first
 * step in between, and a tree of 10 × 10 × 10 ran about a tenth slower than the same agents launched level by level
 * from code, where one loop makes them all. Put off to a microtask, the spawns asked for in one task (every call of a
 * turn, and every turn whose tools start in that task) are made in one loop, in the order they were asked for.
 *
 * Nothing sees the difference: the supervisor hears every other event only after the spawns asked for before it
 * (`flush` first), and the agent table makes them before it answers about one of them or about the live agents as a
 * whole ({@link PendingSpawns}). While they are being made, nothing more is made on a reader's behalf: the agents
 * asked for later did not exist yet when the earlier ones were made one by one.
 */
export class SpawnBatch implements PendingSpawns {
  private requests: SpawnRequest[] = [];
  private readonly ids = new Set<string>();
  private making = false;

  constructor(
    /** Makes one spawn: the same as the supervisor's `SPAWN` (see `spawnAtOnce`). */
    private readonly make: (request: SpawnRequest) => void,
  ) {}

  /** None while they are being made: what a spawn reads then sees the table as it was before the later ones. */
  get size(): number {
    return this.making ? 0 : this.ids.size;
  }

  has(id: string): boolean {
    return this.ids.has(id);
  }

  /** Puts off a spawn to the end of the current task (or until something asks about it). */
  add(request: SpawnRequest): void {
    this.requests.push(request);
    this.ids.add(request.input.id);
    if (this.requests.length === 1 && !this.making) queueMicrotask(() => this.flush());
  }

  flush(): void {
    if (this.making || this.requests.length === 0) return;
    this.making = true;
    let failure: { error: unknown } | undefined;
    try {
      // A spawn asked for while these are made (by one of them, at once) is made after them, in the same loop.
      for (let index = 0; index < this.requests.length; index++) {
        const request = this.requests[index]!;
        this.ids.delete(request.input.id);
        try {
          this.make(request);
        } catch (error) {
          failure ??= { error }; // the others are still made; the first failure is thrown once they are
        }
      }
    } finally {
      this.requests = [];
      this.making = false;
    }
    if (failure) throw failure.error;
  }
}
