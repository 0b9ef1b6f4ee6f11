import { clockNow, type Clock, type TroupeClock } from '../clock.js';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
  /** The wrapped clock's timer (real time only; a simulated clock gets one wake-up timer for all). */
  inner: unknown;
  /** Position in the heap, or -1 once it fired or was cleared. */
  index: number;
}

/** The longest delay the host's `setTimeout` keeps (Node and browsers fire a longer one after 1 ms). */
const MAX_HOST_DELAY = 2 ** 31 - 1;

/** A clock that can be moved forward, such as XState's `SimulatedClock`. */
export interface SettableClock extends TroupeClock {
  set(time: number): void;
}

/**
 * The runtime's own clock: it wraps the clock the user gave (real time, or XState's `SimulatedClock`) and keeps its
 * own book of the timers set through it, so the runtime knows when the next one is due without reading the wrapped
 * clock's private fields. Every timer of the runtime goes through it: XState's delayed events, idle timeouts, tool
 * timeouts, scripted latencies and message waits.
 *
 * On a simulated clock it sets one timer of the wrapped clock at a time, for its earliest due timer, and fires its own
 * timers from there in order (due time, then the order they were set): XState's `SimulatedClock` sorts all of its
 * timers whenever time moves, which costs too much with thousands of agents waiting. Moving the wrapped clock by hand
 * (`clock.set(t)`) still fires everything due by `t`.
 */
export class RuntimeClock implements TroupeClock {
  private readonly heap: Timer[] = [];
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;
  /** Simulated time: the wrapped clock's one timer, and when it is due. */
  private wake: { handle: unknown; due: number } | undefined;
  /** True for a simulated wrapped clock. */
  readonly simulated: boolean;

  constructor(
    /** The clock that really keeps time. */
    readonly inner: Clock,
  ) {
    this.simulated = typeof (inner as Partial<SettableClock>).set === 'function';
  }

  /** Milliseconds on the wrapped clock. */
  now(): number {
    return clockNow(this.inner);
  }

  setTimeout(fn: (...args: any[]) => void, ms: number): number {
    const id = this.nextId++;
    const delay = ms > 0 ? ms : 0; // as the host's timers do, a negative or NaN delay is none (NaN would break the heap)
    const timer: Timer = { id, due: this.now() + delay, fn, inner: undefined, index: -1 };
    this.timers.set(id, timer);
    this.push(timer);
    if (this.simulated) this.arm();
    else this.setHostTimer(timer, delay);
    return id;
  }

  clearTimeout(id: number): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    this.remove(timer);
    if (this.simulated) this.arm(); // no wake-up timer is left for timers that were all cleared
    else this.inner.clearTimeout(timer.inner);
  }

  /**
   * Real time: one timer of the wrapped clock. The host fires a delay longer than about 24.8 days (2^31 − 1 ms) at
   * once, so a longer one is set in steps.
   */
  private setHostTimer(timer: Timer, delay: number): void {
    timer.inner = this.inner.setTimeout(() => {
      if (delay > MAX_HOST_DELAY) return this.setHostTimer(timer, timer.due - this.now());
      this.remove(timer);
      timer.fn();
    }, Math.min(delay, MAX_HOST_DELAY));
  }

  /** Simulated time: makes the wrapped clock's one timer due with the earliest of ours. */
  private arm(): void {
    const first = this.heap[0];
    if (this.wake && (!first || this.wake.due !== first.due)) {
      this.inner.clearTimeout(this.wake.handle);
      this.wake = undefined;
    }
    if (!first || this.wake) return;
    const due = first.due;
    this.wake = { due, handle: this.inner.setTimeout(() => this.fireDue(), Math.max(0, due - this.now())) };
  }

  /** Simulated time: fires every timer due by now, earliest first, then arms the next. */
  private fireDue(): void {
    this.wake = undefined;
    for (let first = this.heap[0]; first && first.due <= this.now(); first = this.heap[0]) {
      this.remove(first);
      first.fn();
    }
    this.arm();
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
