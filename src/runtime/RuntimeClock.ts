import { clockNow, type Clock, type TroupeClock } from '../clock.js';

/** What a timer is for, as `runUntilIdle` sees it. */
export type TimerKind =
  /** Work that is due (a model's latency, a message wait, a tool timeout): simulated time may jump to it. */
  | 'work'
  /** A limit that fires only if nothing happens first (an idle timeout): time jumps to it only when nothing is running. */
  | 'watchdog'
  /** Housekeeping (evicting an idle pooled agent): never a reason to wait, and it does not keep a process alive. */
  | 'background';

interface Timer {
  id: number;
  due: number;
  fn: () => void;
  kind: TimerKind;
  /** Its position in the heap of all timers, and in the heap of work and watchdog timers (-1: not there). */
  all: number;
  fore: number;
}

/** The longest delay the host's `setTimeout` keeps (Node and browsers fire a longer one after 1 ms). */
const MAX_HOST_DELAY = 2 ** 31 - 1;

/** Every runtime clock, by the clock it wraps (see {@link RuntimeClock.on}). */
const wrappers = new WeakMap<Clock, RuntimeClock[]>();

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
 * It sets one timer of the wrapped clock at a time (its wake-up), for its earliest due timer, and fires its own timers
 * from there in order (due time, then the order they were set). On a simulated clock: XState's `SimulatedClock` sorts
 * all of its timers whenever time moves, which costs too much with thousands of agents waiting; moving the wrapped clock
 * by hand (`clock.set(t)`) still fires everything due by `t`. In real time: a host timer per agent turn (its idle
 * timeout, set and cleared) cost more than the rest of the timer's book; a timer cleared before the wake-up leaves it
 * set (it finds nothing due and sets the next), and the wake-up keeps the process alive only while a work or watchdog
 * timer is set.
 */
export class RuntimeClock implements TroupeClock {
  /** Every timer, earliest first: the order they fire in. */
  private readonly heap = new TimerHeap('all');
  /** The work and watchdog timers: what `runUntilIdle` waits for (background timers are not). */
  private readonly foreground = new TimerHeap('fore');
  private readonly timers = new Map<number, Timer>();
  private nextId = 1;
  /** Simulated time: the wrapped clock's one timer, and when it is due. */
  private wake: { handle: unknown; due: number } | undefined;
  /** Real-time work (see {@link inRealTime}) started and not yet given back: simulated time stands still meanwhile. */
  private realTimeCalls = 0;
  /** The last real-time work asked for, settled two turns after it was given back: the next starts after it. */
  private realTimeTail: Promise<unknown> = Promise.resolve();
  /** True for a simulated wrapped clock. */
  readonly simulated: boolean;
  /**
   * The agents of this clock's runtime that wait without a timer (parked), each with the state it waits in and what
   * for: given by the runtime, so `advanceUntilSettled` can name them in a `DeadlockError`.
   */
  waitingAgents?: () => { id: string; state: string; waitsFor?: string }[];

  constructor(
    /** The clock that really keeps time. */
    readonly inner: Clock,
  ) {
    this.simulated = typeof (inner as Partial<SettableClock>).set === 'function';
    const known = wrappers.get(inner);
    if (known) known.push(this);
    else wrappers.set(inner, [this]);
  }

  /**
   * The runtime clocks made on `inner` (one per runtime that was given it): what `advanceUntilSettled` asks for the
   * next timer, so it never reads the private timer table of XState's `SimulatedClock`.
   */
  static on(inner: Clock): readonly RuntimeClock[] {
    return wrappers.get(inner) ?? [];
  }

  /** Leaves the list of {@link RuntimeClock.on} (its runtime has shut down), so a long-lived clock does not keep it. */
  detach(): void {
    const known = wrappers.get(this.inner);
    const at = known?.indexOf(this) ?? -1;
    if (at >= 0) known!.splice(at, 1);
  }

  /** Milliseconds on the wrapped clock. */
  now(): number {
    return clockNow(this.inner);
  }

  setTimeout(fn: (...args: any[]) => void, ms: number, kind: TimerKind = 'work'): number {
    const id = this.nextId++;
    // As the host's timers do: a negative or NaN delay is none (NaN would break the heap), and a text is read as its
    // number ('100' would otherwise be added to the time as text).
    const delay = ms > 0 ? +ms : 0;
    const timer: Timer = { id, due: this.now() + delay, fn, kind, all: -1, fore: -1 };
    this.timers.set(id, timer);
    this.heap.push(timer);
    if (kind !== 'background') this.foreground.push(timer);
    if (this.simulated) this.arm();
    else this.wakeBy(timer);
    return id;
  }

  clearTimeout(id: number): void {
    const timer = this.timers.get(id);
    if (!timer) return;
    this.remove(timer);
    if (this.simulated) this.arm(); // no wake-up timer is left for timers that were all cleared
    else this.idle();
  }

  /** Simulated time: makes the wrapped clock's one timer due with the earliest of ours. */
  private arm(): void {
    const first = this.heap.first();
    if (this.wake && (!first || this.wake.due !== first.due)) {
      this.inner.clearTimeout(this.wake.handle);
      this.wake = undefined;
    }
    if (!first || this.wake) return;
    const due = first.due;
    this.wake = { due, handle: this.inner.setTimeout(() => this.fireDue(), Math.max(0, due - this.now())) };
  }

  /** Real time: the wake-up comes no later than `timer` (and keeps the process alive if `timer` must). */
  private wakeBy(timer: Timer): void {
    const { wake } = this;
    if (wake && wake.due <= timer.due) {
      if (timer.kind !== 'background') hold(wake.handle, true);
      return;
    }
    if (wake) this.inner.clearTimeout(wake.handle);
    this.setWake(timer.due);
  }

  /**
   * Real time: a wake-up for `due`, holding the process while a work or watchdog timer is set. The host fires a delay
   * longer than about 24.8 days (2^31 − 1 ms) at once, so a longer one wakes up early, finds nothing due, and goes on.
   */
  private setWake(due: number): void {
    const delay = Math.min(Math.max(0, due - this.now()), MAX_HOST_DELAY);
    const handle = this.inner.setTimeout(() => this.fireDue(), delay);
    this.wake = { due: this.now() + delay, handle };
    if (this.foreground.size === 0) hold(handle, false);
  }

  /** Real time, after a timer was cleared: no wake-up without timers, and none that holds the process for background ones. */
  private idle(): void {
    const { wake } = this;
    if (!wake) return;
    if (this.heap.size === 0) {
      this.inner.clearTimeout(wake.handle);
      this.wake = undefined;
    } else if (this.foreground.size === 0) {
      hold(wake.handle, false);
    }
  }

  /**
   * Fires every timer due by now, earliest first, then sets the wake-up for the next. A timer that one of them sets meanwhile
   * (an idle timer set again for the time left to its moved deadline) sets a wake-up for itself, which may be later than
   * a timer already waiting: the wake-up is then made the earliest's.
   */
  private fireDue(): void {
    this.wake = undefined;
    try {
      for (let first = this.heap.first(); first && first.due <= this.now(); first = this.heap.first()) {
        this.remove(first);
        first.fn();
      }
    } finally {
      if (this.simulated) this.arm();
      else this.wakeForFirst();
    }
  }

  /** Real time, after firing: a wake-up no later than the earliest timer (none without timers, see `idle`). */
  private wakeForFirst(): void {
    const first = this.heap.first();
    const { wake } = this;
    if (first && (!wake || wake.due > first.due)) {
      if (wake) this.inner.clearTimeout(wake.handle);
      this.setWake(first.due);
    } else {
      this.idle();
    }
  }

  /** How many timers are set (background ones included). */
  /** How many timers were ever set: it grows with every step of work that sets one (a turn, a wait, a renewal). */
  get timersSet(): number {
    return this.nextId - 1;
  }

  get pending(): number {
    return this.timers.size;
  }

  /** When the earliest work or watchdog timer is due, or undefined when none is set (background ones do not count). */
  nextTimerAt(): number | undefined {
    return this.foreground.first()?.due;
  }

  /** When the earliest timer is due, background ones included, or undefined when none is set. */
  earliestDue(): number | undefined {
    return this.heap.first()?.due;
  }

  /** What the earliest work or watchdog timer is for. */
  nextTimerKind(): TimerKind | undefined {
    return this.foreground.first()?.kind;
  }

  /**
   * Runs work that takes real time outside the simulation and never waits on this clock (a file tool's reads and
   * writes). On a simulated clock it is counted in {@link realTimeWork} until it is given back, so `runUntilIdle` and
   * `advanceUntilSettled` do not move simulated time meanwhile: it takes no simulated time, however long the disk
   * takes. Such work runs one at a time, in the order it was asked for: each starts two turns of the event loop after
   * the one before it was given back, and is given back two turns after it ends (as a simulation settles an instant:
   * the other work of that instant comes first). So two agents' calls in one instant never interleave on the disk (a
   * listing does not see half of a write), and what follows each happens in the same order whatever the disk's timing.
   * On a real clock it just runs.
   */
  inRealTime<T>(work: () => T | Promise<T>): Promise<T> {
    if (!this.simulated) return Promise.resolve().then(work);
    this.realTimeCalls += 1;
    const given = this.realTimeTail.then(work).then(
      (value) => afterTwoTurns().then(() => this.realTimeEnded(value)),
      (error: unknown) => afterTwoTurns().then(() => this.realTimeEnded(Promise.reject(error) as Promise<T>)),
    );
    this.realTimeTail = given.then(afterTwoTurns, afterTwoTurns);
    return given;
  }

  /** One piece of real-time work is given back: `outcome` (its value, or a rejected promise of its error). */
  private realTimeEnded<T>(outcome: T | Promise<T>): T | Promise<T> {
    this.realTimeCalls -= 1;
    return outcome;
  }

  /** True while work started with {@link inRealTime} runs or waits to be given back: simulated time must not move. */
  get realTimeWork(): boolean {
    return this.realTimeCalls > 0;
  }

  /** Moves a simulated clock to `time` (never backwards), firing the timers due by then. */
  advanceTo(time: number): void {
    const inner = this.inner as Partial<SettableClock>;
    if (typeof inner.set !== 'function') throw new Error('The runtime clock is real time; only a simulated clock can be moved.');
    inner.set(Math.max(time, this.now()));
  }

  private remove(timer: Timer): void {
    if (timer.all < 0) return;
    this.timers.delete(timer.id);
    this.heap.remove(timer);
    if (timer.fore >= 0) this.foreground.remove(timer);
  }
}

/** Resolves after two turns of the event loop (promise callbacks and anything queued for the loop run first). */
function afterTwoTurns(): Promise<void> {
  return new Promise<void>((resolve) => setImmediate(resolve)).then(() => new Promise<void>((resolve) => setImmediate(resolve)));
}

/** A binary heap of timers, earliest first (then in the order they were set), that keeps each timer's position. */
class TimerHeap {
  private readonly items: Timer[] = [];

  constructor(private readonly slot: 'all' | 'fore') {}

  first(): Timer | undefined {
    return this.items[0];
  }

  get size(): number {
    return this.items.length;
  }

  push(timer: Timer): void {
    timer[this.slot] = this.items.length;
    this.items.push(timer);
    this.up(timer[this.slot]);
  }

  remove(timer: Timer): void {
    const index = timer[this.slot];
    if (index < 0) return;
    const last = this.items.pop()!;
    timer[this.slot] = -1;
    if (last === timer) return;
    this.items[index] = last;
    last[this.slot] = index;
    this.down(index);
    this.up(last[this.slot]);
  }

  private before(a: Timer, b: Timer): boolean {
    return a.due !== b.due ? a.due < b.due : a.id < b.id;
  }

  private up(index: number): void {
    const { items, slot } = this;
    const timer = items[index]!;
    while (index > 0) {
      const parent = (index - 1) >> 1;
      const above = items[parent]!;
      if (!this.before(timer, above)) break;
      items[index] = above;
      above[slot] = index;
      index = parent;
    }
    items[index] = timer;
    timer[slot] = index;
  }

  private down(index: number): void {
    const { items, slot } = this;
    const timer = items[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= items.length) break;
      const right = left + 1;
      const child = right < items.length && this.before(items[right]!, items[left]!) ? right : left;
      if (!this.before(items[child]!, timer)) break;
      items[index] = items[child]!;
      items[index]![slot] = index;
      index = child;
    }
    items[index] = timer;
    timer[slot] = index;
  }
}

/** Lets a host timer keep the process alive, or not (a browser's timer, a number, has no say in it). */
function hold(handle: unknown, alive: boolean): void {
  const timer = handle as { ref?: () => void; unref?: () => void } | undefined;
  if (alive) timer?.ref?.();
  else timer?.unref?.();
}
