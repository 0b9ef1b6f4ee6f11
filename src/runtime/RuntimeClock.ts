import { clockNow, type Clock, type TroupeClock } from '../clock.js';

interface Timer {
  id: number;
  due: number;
  inner: unknown;
  /** Position in the heap, or -1 once it fired or was cleared. */
  index: number;
}

/** A clock that can be moved forward, such as XState's `SimulatedClock`. */
export interface SettableClock extends TroupeClock {
  set(time: number): void;
}

/**
 * The runtime's own clock: it wraps the clock the user gave (real time, or XState's `SimulatedClock`) and keeps its
 * own book of the timers set through it, so the runtime knows when the next one is due without reading the wrapped
 * clock's private fields. Every timer of the runtime goes through it: XState's delayed events, idle timeouts, tool
 * timeouts, scripted latencies and message waits.
 */
export class RuntimeClock implements TroupeClock {
  private readonly heap: Timer[] = [];
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;

  constructor(
    /** The clock that really keeps time. */
    readonly inner: Clock,
  ) {}

  /** Milliseconds on the wrapped clock. */
  now(): number {
    return clockNow(this.inner);
  }

  /** True when the wrapped clock can be moved forward by the runtime (simulated time). */
  get simulated(): boolean {
    return typeof (this.inner as Partial<SettableClock>).set === 'function';
  }

  setTimeout(fn: (...args: any[]) => void, ms: number): number {
    const id = this.nextId++;
    const timer: Timer = { id, due: this.now() + Math.max(0, ms), inner: undefined, index: -1 };
    this.timers.set(id, timer);
    this.push(timer);
    timer.inner = this.inner.setTimeout(() => {
      this.remove(timer);
      fn();
    }, ms);
    return id;
  }

  clearTimeout(id: number): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    this.remove(timer);
    this.inner.clearTimeout(timer.inner);
  }

  /** How many timers are set. */
  get pending(): number {
    return this.timers.size;
  }

  /** When the earliest timer is due, or undefined when none is set. */
  nextTimerAt(): number | undefined {
    return this.heap[0]?.due;
  }

  /** Moves a simulated clock to `time` (never backwards), firing the timers due by then. */
  advanceTo(time: number): void {
    const inner = this.inner as Partial<SettableClock>;
    if (typeof inner.set !== 'function') throw new Error('The runtime clock is real time; only a simulated clock can be moved.');
    inner.set(Math.max(time, this.now()));
  }

  private remove(timer: Timer): void {
    if (timer.index < 0) return;
    this.timers.delete(timer.id);
    const { heap } = this;
    const last = heap.pop()!;
    const index = timer.index;
    timer.index = -1;
    if (last === timer) return;
    heap[index] = last;
    last.index = index;
    this.down(index);
    this.up(index);
  }

  private before(a: Timer, b: Timer): boolean {
    return a.due !== b.due ? a.due < b.due : a.id < b.id;
  }

  private push(timer: Timer): void {
    timer.index = this.heap.length;
    this.heap.push(timer);
    this.up(timer.index);
  }

  private up(index: number): void {
    const { heap } = this;
    const timer = heap[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = heap[parent]!;
      if (!this.before(timer, above)) break;
      heap[index] = above;
      above.index = index;
      index = parent;
    }
    heap[index] = timer;
    timer.index = index;
  }

  private down(index: number): void {
    const { heap } = this;
    const timer = heap[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= heap.length) break;
      const right = left + 1;
      const child = right < heap.length && this.before(heap[right]!, heap[left]!) ? right : left;
      if (!this.before(heap[child]!, timer)) break;
      heap[index] = heap[child]!;
      heap[index]!.index = index;
      index = child;
    }
    heap[index] = timer;
    timer.index = index;
  }
}
