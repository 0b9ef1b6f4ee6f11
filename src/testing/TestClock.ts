import { SimulatedClock } from 'xstate';

/**
 * XState's `SimulatedClock` that also keeps its own book of the timers set on it, so `nextTimerAt` and
 * `advanceUntilSettled` see every one of them: those a runtime sets and those a test or a tool sets on the clock
 * directly (`sleep(clock, ms)`). A plain `SimulatedClock` keeps its timers in a private field, which troupe does not
 * read; on one, only the runtime's own timers are seen.
 */
export class TestClock extends SimulatedClock {
  /** Due times of the timers set and not yet fired or cleared, by id. */
  readonly #due = new Map<number, number>();

  override setTimeout(fn: (...args: any[]) => void, timeout: number): number {
    let id = -1;
    id = super.setTimeout(() => {
      this.#due.delete(id);
      fn();
    }, timeout);
    this.#due.set(id, this.now() + Math.max(0, timeout));
    return id;
  }

  override clearTimeout(id: number): void {
    this.#due.delete(id);
    super.clearTimeout(id);
  }

  /** When the earliest timer set on this clock is due, or undefined when none is. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const due of this.#due.values()) if (next === undefined || due < next) next = due;
    return next;
  }
}
