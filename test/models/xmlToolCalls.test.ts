import { describe, expect, it } from 'vitest';
import type { ChatMessage } from '../../src/models/Model.js';
import {
  describeToolsForXml,
  formatXmlToolCall,
  formatXmlToolResult,
  parseXmlToolCalls,
  toXmlConversation,
} from '../../src/models/xmlToolCalls.js';
import { searchTool } from '../support/modelRequest.js';

describe('parseXmlToolCalls', () => {
  it('returns the trimmed text and no calls when there is no block', () => {
    expect(parseXmlToolCalls('  The answer is 42.\n')).toEqual({ content: 'The answer is 42.', toolCalls: [] });
    expect(parseXmlToolCalls('')).toEqual({ content: '', toolCalls: [] });
  });

  it('reads one call and removes its block from the content', () => {
    const parsed = parseXmlToolCalls('Let me look.\n<tool_call name="search">{"query": "otters"}</tool_call>\n');
    expect(parsed).toEqual({
      content: 'Let me look.',
      toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query": "otters"}' }],
    });
  });

  it('reads several blocks in order, with ids unique within the reply', () => {
    const text = [
      'First,',
      '<tool_call name="search">{"query": "a"}</tool_call>',
      'then',
      '<tool_call name="read_file">{"path": "b.txt"}</tool_call><tool_call name="search">{"query": "c"}</tool_call>',
      'done.',
    ].join('\n');
    const parsed = parseXmlToolCalls(text);
    expect(parsed.toolCalls).toEqual([
      { id: 'call_1', name: 'search', arguments: '{"query": "a"}' },
      { id: 'call_2', name: 'read_file', arguments: '{"path": "b.txt"}' },
      { id: 'call_3', name: 'search', arguments: '{"query": "c"}' },
    ]);
    expect(parsed.content).toBe('First,\n\nthen\n\ndone.');
  });

  it('keeps invalid JSON as written instead of throwing', () => {
    const parsed = parseXmlToolCalls('<tool_call name="search">{query: otters,}</tool_call>');
    expect(parsed).toEqual({ content: '', toolCalls: [{ id: 'call_1', name: 'search', arguments: '{query: otters,}' }] });
  });

  it('tolerates single quotes, odd spacing, line breaks and letter case', () => {
    const text = "<tool_call   name = 'search' >\n  {\n  \"query\": \"x\"\n}\n  </tool_call >\n<TOOL_CALL name=\"search\">{}</Tool_Call>";
    expect(parseXmlToolCalls(text).toolCalls).toEqual([
      { id: 'call_1', name: 'search', arguments: '{\n  "query": "x"\n}' },
      { id: 'call_2', name: 'search', arguments: '{}' },
    ]);
  });

  it('ignores other attributes, such as an id the model copied', () => {
    expect(parseXmlToolCalls('<tool_call id="call_9" name="search">{}</tool_call>').toolCalls).toEqual([
      { id: 'call_1', name: 'search', arguments: '{}' },
    ]);
  });

  it('treats an empty body as an empty arguments object', () => {
    expect(parseXmlToolCalls('<tool_call name="list_files"></tool_call>').toolCalls).toEqual([
      { id: 'call_1', name: 'list_files', arguments: '{}' },
    ]);
  });

  it('reads a named block the model never closed', () => {
    expect(parseXmlToolCalls('Checking.\n<tool_call name="search">{"query": "a"}')).toEqual({
      content: 'Checking.',
      toolCalls: [{ id: 'call_1', name: 'search', arguments: '{"query": "a"}' }],
    });
    expect(parseXmlToolCalls('<tool_call name="a">{}\n<tool_call name="b">{"x":1}</tool_call>').toolCalls).toEqual([
      { id: 'call_1', name: 'a', arguments: '{}' },
      { id: 'call_2', name: 'b', arguments: '{"x":1}' },
    ]);
  });

  it('gives a closed block without a name the name "", and leaves a bare unclosed mention as text', () => {
    expect(parseXmlToolCalls('<tool_call>{"a": 1}</tool_call>').toolCalls).toEqual([
      { id: 'call_1', name: '', arguments: '{"a": 1}' },
    ]);
    expect(parseXmlToolCalls('I will not write a <tool_call> block.')).toEqual({
      content: 'I will not write a <tool_call> block.',
      toolCalls: [],
    });
  });

  it('uses the given id maker', () => {
    const parsed = parseXmlToolCalls('<tool_call name="a">{}</tool_call><tool_call name="b">{}</tool_call>', {
      makeId: (index) => `x${index}`,
    });
    expect(parsed.toolCalls.map((call) => call.id)).toEqual(['x0', 'x1']);
  });

  it('reads back what formatXmlToolCall writes', () => {
    const call = { name: 'search', arguments: '{"query": "</b> & \\"quotes\\""}' };
    expect(parseXmlToolCalls(formatXmlToolCall(call)).toolCalls).toEqual([{ id: 'call_1', ...call }]);
  });
});

describe('describeToolsForXml', () => {
  it('describes each tool with its schema and states the calling convention', () => {
    const text = describeToolsForXml([searchTool]);
    expect(text).toContain('<tool_call name="tool_name">{"arg": 1}</tool_call>');
    expect(text).toContain('### search');
    expect(text).toContain('Searches the web.');
    expect(text).toContain(JSON.stringify(searchTool.parameters));
    expect(text).toContain('<tool_result');
  });
});

describe('formatXmlToolResult', () => {
  it('writes the id, the name and an error flag', () => {
    expect(formatXmlToolResult({ id: 'call_1', name: 'search', content: 'found' })).toBe(
      '<tool_result id="call_1" name="search">found</tool_result>',
    );
    expect(formatXmlToolResult({ id: 'call_2', name: 'search', content: 'Error: no', isError: true })).toBe(
      '<tool_result id="call_2" name="search" error="true">Error: no</tool_result>',
    );
  });
});

describe('toXmlConversation', () => {
  const conversation: ChatMessage[] = [
    { role: 'system', content: 'Be brief.' },
    { role: 'user', content: 'Otters?' },
    {
      role: 'assistant',
      content: 'Searching.',
      toolCalls: [
        { id: 'call_1', name: 'search', arguments: '{"query":"otters"}' },
        { id: 'call_2', name: 'search', arguments: '{"query":"sea otters"}' },
      ],
    },
    { role: 'tool', toolCallId: 'call_1', content: 'mustelids' },
    { role: 'tool', toolCallId: 'call_2', content: 'Error: rate limited', isError: true },
    { role: 'assistant', content: '', toolCalls: [{ id: 'call_1', name: 'search', arguments: '{}' }] },
    { role: 'tool', toolCallId: 'call_1', content: 'nothing' },
  ];

  it('appends the tools to the system prompt and rewrites calls and results as text', () => {
    const out = toXmlConversation(conversation, [searchTool]);
    expect(out).toEqual([
      { role: 'system', content: `Be brief.\n\n${describeToolsForXml([searchTool])}` },
      { role: 'user', content: 'Otters?' },
      {
        role: 'assistant',
        content:
          'Searching.\n<tool_call name="search">{"query":"otters"}</tool_call>\n' +
          '<tool_call name="search">{"query":"sea otters"}</tool_call>',
      },
      {
        role: 'user',
        content:
          '<tool_result id="call_1" name="search">mustelids</tool_result>\n' +
          '<tool_result id="call_2" name="search" error="true">Error: rate limited</tool_result>',
      },
      { role: 'assistant', content: '<tool_call name="search">{}</tool_call>' },
      { role: 'user', content: '<tool_result id="call_1" name="search">nothing</tool_result>' },
    ]);
  });

  it('adds a system message when there is none, and leaves the input unchanged', () => {
    const messages: ChatMessage[] = [{ role: 'user', content: 'Hi' }];
    const out = toXmlConversation(messages, [searchTool]);
    expect(out).toEqual([
      { role: 'system', content: describeToolsForXml([searchTool]) },
      { role: 'user', content: 'Hi' },
    ]);
    expect(messages).toEqual([{ role: 'user', content: 'Hi' }]);
  });

  it('describes no tools when there are none', () => {
    expect(toXmlConversation([{ role: 'system', content: 'S' }], [])).toEqual([{ role: 'system', content: 'S' }]);
  });
});
