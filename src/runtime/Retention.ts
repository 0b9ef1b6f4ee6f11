import type { AgentTable } from '../machines/agentTable.js';

/** What {@link Retention} works with. */
export interface RetentionHost {
  /** Finished agents (and groups) kept in memory at most; the oldest finished runs go first. */
  readonly keep: number;
  /** The supervisor's book of agents. */
  table(): AgentTable;
  /** Lets every part of the runtime drop what it keeps of these ended agents (a whole finished run). */
  forget(ids: readonly string[], root: string): void;
}

/**
 * Keeps a long-lived runtime's memory bounded: once a run has finished (its top-level agent or group and everything
 * under it ended), its agents count as finished; past `keep` of them, the oldest finished runs are forgotten whole
 * (their records, results, metrics entries and limits; sessions stay in a store the user gave). A run is forgotten
 * only whole and only when none of it runs again, so a parent is never forgotten before its children.
 */
export class Retention {
  /** Per run (by its top-level id): agents and groups of it not yet ended. */
  private readonly live = new Map<string, number>();
  /** The run of every live agent or group. */
  private readonly runOf = new Map<string, string>();
  /** Finished runs, oldest first, with how many agents each had when it finished. */
  private readonly finished: { root: string; size: number }[] = [];
  private head = 0;
  private kept = 0;

  constructor(private readonly host: RetentionHost) {}

  /** An agent or group was started (or resumed) under `parentId`. */
  opened(id: string, parentId: string | null): void {
    const root = parentId === null ? id : (this.runOf.get(parentId) ?? this.topOf(parentId));
    if (this.runOf.get(id) === root) return; // already counted (a launch the supervisor has not seen end)
    this.runOf.set(id, root);
    this.live.set(root, (this.live.get(root) ?? 0) + 1);
  }

  /** An agent or group ended. When it was the last live one of its run, the run is finished. */
  ended(id: string): void {
    const root = this.runOf.get(id);
    if (root === undefined) return;
    this.runOf.delete(id);
    const left = (this.live.get(root) ?? 1) - 1;
    if (left > 0) {
      this.live.set(root, left);
      return;
    }
    this.live.delete(root);
    const size = this.host.table().subtree(root).length;
    this.finished.push({ root, size });
    this.kept += size;
    this.trim();
  }

  /** Forgets the oldest finished runs while more than `keep` finished agents are kept (the newest run always stays). */
  private trim(): void {
    const table = this.host.table();
    while (this.kept > this.host.keep && this.finished.length - this.head > 1) {
      const { root, size } = this.finished[this.head]!;
      this.head += 1;
      this.kept -= size;
      // A member resumed since runs again under another run: then this run is not forgotten (it is rare and small).
      const ids = table.subtree(root);
      if (ids.some((id) => this.runOf.has(id))) continue;
      this.host.forget(ids, root);
    }
    if (this.head > 1_024 && this.head * 2 > this.finished.length) {
      this.finished.splice(0, this.head);
      this.head = 0;
    }
  }

  /** The top-level agent or group above `id`, by the records. */
  private topOf(id: string): string {
    const table = this.host.table();
    let at = id;
    for (let parent = table.record(at)?.parentId ?? null; parent !== null; parent = table.record(parent)?.parentId ?? null) at = parent;
    return at;
  }
}
