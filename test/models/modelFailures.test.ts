// Model replies and model failures through a whole agent run (issue 14, defects 5 and 6): a tool-call reply without
// text is a tool turn, and whatever a model throws fails the agent with an ErrorInfo that names the model, the agent
// and the cause.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, ErrorInfo, ModelCallError, ModelError, type Model, type ModelReply } from 'troupe';
import { ScriptedModel, toolCall } from 'troupe/testing';
import { echoTool, scripted, worker } from '../stubs.js';

const echo = toolCall('echo', { text: 'ping' }, 'c1');

/** A model that throws `thrown` on every call, however odd (a plain Model, not a ScriptedModel). */
function throwing(thrown: unknown, name = 'shaky'): Model {
  return {
    name,
    complete: async () => {
      throw thrown;
    },
  };
}

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

describe('a model that throws', () => {
  const cases: [string, unknown, string][] = [
    ['an Error', new Error('boom'), 'boom'],
    ['undefined', undefined, 'the model threw undefined'],
    ['null', null, 'the model threw null'],
    ['a string', 'text', 'text'],
    ['an empty string', '', 'the model threw an empty string'],
    ['an Error without a message', new TypeError(''), 'the model threw TypeError without a message'],
    ['a number', 42, 'the model threw the number 42'],
    ['an object', { detail: 'no' }, 'the model threw the object {"detail":"no"}'],
  ];

  it.each(cases)('fails the agent with reason error and a message naming the model, the agent and the cause: %s', async (_, thrown, cause) => {
    const runtime = createRuntime({ model: throwing(thrown), agents: [worker('writer')] });

    const result = await runtime.run('writer', 'Write.');

    expect(result.status).toBe('failed');
    expect(result.reason).toBe('error');
    expect(result.error).toEqual({
      code: 'model_call_failed',
      fault: 'model',
      message: `The model call of agent "writer" to model "shaky" failed: ${cause}`,
    });
    expect(() => ErrorInfo.parse(result.error)).not.toThrow();
    await runtime.shutdown();
  });

  it('names the model the agent asks for, and says so in the agent.failed event', async () => {
    const writer = defineAgent({ name: 'writer', description: 'Writes.', systemPrompt: 'You write.', model: 'gpt-4o' });
    const runtime = createRuntime({ model: throwing(new Error('boom')), agents: [writer] });
    const failed: unknown[] = [];
    runtime.events$.subscribe((event) => {
      if (event.type === 'agent.failed') failed.push(event.error);
    });

    const result = await runtime.run('writer', 'Write.');

    expect(result.error?.message).toBe('The model call of agent "writer" to model "gpt-4o" failed: boom');
    expect(failed).toEqual([result.error]);
    await runtime.shutdown();
  });

  it('keeps a ModelError’s code, status and retryable: a 429 may be tried again, a 401 not', async () => {
    const model = ScriptedModel.perAgent({
      flaky: [new ModelError('Rate limited.', { status: 429 })],
      locked: [new ModelError('Incorrect API key.', { status: 401 })],
    });
    // One try each: the runtime's own retries would try the 429 again (test/runtime/retries.test.ts).
    const runtime = createRuntime({ model, agents: [worker('flaky'), worker('locked')], retry: { attempts: 1 } });

    const flaky = await runtime.run('flaky', 'Go.');
    const locked = await runtime.run('locked', 'Go.');

    expect(flaky.error).toEqual({
      code: 'model_error',
      fault: 'model',
      status: 429,
      retryable: true,
      message: 'The model call of agent "flaky" to model "scripted" failed: Rate limited.',
    });
    expect(locked.error).toMatchObject({ code: 'model_error', status: 401, retryable: false });
    await runtime.shutdown();
  });

  it('keeps the code and side of another troupe error: an exhausted script is the test’s fault, not the model’s', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [worker()] });
    const result = await runtime.run('worker', 'Go.');
    expect(result.error).toMatchObject({ code: 'script_exhausted', fault: 'user' });
    expect(result.error?.message).toMatch(/^The model call of agent "worker" to model "scripted" failed: ScriptedModel has no step for call #1/);
    expect(result.error).not.toHaveProperty('retryable');
    await runtime.shutdown();
  });

  it('a ModelCallError carries the model, the agent, the try and the cause, whatever was thrown', () => {
    const cause = new ModelError('Service unavailable.', { status: 503 });
    const error = new ModelCallError({ model: 'gpt-4o', agentName: 'writer', agentId: 'agent:writer:1', cause });
    expect(error).toMatchObject({
      code: 'model_call_failed',
      fault: 'model',
      name: 'ModelCallError',
      model: 'gpt-4o',
      agentName: 'writer',
      agentId: 'agent:writer:1',
      attempt: 1,
      status: 503,
      retryable: true,
      message: 'The model call of agent "writer" to model "gpt-4o" failed: Service unavailable.',
    });
    expect(error.cause).toBe(cause);

    const plain = new ModelCallError({ model: 'm', agentName: 'a', agentId: 'agent:a:1', attempt: 3, cause: undefined });
    expect(plain).toMatchObject({ attempt: 3, status: undefined, retryable: undefined, message: 'The model call of agent "a" to model "m" failed after 3 tries: the model threw undefined' });
    expect('cause' in plain).toBe(true);
  });
});
