// A whole agent run on OpenAIModel through the real openai SDK against a loopback OpenAI-compatible server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, OpenAIModel } from 'troupe';
import { chatCompletion, startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';
import { echoTool, worker } from '../stubs.js';

let server: OpenAIServer;

beforeEach(async () => {
  server = await startOpenAIServer();
});

afterEach(async () => {
  await server.close();
});

describe('an agent on OpenAIModel', () => {
  it('runs the tool loop against a real server: tool call, tool message, final answer, priced usage', async () => {
    server.enqueue(
      {
        kind: 'json',
        body: chatCompletion({
          content: null,
          toolCalls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"ping"}' }],
          promptTokens: 1_000,
          completionTokens: 100,
          model: 'gpt-4o-mini',
        }),
      },
      { kind: 'json', body: chatCompletion({ content: 'It said pong.', promptTokens: 2_000, completionTokens: 50, model: 'gpt-4o-mini' }) },
    );
    const { tool, calls } = echoTool();
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });

    const result = await runtime.run('worker', 'Ping the echo tool.');

    expect(result).toMatchObject({ status: 'completed', output: 'It said pong.', turns: 2, toolCallsExecuted: 1 });
    expect(calls).toEqual(['ping']);
    expect(result.metrics.own).toMatchObject({ inputTokens: 3_000, outputTokens: 150, modelCalls: 2, toolCalls: 1 });
    expect(result.metrics.own.costUsd).toBeCloseTo((3_000 * 0.15 + 150 * 0.6) / 1_000_000, 12);
    const second = server.requests[1]?.body as { messages: unknown[]; tools: { function: { name: string } }[] };
    expect(second.messages.at(-1)).toEqual({ role: 'tool', tool_call_id: 'call_a', content: 'echo: ping' });
    expect(second.tools.map((entry) => entry.function.name)).toEqual(['echo']);
    await runtime.shutdown();
  });

  it('fails the agent with reason error when the server answers HTTP 500, naming the status', async () => {
    server.enqueue({ kind: 'error', status: 500, message: 'Out of GPUs.' });
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    const runtime = createRuntime({ model, agents: [worker()] });

    const result = await runtime.run('worker', 'Anything.');

    expect(result.status).toBe('failed');
    expect(result.reason).toBe('error');
    expect(result.output).toBeUndefined();
    expect(result.error).toMatchObject({ code: 'model_error', fault: 'model', status: 500, retryable: true });
    expect(result.error?.message).toContain('HTTP 500');
    expect(result.error?.message).toContain('Out of GPUs.');
    await runtime.shutdown();
  });
});
