// runUntilIdle and what is left behind.
import { describe, expect, it } from 'vitest';
import { createRuntime } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { resident, scripted, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

const immediate = () => new Promise<void>((resolve) => setImmediate(resolve));

describe('runUntilIdle', () => {
  it('does not report a deadlock for an agent that ended while it made sure the run was idle', async () => {
    const clock = simulatedClock();
    const model = scripted(['ready']);
    const runtime = createRuntime({ model, agents: [resident('echo')], clock, projectAgentDir: false });
    const echo = runtime.spawn('echo', 'Wait for mail.');
    await runtime.runUntilIdle(); // echo answered and waits for messages
    const idle = runtime.runUntilIdle();
    // Code stops the resident while runUntilIdle settles its last instant (after its first look, before its report).
    await immediate();
    await immediate();
    await immediate();
    runtime.stop(echo.id);
    await expect(idle).resolves.toMatchObject({ waiting: [] });
    expect(await echo.result).toMatchObject({ status: 'completed', output: 'ready' });
    await runtime.shutdown();
  });
});

describe('waits that nothing can end', () => {
  it('runtime.request to an agent that ended without replying settles (it does not wait for ever)', async () => {
    const clock = simulatedClock();
    const model = scripted(['I read it but will not reply.']);
    const runtime = createRuntime({ model, agents: [worker('mute')], clock, projectAgentDir: false });
    const mute = runtime.spawn('mute', 'Read your mail.');
    const reply = runtime.request(mute.id, 'Are you there?');
    let settled = false;
    reply.then(() => (settled = true), () => (settled = true));
    await runtime.runUntilIdle();
    expect(await mute.result).toMatchObject({ status: 'completed' });
    await immediate();
    expect(settled).toBe(true); // the only agent that could reply has ended: the request can only wait for ever
    await runtime.shutdown();
  });
});

describe('timers after shutdown', () => {
  it('leaves no timer on the simulated clock after shutdown (waits, requests, pool, idle timers)', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      waiter: [callTools(toolCall('wait_for_messages', { timeout_ms: 60_000 }, 'w'))],
      echo: ['ready'],
      keeper: ['kept'],
    });
    const keeper = { ...worker('keeper'), persist: true };
    const runtime = createRuntime({
      model,
      agents: [worker('waiter', ['wait_for_messages']), resident('echo'), keeper],
      clock,
      projectAgentDir: false,
    });
    runtime.spawn('waiter', 'Wait.');
    const echo = runtime.spawn('echo', 'Echo.');
    await runtime.run('keeper', 'Keep.');
    await immediate();
    await immediate();
    void runtime.request(echo.id, 'ping', { timeoutMs: 120_000 }).catch(() => {});
    await immediate();
    await runtime.shutdown();
    const timers = (clock as unknown as { timeouts: Map<number, unknown> }).timeouts;
    expect(timers.size).toBe(0);
  });
});

describe('work in flight that takes real time', () => {
  it('runUntilIdle waits for a model reply that takes a little real time instead of jumping to the idle timeout', async () => {
    const clock = simulatedClock();
    // A reply that needs a few real milliseconds (a loopback server, a file): no timer of the runtime's clock.
    const model = scripted([async () => { await new Promise((r) => setTimeout(r, 20)); return 'answer'; }]);
    const runtime = createRuntime({ model, agents: [worker('w')], clock, projectAgentDir: false });
    const handle = runtime.spawn('w', 'Answer.');
    await runtime.runUntilIdle();
    expect(await handle.result).toMatchObject({ status: 'completed', output: 'answer' });
    await runtime.shutdown();
  });
});

describe('runUntilIdle and the pool', () => {
  it('does not jump 10 minutes ahead to evict an idle pooled agent when nothing else is left to do', async () => {
    const clock = simulatedClock();
    const model = scripted(['kept']);
    const runtime = createRuntime({ model, agents: [{ ...worker('keeper'), persist: true }], clock, projectAgentDir: false });
    runtime.spawn('keeper', 'Keep.');
    const report = await runtime.runUntilIdle();
    expect(report.at).toBe(0);
    expect(runtime.poolStats().idle).toBe(1);
    await runtime.shutdown();
  });
});
