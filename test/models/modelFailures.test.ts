// Model replies through a whole agent run (issue 14, defect 5): a tool-call reply without text is a tool turn.
import { describe, expect, it } from 'vitest';
import { createRuntime, type ModelReply } from 'troupe';
import { toolCall } from 'troupe/testing';
import { echoTool, scripted, worker } from '../stubs.js';

const echo = toolCall('echo', { text: 'ping' }, 'c1');

describe('a tool-call reply without text', () => {
  it('runs its tool calls whether content is missing or null, with or without usage, then takes the answer', async () => {
    const { tool, calls } = echoTool();
    const model = scripted([
      { toolCalls: [echo] }, // no usage: ScriptedModel estimates it
      { content: null, toolCalls: [toolCall('echo', { text: 'pong' }, 'c2')] },
      { toolCalls: [toolCall('echo', { text: 'again' }, 'c3')], usage: { inputTokens: 10, outputTokens: 5 } },
      { content: null, toolCalls: [toolCall('echo', { text: 'last' }, 'c4')], usage: { inputTokens: 10, outputTokens: 5 } },
      'Echoed four times.',
    ]);
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });

    const result = await runtime.run('worker', 'Echo.');

    expect(result).toMatchObject({ status: 'completed', output: 'Echoed four times.', turns: 5, toolCallsExecuted: 4 });
    expect(calls).toEqual(['ping', 'pong', 'again', 'last']);
    // The conversation holds the tool turns with empty text, as for an OpenAI reply.
    const assistant = model.calls.at(-1)?.messages.filter((message) => message.role === 'assistant');
    expect(assistant?.map((message) => message.content)).toEqual(['', '', '', '']);
    await runtime.shutdown();
  });

  it('with no tool calls either, is an empty answer: the agent fails with empty_answer, as for an empty text', async () => {
    for (const reply of [{}, { content: null }, { content: null, toolCalls: [] }, { toolCalls: [], usage: { inputTokens: 1, outputTokens: 0 } }]) {
      const runtime = createRuntime({ model: scripted([reply as ModelReply]), agents: [worker()] });
      const result = await runtime.run('worker', 'Answer.');
      expect(result).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'empty_answer', fault: 'model', retryable: true } });
      await runtime.shutdown();
    }
  });
});
