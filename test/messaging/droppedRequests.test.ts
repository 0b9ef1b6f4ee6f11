// A request from code whose message a drop-oldest inbox drops unread can get no reply: it must fail, not hang.
import { describe, expect, it } from 'vitest';
import { createRuntime, InboxFullError } from 'troupe';
import { resident, scriptedPerAgent, simulatedClock, tick } from '../stubs.js';

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
});
