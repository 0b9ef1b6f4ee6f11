// How a tool call's wait for messages ends is an event (`tool.wait_ended`), counted in the metrics as the model sees it:
// a reply that came, a wait that timed out, a replier that ended without replying, a collecting wait's messages.
import { describe, expect, it } from 'vitest';
import { createRuntime, formatEvent, type ModelRequest, type TroupeEvent } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { LiveTree } from '../../src/views/LiveTree.js';
import { collect, ofType, resident, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

/** The wait events of one call: its `tool.result` (marked `waiting`) and its `tool.wait_ended`. */
const waitEventsOf = (events: readonly TroupeEvent[], callId: string) =>
  events.filter((event) => (event.type === 'tool.result' || event.type === 'tool.wait_ended') && event.callId === callId);

describe('the end of a wait for messages', () => {
  it('a wait that times out ends with an error event at its timeout, counted as a tool error in the metrics and the result', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ listener: [callTools(toolCall('wait_for_messages', { timeout_ms: 3_000 }, 'w1')), 'Nobody wrote.'] });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const handle = runtime.spawn('listener', 'Listen.');
    await runtime.runUntilIdle();
    const result = await handle.result;

    expect(waitEventsOf(events, 'w1')).toEqual([
      expect.objectContaining({ type: 'tool.result', status: 'ok', waiting: true, at: 0 }),
      expect.objectContaining({
        type: 'tool.wait_ended',
        tool: 'wait_for_messages',
        outcome: 'timeout',
        status: 'error',
        messages: 0,
        durationMs: 3_000,
        at: 3_000,
        error: 'no message arrived within 3000 ms.',
      }),
    ]);
    const [ended] = ofType(events, 'tool.wait_ended');
    expect(formatEvent(ended!)).toContain('← wait_for_messages timeout after 3.000 s: no message arrived within 3000 ms.');
    // One call, failed, as the model was told: in the live metrics, the result and the run's total alike.
    const figures = { toolCalls: 1, toolErrors: 1 };
    expect(runtime.metrics().agents[handle.id]!.own).toMatchObject(figures);
    expect(result.metrics.own).toMatchObject(figures);
    expect(runtime.metrics().total).toMatchObject(figures);
    await runtime.shutdown();
  });

  it('a reply ends the wait with the time it took to come, however long before the asker reads it', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        if (request.agentName === 'echo') {
          const last = request.messages.at(-1)!;
          if (last.role === 'user' && last.content.includes('ping')) return callTools(toolCall('reply', { content: 'pong' }));
          return 'listening';
        }
        return request.messages.some((message) => message.role === 'tool')
          ? 'Got it.'
          : callTools(toolCall('send_message', { to: 'echo', content: 'ping', expect_reply: true, timeout_ms: 60_000 }, 's1'));
      },
      { latencyMs: 250 },
    );
    const runtime = createRuntime({ model, agents: [resident('echo', ['reply']), worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const echo = runtime.spawn('echo', 'Answer pings.');
    const asker = runtime.spawn('asker', 'Ping the echo.');
    await runtime.runUntilIdle();

    expect(await asker.result).toMatchObject({ status: 'completed', metrics: { own: { toolCalls: 1, toolErrors: 0 } } });
    const sent = ofType(events, 'tool.result').find((event) => event.callId === 's1')!;
    const [ended] = ofType(events, 'tool.wait_ended');
    // The echo read the ping after its first turn (250 ms) and replied after its second model call (250 ms more).
    expect(ended).toMatchObject({ agentId: asker.id, tool: 'send_message', outcome: 'reply', status: 'ok', messages: 1, durationMs: 250 });
    expect(ended).not.toHaveProperty('error');
    expect(ended!.at - sent.at).toBe(250);
    runtime.stop(echo.id);
    await runtime.shutdown();
  });

  it('a replier that ends without replying ends the wait with `ended`, an error', async () => {
    const model = scriptedPerAgent({
      mute: ['ready', new Error('The model is down.')],
      asker: [callTools(toolCall('send_message', { to: 'mute', content: 'hello?', expect_reply: true }, 's1')), 'No answer.'],
    });
    const runtime = createRuntime({ model, agents: [resident('mute'), worker('asker', ['send_message'])], clock: simulatedClock(), projectAgentDir: false });
    const events = collect(runtime.events$);
    runtime.spawn('mute', 'Stay.');
    const asker = runtime.spawn('asker', 'Ask the mute.');
    await runtime.runUntilIdle();

    expect(await asker.result).toMatchObject({ status: 'completed', metrics: { own: { toolCalls: 1, toolErrors: 1 } } });
    expect(ofType(events, 'tool.wait_ended')).toEqual([
      expect.objectContaining({ agentId: asker.id, callId: 's1', outcome: 'ended', status: 'error', messages: 0, error: expect.stringMatching(/^agent:mute:\S+ ended without replying to msg:/) }),
    ]);
    await runtime.shutdown();
  });

  it('a collecting wait counts the messages it took, and is no error when none came', async () => {
    const clock = simulatedClock();
    const collecting = (callId: string) => callTools(toolCall('wait_for_messages', { timeout_ms: 1_000, collect: true }, callId));
    const model = scriptedPerAgent({
      hub: [collecting('c1'), collecting('c2'), 'Done.'],
      talker: [callTools(toolCall('send_message', { to: 'hub', content: 'one' }), toolCall('send_message', { to: 'hub', content: 'two' }, 't2')), 'Sent.'],
    });
    const runtime = createRuntime({ model, agents: [worker('hub', ['wait_for_messages']), worker('talker', ['send_message'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const hub = runtime.spawn('hub', 'Collect.');
    runtime.spawn('talker', 'Talk.');
    await runtime.runUntilIdle();

    expect(ofType(events, 'tool.wait_ended').map(({ callId, outcome, status, messages, durationMs }) => ({ callId, outcome, status, messages, durationMs }))).toEqual([
      { callId: 'c1', outcome: 'collected', status: 'ok', messages: 2, durationMs: 1_000 },
      { callId: 'c2', outcome: 'collected', status: 'ok', messages: 0, durationMs: 1_000 },
    ]);
    expect(await hub.result).toMatchObject({ metrics: { own: { toolCalls: 2, toolErrors: 0 } } });
    await runtime.shutdown();
  });

  it('the live tree shows a waiting call as running until its wait ends, then as it ended', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({ listener: [callTools(toolCall('wait_for_messages', { timeout_ms: 500 }, 'w1')), 'Nobody wrote.'] });
    const runtime = createRuntime({ model, agents: [worker('listener', ['wait_for_messages'])], clock, projectAgentDir: false });
    const tree = new LiveTree();
    const states: string[] = [];
    runtime.events$.subscribe((event) => {
      tree.apply(event);
      const call = tree.get(event.agentId)?.tools.find((candidate) => candidate.callId === 'w1');
      if (call && (event.type === 'tool.result' || event.type === 'tool.wait_ended')) states.push(`${event.type} ${call.state}`);
    });
    const handle = runtime.spawn('listener', 'Listen.');
    await runtime.runUntilIdle();
    await handle.result;

    expect(states).toEqual(['tool.result running', 'tool.wait_ended error']);
    const node = tree.get(handle.id);
    expect(node?.tools[0]).toMatchObject({ state: 'error', durationMs: 500, error: 'no message arrived within 500 ms.' });
    expect(node?.figures).toMatchObject({ toolCalls: 1, toolErrors: 1 });
    await runtime.shutdown();
  });

  it("a wait cut short by its agent's end has no tool.wait_ended, and the live tree ends its call as cut short, counted as no error", async () => {
    const model = scriptedPerAgent({ listener: [callTools(toolCall('wait_for_messages', {}, 'w1'))] });
    const runtime = createRuntime({ model, agents: [resident('listener', ['wait_for_messages'])], clock: simulatedClock(), projectAgentDir: false });
    const events = collect(runtime.events$);
    const tree = new LiveTree();
    runtime.events$.subscribe((event) => tree.apply(event));
    const handle = runtime.spawn('listener', 'Listen.');
    await runtime.runUntilIdle();
    expect(tree.get(handle.id)?.tools[0]).toMatchObject({ callId: 'w1', state: 'running' });
    runtime.stop(handle.id);
    await handle.result;

    expect(ofType(events, 'tool.wait_ended')).toEqual([]);
    expect(tree.get(handle.id)?.tools[0]).toMatchObject({ callId: 'w1', state: 'error', error: 'cut short: the agent ended' });
    expect(tree.get(handle.id)?.figures).toMatchObject({ toolCalls: 1, toolErrors: 0 });
    expect(runtime.metrics().agents[handle.id]!.own).toMatchObject({ toolCalls: 1, toolErrors: 0 });
    await runtime.shutdown();
  });

  it("a wait cut short by its agent's end is no empty answer when the session is resumed: its call says it was cut short", async () => {
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => {
      seen.push(request);
      return seen.length === 1 ? callTools(toolCall('wait_for_messages', {}, 'w1')) : 'Nothing came; I listen again.';
    });
    const runtime = createRuntime({ model, agents: [resident('listener', ['wait_for_messages'])], clock: simulatedClock(), projectAgentDir: false });
    const handle = runtime.spawn('listener', 'Listen.');
    await runtime.runUntilIdle();
    runtime.stop(handle.id);
    await handle.result;
    const again = await runtime.resume(handle.id, 'Listen again.');
    await runtime.runUntilIdle();
    runtime.stop(again.id);
    await again.result;

    expect(seen[1]!.messages.find((message) => message.role === 'tool')).toEqual({
      role: 'tool',
      toolCallId: 'w1',
      content: 'Error: cut short: the run ended before this wait for messages did; nothing it waited for was read.',
      isError: true,
    });
    await runtime.shutdown();
  });
});

