// A process that runs out of work while agents are alive: nothing could ever wake them, and the run awaited on them
// would stay unsettled while Node ends the process without a word. The runtime stops them instead, and warns.
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

async function stalled(mode: string) {
  const { stdout, stderr } = await run(process.execPath, ['--import', 'tsx', 'test/support/stallWorker.ts', mode], { cwd: root, timeout: 60_000 });
  return { result: JSON.parse(stdout.trim().split('\n').at(-1)!) as Record<string, unknown>, stderr };
}

describe('the process running out of work while agents are alive', { timeout: 90_000 }, () => {
  it('stops a resident whose run is awaited: the run completes with its answer, and a warning says why', async () => {
    const { result, stderr } = await stalled('resident');
    expect(result).toEqual({ status: 'completed', output: 'listening' });
    expect(stderr).toMatch(/\[TROUPE_STALLED\] Warning: troupe: the process ran out of work while an agent was still alive \(agent:listener:\S+\)/);
    expect(stderr).toMatch(/Stop resident agents yourself/);
  });

  it('lets a lead waiting on a resident it delegated to go on with the answer, once the resident is stopped', async () => {
    const { result, stderr } = await stalled('delegated');
    expect(result).toEqual({ status: 'completed', output: 'The listener said: listening' });
    expect(stderr).toMatch(/2 agents were still alive/);
  });

  it('watches a restarted agent too: its second attempt, waiting for messages, is stopped with its answer', async () => {
    const { result, stderr } = await stalled('restarted');
    expect(result).toEqual({ status: 'completed', output: 'listening again' });
    expect(stderr).toMatch(/TROUPE_STALLED/);
  });

  it('cancels an agent that waits on a simulated clock nothing moves, and says to use runUntilIdle', async () => {
    const { result, stderr } = await stalled('simulated');
    expect(result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(result.error).toMatch(/waited on the simulated clock; await runs alongside runtime\.runUntilIdle\(\)/);
    expect(stderr).toMatch(/on a simulated clock await runs alongside runtime\.runUntilIdle\(\)/);
  });

  it('says nothing when every agent ended, even without a shutdown', async () => {
    const { result, stderr } = await stalled('ended');
    expect(result).toEqual({ status: 'completed', output: 'done' });
    expect(stderr).not.toMatch(/TROUPE_STALLED/);
  });

  it('listens for the process end only while agents are live, so a runtime dropped without a shutdown is not held', async () => {
    const before = process.listenerCount('beforeExit');
    const listener = defineAgent({ name: 'listener', description: 'Listens.', systemPrompt: 'Listen.', resident: true });
    const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.' });
    const runtime = createRuntime({ model: new ScriptedModel(['done', 'listening']), agents: [worker, listener], projectAgentDir: false });
    await runtime.run('worker', 'Work.');
    expect(process.listenerCount('beforeExit')).toBe(before); // ended: not held
    const resident = runtime.spawn('listener', 'Listen.');
    expect(process.listenerCount('beforeExit')).toBe(before + 1);
    const other = createRuntime({ model: new ScriptedModel(['listening']), agents: [listener], projectAgentDir: false });
    other.spawn('listener', 'Listen.');
    expect(process.listenerCount('beforeExit')).toBe(before + 1); // one listener serves every runtime
    runtime.stop(resident.id);
    await resident.result;
    expect(process.listenerCount('beforeExit')).toBe(before + 1); // the other runtime still has a live agent
    await other.shutdown();
    expect(process.listenerCount('beforeExit')).toBe(before);
    await runtime.shutdown();
  });
});
