// TestClock: a SimulatedClock whose timers advanceUntilSettled sees, also those set on it directly by a test or a
// tool (not through a runtime), which a plain SimulatedClock keeps private.
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, sleep } from 'troupe';
import { advanceUntilSettled, callTools, nextTimerAt, ScriptedModel, TestClock, toolCall } from 'troupe/testing';
import { scripted } from '../stubs.js';

/** A runtime whose one agent calls a tool that waits a simulated second on `clock` itself (not `context.clock`). */
function waitingOn(clock: SimulatedClock, model = scripted([callTools(toolCall('pause', {})), 'Rested.'])) {
  const pause = defineTool({
    name: 'pause',
    description: 'Waits a second.',
    parameters: z.object({}),
    kind: 'read',
    execute: async () => {
      await sleep(clock, 1_000);
      return 'rested';
    },
  });
  const agent = defineAgent({ name: 'napper', description: 'Naps.', systemPrompt: 'Nap.', tools: [pause] });
  return createRuntime({ model, agents: [agent], clock, idleTimeoutMs: 1_000_000, projectAgentDir: false });
}

describe('TestClock', () => {
  it('knows its next timer, also one set on it directly, and forgets it once fired or cleared', () => {
    const clock = new TestClock();
    const fired: number[] = [];
    clock.setTimeout(() => fired.push(clock.now()), 500);
    const cleared = clock.setTimeout(() => fired.push(-1), 200);
    expect(nextTimerAt(clock)).toBe(200);
    clock.clearTimeout(cleared);
    expect(nextTimerAt(clock)).toBe(500);
    clock.set(500);
    expect(fired).toEqual([500]);
    expect(nextTimerAt(clock)).toBeUndefined();
  });

  it('lets advanceUntilSettled jump to a tool that sleeps on the clock directly', async () => {
    const clock = new TestClock();
    const runtime = waitingOn(clock);
    const result = await advanceUntilSettled(clock, runtime.run('napper', 'Nap.'));
    expect(result).toMatchObject({ status: 'completed', output: 'Rested.' });
    expect(clock.now()).toBe(1_000);
    await runtime.shutdown();
  });

  it('on a plain SimulatedClock the same sleep is not seen: time jumps to the idle timeout instead', async () => {
    const clock = new SimulatedClock();
    // The agent fails before its second step, so this script is not checked for unused steps.
    const runtime = waitingOn(clock, new ScriptedModel([callTools(toolCall('pause', {})), 'Rested.']));
    const result = await advanceUntilSettled(clock, runtime.run('napper', 'Nap.'));
    // The idle timeout (a runtime timer) was the only timer advanceUntilSettled could see; passing it fired the
    // sleep too, but only after the agent had already failed.
    expect(result).toMatchObject({ status: 'failed', reason: 'timeout' });
    await runtime.shutdown();
  });
});
