interface Entry {
  id: string;
  priority: number;
  seq: number;
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

  /** Adds an agent; `priority` defaults to 0. */
  push(id: string, priority = 0): void {
    this.heap.push({ id, priority, seq: this.seq++ });
    this.up(this.heap.length - 1);
  }

  /** Takes the next agent, or undefined when none waits. */
  take(): string | undefined {
    const { heap } = this;
    const top = heap[0];
    const last = heap.pop();
    if (top === undefined || last === undefined) return undefined;
    if (heap.length > 0) {
      heap[0] = last;
      this.down(0);
    }
    return top.id;
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
