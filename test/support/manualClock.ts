/**
 * A clock the test moves by hand that reads as real time: it has no `set` (which is how the runtime and its idle timers
 * tell a simulation), so they take their real-time paths, while the test decides when each timer fires (`advance`) and
 * counts the timers set and cleared on it. Not the machine's clock: an object given where a clock is asked for.
 */
export class ManualClock {
  sets = 0;
  clears = 0;
  private time = 0;
  private nextId = 1;
  private readonly timers = new Map<number, { due: number; fn: () => void }>();

  now(): number {
    return this.time;
  }

  setTimeout(fn: () => void, ms: number): number {
    this.sets += 1;
    const id = this.nextId++;
    this.timers.set(id, { due: this.time + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(id: number): void {
    this.clears += 1;
    this.timers.delete(id);
  }

  /** When its earliest timer is due, or undefined without timers. */
  nextDue(): number | undefined {
    let next: number | undefined;
    for (const { due } of this.timers.values()) if (next === undefined || due < next) next = due;
    return next;
  }

  /** Moves time on by `ms`, firing each timer due meanwhile (earliest first, then in the order set) at its own time. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      let found: [number, { due: number; fn: () => void }] | undefined;
      for (const entry of this.timers) if (entry[1].due <= end && (found === undefined || entry[1].due < found[1].due)) found = entry;
      if (found === undefined) break;
      this.timers.delete(found[0]);
      this.time = found[1].due;
      found[1].fn();
    }
    this.time = end;
  }
}
