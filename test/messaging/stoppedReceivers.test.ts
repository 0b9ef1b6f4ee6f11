// A request whose receiver is stopped in the same moment it arrives: the wait for the reply ends at once, rather than
// for ever (the receiver ended between routing the message and the wait learning who should answer it).
import { describe, expect, it } from 'vitest';
import { createRuntime, UndeliverableError } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { lastMessage, resident, simulatedClock, toolMessageFor, worker } from '../stubs.js';

describe('a receiver stopped as the request reaches it', () => {
  it('runtime.request to a resident that code stops right after the request fails with UndeliverableError', async () => {
    const clock = simulatedClock();
    const runtime = createRuntime({ model: new ScriptedModel(() => 'noted', { latencyMs: 10 }), agents: [resident('pro')], clock, projectAgentDir: false });
    const pro = runtime.spawn('pro', 'Wait for questions.');
    await runtime.runUntilIdle();

    let error: unknown = 'still waiting';
    void runtime.request('pro', 'Sum up.').catch((failure: unknown) => (error = failure));
    runtime.stop(pro.id);

    expect(await pro.result).toMatchObject({ status: 'completed', output: 'noted' });
    expect(await runtime.runUntilIdle()).toEqual({ at: 10, waiting: [] });
    expect(error).toBeInstanceOf(UndeliverableError);
    expect(error).toMatchObject({ reason: 'ended' });
    await runtime.shutdown();
  });

  it('send_message with expect_reply to an agent stopped as the message reaches it ends with an error result', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'pro') return 'noted';
        return lastMessage(request).role === 'user' ? callTools(toolCall('send_message', { to: 'pro', content: 'Sum up.', expect_reply: true }, 'ask')) : 'no answer';
      },
      { latencyMs: 10 },
    );
    const runtime = createRuntime({ model, agents: [resident('pro'), worker('judge', ['send_message'])], clock, projectAgentDir: false });
    const pro = runtime.spawn('pro', 'Wait for questions.');
    // A referee in code: whatever reaches the debater ends its part at once.
    runtime.events$.subscribe((event) => {
      if (event.type === 'message.delivered' && event.agentId === pro.id) runtime.stop(pro.id);
    });

    // XState (its development build, which vitest loads) warns of an event sent to an ended actor: the message's
    // wake-up event must not go to the receiver once code has stopped it.
    const warnings: string[] = [];
    const warn = console.warn;
    console.warn = (...args: unknown[]) => warnings.push(args.map(String).join(' '));
    const judge = runtime.spawn('judge', 'Ask the debater.');
    try {
      await runtime.runUntilIdle();
    } finally {
      console.warn = warn;
    }

    expect(warnings.filter((warning) => /stopped actor/.test(warning))).toEqual([]);
    expect(await judge.result).toMatchObject({ status: 'completed', output: 'no answer' });
    const asked = model.calls.filter((request) => request.agentId === judge.id)[1]!;
    expect(toolMessageFor(asked, 'ask')).toMatchObject({ isError: true, content: expect.stringMatching(/ended without replying/) });
    await runtime.shutdown();
  });
});
