// What ends a wait besides its reply or its timeout: the replier ending, or a tool that did not wait after all; and
// a tool of one's own that takes a built-in messaging tool's name.
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, DeadlockError, defineTool } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { lastMessage, resident, scripted, simulatedClock, toolMessageFor, worker } from '../stubs.js';

describe('waits that end without their message', () => {
  it('a send_message waiting for a reply (no timeout) ends with an error when the receiver ends without replying', async () => {
    const clock = simulatedClock();
    const model = new ScriptedModel(
      (request) => {
        const last = lastMessage(request);
        if (request.agentName === 'mute') return 'I never reply.';
        if (last.role === 'user' && !last.content.startsWith('[message')) {
          return callTools(toolCall('send_message', { to: 'mute', content: 'are you there?', expect_reply: true }, 'ask'));
        }
        return `after the wait: ${last.content}`;
      },
      { latencyMs: 10 },
    );
    const runtime = createRuntime({ model, agents: [resident('mute'), worker('asker', ['send_message'])], clock, projectAgentDir: false });
    const mute = runtime.spawn('mute', 'Stay quiet.');
    await runtime.runUntilIdle();
    const asked = runtime.run('asker', 'Ask the mute one.');
    // The asker waits for a reply the mute one will never send: a deadlock, naming the asker.
    await expect(runtime.runUntilIdle()).rejects.toThrow(DeadlockError);
    runtime.stop(mute.id);
    await runtime.runUntilIdle();
    const result = await asked;
    expect(result.status).toBe('completed');
    const last = model.calls.filter((request) => request.agentName === 'asker').at(-1)!;
    expect(toolMessageFor(last, 'ask')).toMatchObject({ isError: true, content: expect.stringContaining(`${mute.id} ended without replying`) });
    await runtime.shutdown();
  });

  it('a tool of its own that registers a wait but returns a result does not hold its agent for ever', async () => {
    const clock = simulatedClock();
    const peek = defineTool({
      name: 'peek',
      description: 'Starts a wait, then changes its mind.',
      parameters: z.object({}),
      kind: 'other',
      execute: (_args, { messaging }) => {
        messaging.waitForMessages({ timeoutMs: 60_000 }); // the signal is dropped: the call does not wait
        return 'looked';
      },
    });
    const model = new ScriptedModel((request) => (lastMessage(request).role === 'user' ? callTools(toolCall('peek', {}, 'p')) : 'done'));
    const runtime = createRuntime({ model, agents: [worker('peeker', ['peek'])], tools: [peek], clock, projectAgentDir: false });
    const result = runtime.run('peeker', 'Peek.');
    const idle = await runtime.runUntilIdle();
    expect(await result).toMatchObject({ status: 'completed', output: 'done' });
    expect(idle.at).toBe(0); // no 60 s wait was left to pass
    await runtime.shutdown();
  });
});

describe('a time limit without a wait', () => {
  it('messaging.send with timeoutMs but no expectReply is refused with a ConfigurationError, and nothing is sent', async () => {
    const clock = simulatedClock();
    const tell = defineTool({
      name: 'tell',
      description: 'Tells pro.',
      parameters: z.object({}),
      kind: 'other',
      execute: async (_args, { messaging }) => {
        try {
          await messaging.send('pro', 'Argue.', { timeoutMs: 500 });
          return 'sent';
        } catch (error) {
          return `${(error as Error).name}: ${(error as Error).message}`;
        }
      },
    });
    const model = new ScriptedModel((request) => (lastMessage(request).role === 'user' && request.agentName === 'judge' ? callTools(toolCall('tell', {}, 't')) : 'done'), { latencyMs: 10 });
    const runtime = createRuntime({ model, agents: [resident('pro'), worker('judge', ['tell'])], tools: [tell], clock, projectAgentDir: false });
    runtime.spawn('pro', 'Wait.');
    await runtime.runUntilIdle();

    const [result] = await Promise.all([runtime.run('judge', 'Judge.'), runtime.runUntilIdle()]);

    expect(result).toMatchObject({ status: 'completed', toolCallsExecuted: 1 });
    const last = model.calls.filter((request) => request.agentName === 'judge').at(-1)!;
    expect(toolMessageFor(last, 't')?.content).toMatch(/^ConfigurationError: timeoutMs is how long to wait for the reply: give expectReply: true/);
    expect(runtime.metrics().total.messagesOut).toBe(0);
    await runtime.shutdown();
  });
});

describe('one call, one wait', () => {
  it('a tool of its own that asks for a second reply in the same call is refused, rather than lose the first reply', async () => {
    const clock = simulatedClock();
    const askBoth = defineTool({
      name: 'ask_both',
      description: 'Asks both debaters.',
      parameters: z.object({}),
      kind: 'other',
      execute: async (_args, { messaging }) => {
        await messaging.send('pro', 'Argue.', { expectReply: true }); // a signal, not the reply: the call now waits for it
        try {
          return await messaging.send('con', 'Argue.', { expectReply: true });
        } catch (error) {
          return `second ask refused: ${(error as Error).message}`;
        }
      },
    });
    const model = new ScriptedModel(
      (request) => {
        const last = lastMessage(request);
        if (request.agentName === 'judge') return last.role === 'user' ? callTools(toolCall('ask_both', {}, 'ab')) : 'verdict';
        return last.role === 'user' && last.content.startsWith('[message') ? callTools(toolCall('reply', { content: 'pro argues' }, 'r')) : 'waiting';
      },
      { latencyMs: 10 },
    );
    const runtime = createRuntime({ model, agents: [resident('pro', ['reply']), resident('con', ['reply']), worker('judge', ['ask_both'])], tools: [askBoth], clock, projectAgentDir: false });
    const con = runtime.spawn('con', 'Wait.');
    runtime.spawn('pro', 'Wait.');
    await runtime.runUntilIdle();

    const [result] = await Promise.all([runtime.run('judge', 'Judge.'), runtime.runUntilIdle()]);

    expect(result).toMatchObject({ status: 'completed', output: 'verdict' });
    const last = model.calls.filter((request) => request.agentName === 'judge').at(-1)!;
    // The call's result is what it returned (not con's reply in place of pro's, which was lost), and con was never asked.
    expect(toolMessageFor(last, 'ab')?.content).toMatch(/^second ask refused: This call already waits/);
    expect(model.calls.filter((request) => request.agentId === con.id)).toHaveLength(1);
    await runtime.shutdown();
  });
});

describe('tools named like built-in messaging tools', () => {
  it('a runtime tool named "reply" takes the built-in reply tool’s place', async () => {
    const calls: string[] = [];
    const own = defineTool({
      name: 'reply',
      description: 'Replies to a ticket in our help desk.',
      parameters: z.object({ ticket: z.string() }),
      kind: 'write',
      execute: ({ ticket }) => {
        calls.push(ticket);
        return `replied to ${ticket}`;
      },
    });
    const model = scripted([callTools(toolCall('reply', { ticket: 'T-1' })), 'done']);
    const runtime = createRuntime({ model, agents: [worker('desk', ['reply'])], tools: [own], projectAgentDir: false });
    expect(await runtime.run('desk', 'Answer T-1.')).toMatchObject({ status: 'completed' });
    expect(calls).toEqual(['T-1']);
    expect(() => createRuntime({ model, tools: [{ ...own, name: 'assign_task' } as never], projectAgentDir: false })).toThrow(/delegation tool/);
    await runtime.shutdown();
  });
});

