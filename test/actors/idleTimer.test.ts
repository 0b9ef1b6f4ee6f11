// An agent's idle watchdog on its own: started, stopped and started again on XState's SimulatedClock, counting what
// reaches the clock, with a tiny actor that records the IDLE events it gets.
import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, SimulatedClock } from 'xstate';
import { renewIdleTimer, startIdleTimer, stopIdleTimer } from '../../src/actors/idleTimer.js';

/** A simulated clock that counts the timers set and cleared on it. */
class CountingClock extends SimulatedClock {
  sets = 0;
  clears = 0;
  override setTimeout(fn: (...args: unknown[]) => void, ms: number): number {
    this.sets += 1;
    return super.setTimeout(fn, ms) as number;
  }
  override clearTimeout(id: number): void {
    this.clears += 1;
    super.clearTimeout(id);
  }
}

/**
 * A clock that keeps time as the real one does, for a simulation's purposes: it has no `set`, so the idle timer treats
 * it as real time, but the test moves it by hand (`advance`) and counts the timers set and cleared on it.
 */
class ManualClock {
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
    this.timers.set(id, { due: this.time + ms, fn });
    return id;
  }
  clearTimeout(id: number): void {
    this.clears += 1;
    this.timers.delete(id);
  }
  /** Moves time on by `ms`, firing each timer due meanwhile (earliest first) at its own time. */
  advance(ms: number): void {
    const end = this.time + ms;
    for (;;) {
      const due = [...this.timers].filter(([, timer]) => timer.due <= end).sort(([a, x], [b, y]) => x.due - y.due || a - b)[0];
      if (due === undefined) break;
      this.timers.delete(due[0]);
      this.time = due[1].due;
      due[1].fn();
    }
    this.time = end;
  }
}

function agentActor() {
  const machine = setup({ types: { context: {} as { idles: number } } }).createMachine({
    context: { idles: 0 },
    on: { IDLE: { actions: assign({ idles: ({ context }) => context.idles + 1 }) } },
  });
  return createActor(machine).start();
}

/** A clock (simulated unless given) and an agent whose idle timer of 1,000 ms was just started on it. */
function armed<C extends CountingClock | ManualClock = CountingClock>(clock: C = new CountingClock() as C) {
  const agent = agentActor();
  startIdleTimer(agent, clock, 1_000);
  const idles = () => agent.getSnapshot().context.idles;
  return { clock, agent, idles };
}

const aStep = () => new Promise<void>((resolve) => queueMicrotask(resolve));

describe('the idle watchdog', () => {
  it('sends IDLE once its time passes, and not before', () => {
    const { clock, idles } = armed();
    clock.increment(999);
    expect(idles()).toBe(0);
    clock.increment(1);
    expect(idles()).toBe(1);
    clock.increment(5_000);
    expect(idles()).toBe(1);
  });

  it('stopped, sends nothing, and its timer is cleared from the clock a step later', async () => {
    const { clock, agent, idles } = armed();
    stopIdleTimer(agent, clock);
    expect(clock.clears).toBe(0);
    await aStep();
    expect(clock.clears).toBe(1);
    clock.increment(2_000);
    expect(idles()).toBe(0);
  });

  it('stopped and started again in the same step at the same time keeps its timer and its deadline', async () => {
    const { clock, agent, idles } = armed();
    // thinking → acting → thinking in one step: the deadline is the same, so the clock is not touched again
    stopIdleTimer(agent, clock);
    startIdleTimer(agent, clock, 1_000);
    stopIdleTimer(agent, clock);
    startIdleTimer(agent, clock, 1_000);
    await aStep();
    expect({ sets: clock.sets, clears: clock.clears }).toEqual({ sets: 1, clears: 0 });
    clock.increment(1_000);
    expect(idles()).toBe(1);
  });

  it('started again later, or for another length, counts from the new start', async () => {
    const { clock, agent, idles } = armed();
    clock.increment(600);
    stopIdleTimer(agent, clock);
    startIdleTimer(agent, clock, 1_000);
    await aStep();
    clock.increment(600); // 1,200 after the first start, 600 after the second
    expect(idles()).toBe(0);
    startIdleTimer(agent, clock, 100); // a new length at the same time: a new deadline
    clock.increment(100);
    expect(idles()).toBe(1);
    clock.increment(1_000);
    expect(idles()).toBe(1);
    // A simulated clock gets each new deadline at once: a simulation never jumps to a stale one.
    expect(clock.clears).toBe(2);
  });

  it('on the real clock, started again later with the same length only moves its deadline: the clock timer is kept, then set for the time left', async () => {
    const { clock, agent, idles } = armed(new ManualClock());
    clock.advance(600);
    renewIdleTimer(agent, clock); // a tool call of a batch ended
    clock.advance(300);
    stopIdleTimer(agent, clock); // thinking → acting, 900 after the first start
    startIdleTimer(agent, clock, 1_000);
    await aStep();
    expect({ sets: clock.sets, clears: clock.clears }).toEqual({ sets: 1, clears: 0 });
    clock.advance(100); // the first deadline: set again for the 900 left
    expect(idles()).toBe(0);
    expect({ sets: clock.sets, clears: clock.clears }).toEqual({ sets: 2, clears: 0 });
    clock.advance(899);
    expect(idles()).toBe(0);
    clock.advance(1);
    expect(idles()).toBe(1);
  });

  it('on the real clock, stopped for good after its deadline moved sends nothing, and its timer is cleared', async () => {
    const { clock, agent, idles } = armed(new ManualClock());
    clock.advance(500);
    renewIdleTimer(agent, clock);
    clock.advance(600); // past the first deadline: set again for the 400 left
    expect(clock.sets).toBe(2);
    stopIdleTimer(agent, clock);
    await aStep();
    expect({ sets: clock.sets, clears: clock.clears }).toEqual({ sets: 2, clears: 1 });
    clock.advance(1_000);
    expect(idles()).toBe(0);
  });

  it('that comes due after a stop, before the clock hears of the stop, sends nothing', () => {
    const { clock, agent, idles } = armed();
    stopIdleTimer(agent, clock);
    clock.increment(1_000); // in the same step as the stop
    expect(idles()).toBe(0);
  });

  it('renewed by progress counts from the progress; renewing a stopped timer starts nothing', async () => {
    const { clock, agent, idles } = armed();
    clock.increment(800);
    renewIdleTimer(agent, clock);
    clock.increment(800);
    expect(idles()).toBe(0);
    clock.increment(200);
    expect(idles()).toBe(1);

    const other = agentActor();
    startIdleTimer(other, clock, 1_000);
    stopIdleTimer(other, clock);
    clock.increment(10);
    renewIdleTimer(other, clock);
    await aStep();
    clock.increment(5_000);
    expect(other.getSnapshot().context.idles).toBe(0);
  });
});
