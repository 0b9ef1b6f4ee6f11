// enableParallelExecution: false runs a turn's tool calls one at a time, in the model's order, even reads the planner
// would run side by side; an agent's definition may say otherwise for itself.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, sleep } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { scriptedPerAgent, simulatedClock } from '../stubs.js';

/** A read tool that takes `ms` of simulated time and logs when each call starts and ends. */
function timedRead(log: string[]) {
  return defineTool({
    name: 'look',
    description: 'Looks something up.',
    parameters: z.object({ what: z.string(), ms: z.number() }),
    kind: 'read',
    execute: async ({ what, ms }, { clock }) => {
      log.push(`start ${what}`);
      await sleep(clock, ms);
      log.push(`end ${what}`);
      return what;
    },
  });
}

const turn = callTools(toolCall('look', { what: 'a', ms: 300 }, 'a'), toolCall('look', { what: 'b', ms: 100 }, 'b'), toolCall('look', { what: 'c', ms: 200 }, 'c'));

async function run(options: { runtime?: boolean; agent?: boolean }) {
  const log: string[] = [];
  const clock = simulatedClock();
  const agent = defineAgent({
    name: 'reader',
    description: 'Reads.',
    systemPrompt: 'Read.',
    tools: ['look'],
    ...(options.agent === undefined ? {} : { enableParallelExecution: options.agent }),
  });
  const model = scriptedPerAgent({ reader: [turn, 'read'] });
  const runtime = createRuntime({
    model,
    agents: [agent],
    tools: [timedRead(log)],
    clock,
    ...(options.runtime === undefined ? {} : { enableParallelExecution: options.runtime }),
  });
  const handle = runtime.spawn('reader', 'Read three things.');
  await runtime.runUntilIdle();
  const result = await handle.result;
  await runtime.shutdown();
  return { log, result, took: clock.now() };
}

describe('enableParallelExecution', () => {
  it('lets reads run side by side by default', async () => {
    const { log, result } = await run({});
    expect(result.status).toBe('completed');
    expect(log.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
  });

  it('false on the runtime runs the calls one at a time in the model order, each answered', async () => {
    const { log, result } = await run({ runtime: false });
    expect(result.status).toBe('completed');
    expect(log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it("an agent's definition says otherwise for itself, either way", async () => {
    expect((await run({ runtime: false, agent: true })).log.slice(0, 3)).toEqual(['start a', 'start b', 'start c']);
    expect((await run({ agent: false })).log).toEqual(['start a', 'end a', 'start b', 'end b', 'start c', 'end c']);
  });

  it('refuses a value that is not true or false', () => {
    expect(() => createRuntime({ agents: [], enableParallelExecution: 'no' as unknown as boolean })).toThrow(/enableParallelExecution must be true or false/);
    expect(() => defineAgent({ name: 'x', description: 'X.', systemPrompt: 'X.', enableParallelExecution: 1 as unknown as boolean })).toThrow(/enableParallelExecution must be true or false/);
  });
});
