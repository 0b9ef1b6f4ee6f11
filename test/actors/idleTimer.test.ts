// An agent's idle watchdog on its own: started, stopped and started again on XState's SimulatedClock, counting what
// reaches the clock, with a tiny actor that records the IDLE events it gets.
import { describe, expect, it } from 'vitest';
import { assign, createActor, setup, SimulatedClock } from 'xstate';
import { renewIdleTimer, startIdleTimer, stopIdleTimer } from '../../src/actors/idleTimer.js';
import { RuntimeClock } from '../../src/runtime/RuntimeClock.js';
import { ManualClock } from '../support/manualClock.js';

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

function agentActor() {
  const machine = setup({ types: { context: {} as { idles: number } } }).createMachine({
    context: { idles: 0 },
    on: { IDLE: { actions: assign({ idles: ({ context }) => context.idles + 1 }) } },
  });
  return createActor(machine).start();
}

/** A clock (simulated unless given) and an agent whose idle timer of 1,000 ms was just started on it. */
function armed<C extends CountingClock | ManualClock | RuntimeClock = CountingClock>(clock: C = new CountingClock() as C) {
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
    clock.advance(600); // past the first deadline (1,000): set again for the 500 left then
    expect(clock.sets).toBe(2);
    stopIdleTimer(agent, clock);
    await aStep();
    expect({ sets: clock.sets, clears: clock.clears }).toEqual({ sets: 2, clears: 1 });
    clock.advance(1_000);
    expect(idles()).toBe(0);
  });

  it("on the runtime's clock in real time, moves its deadline without delaying a timer due before it", () => {
    const host = new ManualClock();
    const clock = new RuntimeClock(host);
    const { agent, idles } = armed(clock);
    host.advance(600);
    renewIdleTimer(agent, clock); // deadline 1,600; its clock timer still due at 1,000
    const toolTimedOut: number[] = [];
    clock.setTimeout(() => toolTimedOut.push(clock.now()), 450); // due at 1,050
    host.advance(1_000 - 600); // the stale deadline: set again for the 600 left
    expect(idles()).toBe(0);
    host.advance(50);
    expect(toolTimedOut).toEqual([1_050]);
    host.advance(549);
    expect(idles()).toBe(0);
    host.advance(1);
    expect(idles()).toBe(1);
  });

  it("on the runtime's clock over a simulation, is set for its new deadline at once", async () => {
    const clock = new RuntimeClock(new SimulatedClock());
    const { agent, idles } = armed(clock);
    clock.advanceTo(600);
    renewIdleTimer(agent, clock);
    await aStep();
    // A simulation jumps to the next timer when nothing else is due: it must be the deadline, not the stale 1,000.
    expect(clock.nextTimerAt()).toBe(1_600);
    expect(clock.pending).toBe(1);
    clock.advanceTo(1_600);
    expect(idles()).toBe(1);
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
