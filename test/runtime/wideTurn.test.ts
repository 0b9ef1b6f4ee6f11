// A turn of many tool calls: every call races its batch's stop through one shared promise, so a wide turn adds no
// listener per call to the batch's AbortSignal (Node warns past ten listeners on one signal).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, defineTool } from 'troupe';
import { assignCall, callTools, toolCall } from 'troupe/testing';
import { z } from 'zod';
import { leader, scriptedPerAgent, worker } from '../stubs.js';

const CALLS = 50;

describe('a turn of many tool calls', () => {
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  beforeEach(() => {
    warnings.length = 0;
    process.on('warning', onWarning);
  });
  afterEach(() => {
    process.off('warning', onWarning);
  });

  /** Waits until warnings Node queued with process.emitWarning (on the next ticks) have been emitted. */
  const warningsSettled = () => new Promise((resolve) => setImmediate(resolve));

  it(`${CALLS} assign_task calls in one turn add no listener per call: no warning, every task answered`, async () => {
    const model = scriptedPerAgent({
      lead: [callTools(...Array.from({ length: CALLS }, (_, index) => assignCall('worker', `Part ${index}.`, { id: `a${index}` }))), 'All done.'],
      worker: ['part done'], // each worker instance answers once
    });
    const runtime = createRuntime({ model, agents: [leader(), worker()], maxParallel: CALLS + 1, maxToolConcurrency: CALLS });
    const result = await runtime.run('lead', 'Split the work.');
    await warningsSettled();
    expect(result.status).toBe('completed');
    expect(runtime.metrics().total.agentsCompleted).toBe(CALLS + 1);
    expect(warnings.map((warning) => warning.name)).toEqual([]);
    await runtime.shutdown();
  });

  it(`${CALLS} calls of a tool with a time limit in one turn: no warning, and stopping the agent still aborts each call`, async () => {
    const aborted: string[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Waits until aborted.',
      parameters: z.object({ n: z.number() }),
      kind: 'read',
      timeoutMs: 60_000,
      execute: ({ n }, { signal }) =>
        new Promise<never>((_resolve, reject) =>
          signal.addEventListener('abort', () => {
            aborted.push(`call ${n}`);
            reject(signal.reason);
          }),
        ),
    });
    const model = scriptedPerAgent({ lead: [callTools(...Array.from({ length: CALLS }, (_, n) => toolCall('slow', { n }, `s${n}`)))] });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['slow'] })], tools: [slow], maxToolConcurrency: CALLS });
    const lead = runtime.spawn('lead', 'Wait a lot.');
    await new Promise((resolve) => setImmediate(resolve));
    expect(runtime.record(lead.id)?.state).toBe('running');
    runtime.stop(lead.id);
    const result = await lead.result;
    await warningsSettled();
    expect(result.reason).toBe('cancelled');
    expect(aborted).toHaveLength(CALLS);
    expect(warnings.map((warning) => warning.name)).toEqual([]);
    await runtime.shutdown();
  });
});
