// A conversation window: `historyLimit` keeps the system prompt and the latest messages, so a long-lived agent's
// context stays bounded, and never leaves a tool result without the call that asked for it.
import { describe, expect, it } from 'vitest';
import { createRuntime, type ChatMessage } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { windowed } from '../../src/machines/agentContext.js';
import { resident, scripted, simulatedClock, worker } from '../stubs.js';

const system: ChatMessage = { role: 'system', content: 'You are a test.' };
const user = (content: string): ChatMessage => ({ role: 'user', content });
const asks = (id: string): ChatMessage => ({ role: 'assistant', content: '', toolCalls: [{ id, name: 'echo', arguments: '{}' }] });
const result = (id: string): ChatMessage => ({ role: 'tool', toolCallId: id, content: 'ok' });

describe('historyLimit', () => {
  it('keeps the system prompt and the newest messages, up to the limit', () => {
    const messages = [system, user('a'), { role: 'assistant', content: 'A' } as ChatMessage, user('b')];
    const next = windowed(messages, { role: 'assistant', content: 'B' }, 2);
    expect(next).toEqual([system, user('b'), { role: 'assistant', content: 'B' }]);
    expect(windowed(messages, { role: 'assistant', content: 'B' }, 10)).toHaveLength(5);
  });

  it('never starts the window with a tool result whose call was cut', () => {
    const messages = [system, user('go'), asks('c1'), result('c1'), asks('c2'), result('c2')];
    const next = windowed(messages, { role: 'assistant', content: 'done' }, 2);
    // The last two would be result(c2) and the reply: the orphaned result goes too.
    expect(next).toEqual([system, { role: 'assistant', content: 'done' }]);
    const wider = windowed(messages, { role: 'assistant', content: 'done' }, 3);
    expect(wider).toEqual([system, asks('c2'), result('c2'), { role: 'assistant', content: 'done' }]);
  });

  it('keeps a resident that answers 30 messages at a bounded conversation, and the model sees only the window', async () => {
    const clock = simulatedClock();
    const sizes: number[] = [];
    const model = new ScriptedModel((request) => {
      sizes.push(request.messages.length);
      const last = request.messages[request.messages.length - 1]!;
      return last.role === 'user' && last.content.startsWith('[message') ? callTools(toolCall('reply', { content: 'noted' }, `r${sizes.length}`)) : 'ok';
    });
    const runtime = createRuntime({ model, agents: [resident('notes', ['reply'], { historyLimit: 6 }), worker('other')], clock, projectAgentDir: false });
    const notes = runtime.spawn('notes', 'Take notes.');
    await runtime.runUntilIdle();
    for (let i = 0; i < 30; i += 1) {
      await runtime.send('notes', `note ${i}`);
      await runtime.runUntilIdle();
    }
    runtime.stop(notes.id);
    const ended = await notes.result;
    expect(ended.status).toBe('completed');
    expect(sizes.length).toBe(61);
    // System prompt + at most 6 kept + the mail and tool result added since the last reply.
    expect(Math.max(...sizes)).toBeLessThanOrEqual(1 + 6 + 2);
    await runtime.flush();
    const stored = await runtime.sessions.conversation(notes.id);
    // The session keeps the window (without the system prompt, which a resume builds again).
    expect(stored!.length).toBeLessThanOrEqual(6 + 1);
    expect(stored!.at(-1)).toEqual({ role: 'assistant', content: 'ok' });
    expect(stored![0]!.role).not.toBe('tool');
    await runtime.shutdown();
  });

  it('refuses a limit that is not a positive whole number', () => {
    const runtime = createRuntime({ model: scripted([]), agents: [worker()], projectAgentDir: false });
    expect(() => runtime.spawn('worker', 'task', { historyLimit: 2.5 })).toThrow(/historyLimit/);
    expect(() => resident('bad', [], { historyLimit: 0 })).toThrow(/historyLimit/);
    return runtime.shutdown();
  });
});
