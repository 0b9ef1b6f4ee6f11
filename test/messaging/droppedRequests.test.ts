// A request (from code, or an agent's send_message with expect_reply) whose message a drop-oldest inbox drops unread
// can get no reply: it must fail, not hang.
import { describe, expect, it } from 'vitest';
import { createRuntime, InboxFullError } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { collect, lastMessage, ofType, resident, scriptedPerAgent, simulatedClock, tick, toolMessageFor, worker } from '../stubs.js';

describe('runtime.request and a drop-oldest inbox', () => {
  it('rejects with InboxFullError when the receiver drops the request unread to make room', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ sink: ['waiting', 'busy', 'busy'] }, { latencyMs: 1_000 });
    const runtime = createRuntime({ model, agents: [resident('sink', [], { inbox: { capacity: 1, overflow: 'drop-oldest' } })], clock, projectAgentDir: false });
    const sink = runtime.spawn('sink', 'Wait.');
    await runtime.runUntilIdle();
    await runtime.send(sink.id, 'first'); // read at once: the sink thinks about it, its inbox empty
    const outcome = runtime.request(sink.id, 'question').catch((error: unknown) => error);
    await tick();
    const pushed = await runtime.send(sink.id, 'third'); // drops the question, unread
    expect(pushed.dropped).toHaveLength(1);

    await runtime.runUntilIdle();
    const settled = await Promise.race([outcome, tick().then(() => 'still waiting')]);
    expect(settled).toBeInstanceOf(InboxFullError);
    expect(settled).toMatchObject({ receiver: sink.id, messageId: pushed.dropped[0]!.messageId });
    runtime.stop(sink.id);
    await runtime.shutdown();
  });

  it("ends an agent's send_message with expect_reply with an error result when the receiver drops the message unread", async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'sink') return 'busy';
        const last = lastMessage(request);
        return last.role === 'user' ? callTools(toolCall('send_message', { to: 'sink', content: 'question', expect_reply: true }, 'ask')) : 'gave up';
      },
      { latencyMs: (request) => (request.agentName === 'sink' ? 1_000 : 10) },
    );
    const agents = [resident('sink', [], { inbox: { capacity: 1, overflow: 'drop-oldest' } }), worker('asker', ['send_message'])];
    const runtime = createRuntime({ model, agents, clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const sink = runtime.spawn('sink', 'Wait.');
    await runtime.runUntilIdle();
    await runtime.send(sink.id, 'first'); // read at once: the sink thinks about it for a second, its inbox empty
    const asker = runtime.spawn('asker', 'Ask the sink.');
    await clock.increment(10); // the asker's question is in the sink's inbox, its reply awaited
    await tick();
    const pushed = await runtime.send(sink.id, 'third'); // drops the question, unread
    expect(pushed.dropped).toHaveLength(1);

    // Not a deadlock: the asker's wait ends at once, and it goes on.
    await runtime.runUntilIdle();
    expect(await asker.result).toMatchObject({ status: 'completed', output: 'gave up' });
    const question = pushed.dropped[0]!.messageId;
    const asked = model.calls.filter((request) => request.agentId === asker.id)[1]!;
    expect(toolMessageFor(asked, 'ask')).toMatchObject({ isError: true, content: `Error: ${sink.id} dropped ${question} unread to make room in its full inbox; no reply can come.` });
    // It ended as the question was dropped, not at a timeout or the sink's end.
    expect(ofType(events, 'tool.wait_ended').find((event) => event.agentId === asker.id)).toMatchObject({ outcome: 'ended', status: 'error', durationMs: 0 });
    runtime.stop(sink.id);
    await runtime.shutdown();
  });
});
