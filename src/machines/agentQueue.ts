interface Entry {
  id: string;
  /** Which run of the agent the entry is for (an agent resumed under its id has a new run). */
  run: number;
  priority: number;
  seq: number;
}

/** One run of an agent: its id, and which of its runs (an agent resumed under its id has a new run). */
export interface AgentRun {
  id: string;
  run: number;
}

/**
 * The agents waiting for a slot: higher `priority` first, first come first served among equals. A binary heap,
 * so pushing and taking are O(log n) even with 100,000 agents waiting.
 */
export class AgentQueue {
  private readonly heap: Entry[] = [];
  private seq = 0;

  /** How many agents wait. */
  get size(): number {
    return this.heap.length;
  }

  /** Adds a run of an agent; `priority` defaults to 0. */
  push(id: string, run: number, priority = 0): void {
    this.heap.push({ id, run, priority, seq: this.seq++ });
    this.up(this.heap.length - 1);
  }

  /** Takes the next agent, or undefined when none waits. */
  take(): AgentRun | undefined {
    const { heap } = this;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (heap.length > 0) {
      heap[0] = last;
      this.down(0);
    }
    return { id: top.id, run: top.run };
  }

  private before(a: Entry, b: Entry): boolean {
    return a.priority !== b.priority ? a.priority > b.priority : a.seq < b.seq;
  }

  private up(index: number): void {
    const { heap } = this;
    const entry = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent]!;
      if (!this.before(entry, above)) break;
      heap[index] = above;
      index = parent;
    }
    heap[index] = entry;
  }

  private down(index: number): void {
    const { heap } = this;
    const entry = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, entry)) break;
      heap[index] = heap[child]!;
      index = child;
    }
    heap[index] = entry;
  }
}
