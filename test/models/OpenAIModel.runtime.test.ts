// A whole agent run on OpenAIModel through the real openai SDK against a loopback OpenAI-compatible server.
import OpenAI from 'openai';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, OpenAIModel, type Model, type ModelReply } from 'troupe';
import { chatCompletion, deltaChunk, startOpenAIServer, usageChunk, type OpenAIServer } from '../support/openaiServer.js';
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

  it('prices a reply by the model asked for when the server answers under a name the price table lacks, so the cost budget holds', async () => {
    // Ollama answers `my-model` as `my-model:latest`; a deployment answers under its own name.
    const toolCalls = [{ id: 'call_a', name: 'echo', arguments: '{"text":"ping"}' }];
    server.enqueue({
      kind: 'json',
      body: chatCompletion({ content: null, toolCalls, promptTokens: 1_000_000, completionTokens: 1_000_000, model: 'my-model:latest' }),
    });
    const { tool, calls } = echoTool();
    const model = new OpenAIModel({ model: 'my-model', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    const prices = { 'my-model': { input: 0.5, output: 1.5 } };
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], prices, budget: { maxCostUsd: 1 } });

    const result = await runtime.run('worker', 'Ping the echo tool.');

    expect(result.metrics.own.costUsd).toBeCloseTo(2, 9);
    // The turn took the run past its budget: the agent ends before its tool call runs.
    expect(result).toMatchObject({ status: 'failed', reason: 'budget' });
    expect(calls).toEqual([]);
    await runtime.shutdown();
  });

  it('prices such a reply by the model its agent asks for, not by the runtime model it was sent through', async () => {
    // The runtime's model is priced (gpt-4o-mini); the agent's definition asks the same server for `my-model`.
    server.enqueue({ kind: 'json', body: chatCompletion({ content: 'Done.', promptTokens: 1_000_000, completionTokens: 1_000_000, model: 'my-model:latest' }) });
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    const local = defineAgent({ name: 'local', description: 'Runs locally.', systemPrompt: 'You work.', model: 'my-model' });
    const runtime = createRuntime({ model, agents: [local], prices: { 'my-model': { input: 0.5, output: 1.5 } } });

    const result = await runtime.run('local', 'Anything.');

    expect(server.requests[0]?.body).toMatchObject({ model: 'my-model' });
    expect(result).toMatchObject({ status: 'completed', output: 'Done.' });
    expect(result.metrics.own.costUsd).toBeCloseTo(2, 9);
    await runtime.shutdown();
  });

  it('tries a 429 again after the wait its retry-after-ms asks, then completes (the SDK sends each request once)', async () => {
    server.enqueue(
      { kind: 'error', status: 429, message: 'Rate limit reached.', headers: { 'retry-after-ms': '20' } },
      { kind: 'error', status: 503, message: 'Busy.', headers: { 'retry-after-ms': '10' } },
      { kind: 'json', body: chatCompletion({ content: 'Third time.', model: 'gpt-4o-mini' }) },
    );
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL });
    const runtime = createRuntime({ model, agents: [worker()] });
    const retries: unknown[] = [];
    runtime.events$.subscribe((event) => event.type === 'model.retry' && retries.push([event.attempt, event.delayMs, event.error.status]));

    const result = await runtime.run('worker', 'Anything.');

    expect(result).toMatchObject({ status: 'completed', output: 'Third time.', turns: 1 });
    expect(retries).toEqual([
      [1, 20, 429],
      [2, 10, 503],
    ]);
    expect(server.requests).toHaveLength(3);
    await runtime.shutdown();
  });

  it('gives each tool call of a conversation its own id when the server sends none, or the same one every turn', async () => {
    for (const serverId of ['', 'call_0']) {
      const call = (text: string) => chatCompletion({ content: null, toolCalls: [{ id: serverId, name: 'echo', arguments: JSON.stringify({ text }) }] });
      server.enqueue(
        { kind: 'json', body: call('one') },
        { kind: 'json', body: call('two') },
        { kind: 'json', body: call('three') },
        { kind: 'json', body: chatCompletion({ content: 'Echoed thrice.' }) },
      );
      const { tool } = echoTool();
      const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
      const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
      const callIds: string[] = [];
      runtime.events$.subscribe((event) => event.type === 'tool.call' && callIds.push(event.callId));

      const result = await runtime.run('worker', 'Echo three times.');

      expect(result).toMatchObject({ status: 'completed', output: 'Echoed thrice.', toolCallsExecuted: 3 });
      expect(new Set(callIds).size).toBe(3);
      const last = server.requests.at(-1)?.body as { messages: { role: string; tool_call_id?: string }[] };
      const resultIds = last.messages.filter((message) => message.role === 'tool').map((message) => message.tool_call_id);
      expect(resultIds).toEqual(callIds);
      await runtime.shutdown();
    }
  });

  it('fails the agent, without retries, when the server cuts its answer at the token limit (finish_reason length)', async () => {
    server.enqueue({ kind: 'json', body: chatCompletion({ content: 'The answer is', finish: 'length', model: 'gpt-4o-mini' }) });
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL });
    const runtime = createRuntime({ model, agents: [worker()] });

    const result = await runtime.run('worker', 'Anything.');

    // A fragment is no answer: never a completed run with half of one.
    expect(result).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'model_error', fault: 'model', retryable: false } });
    expect(result.output).toBeUndefined();
    expect(result.error?.message).toContain('finish_reason: length');
    expect(server.requests).toHaveLength(1);
    await runtime.shutdown();
  });

  it('fails the agent with reason error when the server answers HTTP 500, naming the status', async () => {
    server.enqueue({ kind: 'error', status: 500, message: 'Out of GPUs.' });
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    const runtime = createRuntime({ model, agents: [worker()], retry: { attempts: 1 } }); // one try: the 500 fails it

    const result = await runtime.run('worker', 'Anything.');

    expect(result.status).toBe('failed');
    expect(result.reason).toBe('error');
    expect(result.output).toBeUndefined();
    expect(result.error).toMatchObject({ code: 'model_error', fault: 'model', status: 500, retryable: true });
    expect(result.error?.message).toContain('HTTP 500');
    expect(result.error?.message).toContain('Out of GPUs.');
    await runtime.shutdown();
  });

  it('runs the tool turn when the server leaves content out beside tool calls, whole or streamed', async () => {
    const whole = chatCompletion({ toolCalls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"ping"}' }] }) as {
      choices: { message: Record<string, unknown> }[];
    };
    delete whole.choices[0]!.message.content;
    server.enqueue(
      { kind: 'json', body: whole },
      { kind: 'json', body: chatCompletion({ content: 'Whole.' }) },
      {
        kind: 'stream',
        chunks: [
          deltaChunk({ role: 'assistant', tool_calls: [{ index: 0, id: 'call_b', type: 'function', function: { name: 'echo', arguments: '{"text":"pong"}' } }] }, { finish: 'tool_calls' }),
          usageChunk(1, 1),
        ],
      },
      { kind: 'stream', chunks: [deltaChunk({ content: 'Streamed.' }, { finish: 'stop' }), usageChunk(1, 1)] },
    );
    const { tool, calls } = echoTool();
    const runtime = createRuntime({
      model: new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 }),
      agents: [worker('worker', ['echo'])],
      tools: [tool],
    });
    const streaming = createRuntime({
      model: new OpenAIModel({ model: 'gpt-4o-mini', apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0, stream: true }),
      agents: [worker('worker', ['echo'])],
      tools: [tool],
    });

    expect(await runtime.run('worker', 'Ping.')).toMatchObject({ status: 'completed', output: 'Whole.', toolCallsExecuted: 1 });
    expect(await streaming.run('worker', 'Pong.')).toMatchObject({ status: 'completed', output: 'Streamed.', toolCallsExecuted: 1 });
    expect(calls).toEqual(['ping', 'pong']);
    await runtime.shutdown();
    await streaming.shutdown();
  });
});

describe('an agent on a model made straight on the openai client', () => {
  /** A Model as a user writes one on the openai SDK: the message's content passed on as it comes, null included. */
  function direct(): Model {
    const client = new OpenAI({ apiKey: 'sk-test', baseURL: server.baseURL, maxRetries: 0 });
    return {
      name: 'direct',
      async complete(request): Promise<ModelReply> {
        const completion = await client.chat.completions.create(
          {
            model: 'gpt-4o-mini',
            messages: request.messages.map((message) =>
              message.role === 'tool'
                ? { role: 'tool' as const, tool_call_id: message.toolCallId, content: message.content }
                : message.role === 'assistant'
                  ? {
                      role: 'assistant' as const,
                      content: message.content === '' ? null : message.content,
                      ...(message.toolCalls?.length
                        ? { tool_calls: message.toolCalls.map((call) => ({ id: call.id, type: 'function' as const, function: { name: call.name, arguments: call.arguments } })) }
                        : {}),
                    }
                  : { role: message.role, content: message.content },
            ),
            tools: request.tools.map((entry) => ({ type: 'function' as const, function: entry })),
          },
          { signal: request.signal },
        );
        const message = completion.choices[0]!.message;
        return {
          content: message.content,
          toolCalls: message.tool_calls?.flatMap((call) => (call.type === 'function' ? [{ id: call.id, name: call.function.name, arguments: call.function.arguments }] : [])),
          usage: { inputTokens: completion.usage?.prompt_tokens ?? 0, outputTokens: completion.usage?.completion_tokens ?? 0 },
          model: completion.model,
        };
      },
    };
  }

  it('runs the tool turn of a reply with content: null and tool calls, then completes with the answer', async () => {
    server.enqueue(
      { kind: 'json', body: chatCompletion({ content: null, toolCalls: [{ id: 'call_a', name: 'echo', arguments: '{"text":"ping"}' }], model: 'gpt-4o-mini' }) },
      { kind: 'json', body: chatCompletion({ content: 'It said pong.', model: 'gpt-4o-mini' }) },
    );
    const { tool, calls } = echoTool();
    const runtime = createRuntime({ model: direct(), agents: [worker('worker', ['echo'])], tools: [tool] });

    const result = await runtime.run('worker', 'Ping the echo tool.');

    expect(result).toMatchObject({ status: 'completed', output: 'It said pong.', turns: 2, toolCallsExecuted: 1 });
    expect(calls).toEqual(['ping']);
    const second = server.requests[1]?.body as { messages: unknown[] };
    expect(second.messages.slice(-2)).toEqual([
      { role: 'assistant', content: null, tool_calls: [{ id: 'call_a', type: 'function', function: { name: 'echo', arguments: '{"text":"ping"}' } }] },
      { role: 'tool', tool_call_id: 'call_a', content: 'echo: ping' },
    ]);
    await runtime.shutdown();
  });
});
