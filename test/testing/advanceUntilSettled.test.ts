// advanceUntilSettled: simulated time for a test's promise, with real time for work that runs in real time (a file),
// and typed errors when it can go no further.
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createRuntime, DeadlockError, defineAgent, defineTool, TimeLimitError } from 'troupe';
import { advanceUntilSettled, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { resident } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const folder = eachTestTempDir();

describe('advanceUntilSettled', () => {
  it('lets a tool that reads a real file end before it jumps to the idle timeout', async () => {
    const file = join(folder.path, 'notes.txt');
    await writeFile(file, 'the notes');
    // Read in many small pieces: the read takes several turns of the event loop, with no timer set meanwhile.
    const read = defineTool({
      name: 'read_notes',
      description: 'Reads the notes.',
      parameters: z.object({}),
      kind: 'read',
      execute: async () => {
        let text = '';
        for (let i = 0; i < 20; i++) text = await readFile(file, 'utf8');
        return text;
      },
    });
    const reader = defineAgent({ name: 'reader', description: 'Reads.', systemPrompt: 'Read.', tools: [read] });
    const clock = new SimulatedClock();
    const model = new ScriptedModel([callTools(toolCall('read_notes', {})), 'Read it.'], { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [reader], clock, idleTimeoutMs: 60_000, projectAgentDir: false });

    const result = await advanceUntilSettled(clock, runtime.run('reader', 'Read the notes.'));

    expect(result).toMatchObject({ status: 'completed', output: 'Read it.' });
    expect(clock.now()).toBe(2_000); // the two model latencies, not the idle timeout
    await runtime.shutdown();
  });

  it('rejects with a DeadlockError that names the agents that wait, when nothing is left to wait for', async () => {
    const clock = new SimulatedClock();
    const model = new ScriptedModel([callTools(toolCall('wait_for_messages', { from: 'bob' }, 'w'))]);
    const runtime = createRuntime({ model, agents: [resident('alice', ['wait_for_messages'])], clock, projectAgentDir: false });
    const alice = runtime.spawn('alice', 'Wait for bob.');

    const error = await advanceUntilSettled(clock, alice.result).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(DeadlockError);
    expect(error).toMatchObject({ waiting: [{ id: alice.id, state: 'running.waiting', waitsFor: 'a message from bob' }] });
    await runtime.shutdown();
  });

  it('rejects with a TimeLimitError once simulated time passes its limit', async () => {
    const clock = new SimulatedClock();
    const model = new ScriptedModel(() => callTools(toolCall('wait_for_messages', { timeout_ms: 60_000 })), { record: false });
    const runtime = createRuntime({ model, agents: [resident('ticker', ['wait_for_messages'])], clock, maxTurns: 1_000, projectAgentDir: false });
    const ticker = runtime.spawn('ticker', 'Tick every minute.');

    const error = await advanceUntilSettled(clock, ticker.result, { limitMs: 600_000 }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(TimeLimitError);
    expect(error).toMatchObject({ limitMs: 600_000 });
    await runtime.shutdown();
  });
});
