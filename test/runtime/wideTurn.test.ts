// A turn of many tool calls: every call races its batch's stop through one shared promise, and each call that reads
// its signal gets its own, so a wide turn adds no listener per call to any one AbortSignal (Node warns past ten).
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, defineTool } from 'troupe';
import { assignCall, callTools, toolCall } from 'troupe/testing';
import { z } from 'zod';
import { leader, scriptedPerAgent, worker } from '../stubs.js';

const CALLS = 200;

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

  it.each([1, CALLS])('%i at a time: tools that keep a listener on their signal get one each; no warning, every call answered', async (concurrency) => {
    const listening = defineTool({
      name: 'listening',
      description: 'Listens to its signal and answers.',
      parameters: z.object({ n: z.number() }),
      kind: 'read',
      execute: ({ n }, { signal }) => {
        signal.addEventListener('abort', () => {}); // kept: never removed
        return `answer ${n}`;
      },
    });
    const answered: string[] = [];
    const model = scriptedPerAgent({
      lead: [
        callTools(...Array.from({ length: CALLS }, (_, n) => toolCall('listening', { n }, `l${n}`))),
        (request) => {
          answered.push(...request.messages.filter((message) => message.role === 'tool').map((message) => message.content));
          return 'All answered.';
        },
      ],
    });
    const runtime = createRuntime({ model, agents: [leader('lead', { tools: ['listening'] })], tools: [listening], maxToolConcurrency: concurrency });
    const result = await runtime.run('lead', 'Ask everyone.');
    await warningsSettled();
    expect(result.status).toBe('completed');
    expect(answered).toEqual(Array.from({ length: CALLS }, (_, n) => `answer ${n}`));
    expect(warnings.map((warning) => warning.name)).toEqual([]);
    await runtime.shutdown();
  });
});
