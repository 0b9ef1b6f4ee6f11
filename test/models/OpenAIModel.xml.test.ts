// OpenAIModel with toolCallFormat 'xml', end to end through the real SDK and a loopback server.
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/models/Model.js';
import { OpenAIModel } from '../../src/models/OpenAIModel.js';
import { describeToolsForXml } from '../../src/models/xmlToolCalls.js';
import { modelRequest, searchTool } from '../support/modelRequest.js';
import { chatCompletion, deltaChunk, startOpenAIServer, usageChunk, type OpenAIServer } from '../support/openaiServer.js';

let server: OpenAIServer;

beforeEach(async () => {
  server = await startOpenAIServer();
});

afterEach(async () => {
  await server.close();
});

function xmlModel(stream = false): OpenAIModel {
  return new OpenAIModel({ model: 'llama3.1', apiKey: 'k', baseURL: server.baseURL, maxRetries: 0, toolCallFormat: 'xml', stream });
}

describe('OpenAIModel with XML tool calls', () => {
  it('describes the tools in the system prompt, sends no tools field and parses the calls', async () => {
    server.enqueue({
      kind: 'json',
      body: chatCompletion({
        content: 'I will search.\n<tool_call name="search">{"query": "otters"}</tool_call>\n<tool_call name=\'search\'>{bad</tool_call>',
        promptTokens: 100,
        completionTokens: 20,
        model: 'llama3.1',
      }),
    });

    const reply = await xmlModel().complete(modelRequest({ tools: [searchTool] }));

    expect(reply).toEqual({
      content: 'I will search.',
      toolCalls: [
        { id: 'call_1', name: 'search', arguments: '{"query": "otters"}' },
        { id: 'call_2', name: 'search', arguments: '{bad' },
      ],
      usage: { inputTokens: 100, outputTokens: 20 },
      model: 'llama3.1',
    });
    const sent = server.requests[0]?.body as Record<string, unknown>;
    expect(sent).not.toHaveProperty('tools');
    expect(sent.messages).toEqual([
      { role: 'system', content: `You are terse.\n\n${describeToolsForXml([searchTool])}` },
      { role: 'user', content: 'Hello?' },
    ]);
    const system = (sent.messages as { content: string }[])[0]?.content ?? '';
    expect(system).toContain('<tool_call name="tool_name">{"arg": 1}</tool_call>');
    expect(system).toContain(JSON.stringify(searchTool.parameters));
  });

  it('sends earlier calls and results back as text, with only system, user and assistant messages', async () => {
    server.enqueue({ kind: 'json', body: chatCompletion({ content: 'Otters are mustelids.' }) });
    const messages: ChatMessage[] = [
      { role: 'user', content: 'Otters?' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query":"otters"}' }] },
      { role: 'tool', toolCallId: 'call_1', content: 'mustelids' },
    ];

    const reply = await xmlModel().complete(modelRequest({ messages, tools: [searchTool] }));

    expect(reply).toMatchObject({ content: 'Otters are mustelids.' });
    expect(reply.toolCalls).toBeUndefined();
    const sent = server.requests[0]?.body as { messages: Record<string, unknown>[] };
    expect(sent.messages).toEqual([
      { role: 'system', content: describeToolsForXml([searchTool]) },
      { role: 'user', content: 'Otters?' },
      { role: 'assistant', content: '<tool_call name="search">{"query":"otters"}</tool_call>' },
      { role: 'user', content: '<tool_result id="call_1" name="search">mustelids</tool_result>' },
    ]);
  });

  it('parses calls from a streamed reply whose block is split across chunks', async () => {
    server.enqueue({
      kind: 'stream',
      chunks: [
        deltaChunk({ content: 'Looking.\n<tool_' }),
        deltaChunk({ content: 'call name="search">{"query":' }),
        deltaChunk({ content: ' "a"}</tool_call>' }, { finish: 'stop' }),
        usageChunk(9, 8),
      ],
    });

    const reply = await xmlModel(true).complete(modelRequest({ tools: [searchTool] }));

    expect(reply).toEqual({
      content: 'Looking.',
      toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query": "a"}' }],
      usage: { inputTokens: 9, outputTokens: 8 },
      model: 'test-model',
    });
  });
});
