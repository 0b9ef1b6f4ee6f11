// A server's tool as a troupe tool: its name, its kind for the planner from its annotations, its schema as the server
// gives it, and what the model sees of the server's answers.
import { describe, expect, it } from 'vitest';
import { isToolReply } from 'troupe';
import { McpConnection, type McpToolInfo } from '../../../src/tools/mcp/McpConnection.js';
import { mcpReply, mcpTool } from '../../../src/tools/mcp/mcpTool.js';

const connection = new McpConnection('files', { command: 'never-started' });

function info(annotations: McpToolInfo['annotations'], extra: Partial<McpToolInfo> = {}): McpToolInfo {
  return {
    name: 'read_file',
    description: 'Reads a file.',
    inputSchema: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'], $schema: 'http://json-schema.org/draft-07/schema#' } as McpToolInfo['inputSchema'],
    ...(annotations ? { annotations } : {}),
    ...extra,
  };
}

describe('mcpTool', () => {
  it('is named server:tool and offers the server description and JSON schema, without the dialect line', () => {
    const tool = mcpTool(connection, info({ readOnlyHint: true }));
    expect(tool.name).toBe('files:read_file');
    expect(tool.schema).toEqual({
      name: 'files:read_file',
      description: 'Reads a file.',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
    });
  });

  it('is a read tool (and safe to call again) with readOnlyHint, and a write tool with unknown targets otherwise', () => {
    const read = mcpTool(connection, info({ readOnlyHint: true }));
    const write = mcpTool(connection, info({ readOnlyHint: false, idempotentHint: true }));
    const unannotated = mcpTool(connection, info(undefined));
    expect([read.kind, write.kind, unannotated.kind]).toEqual(['read', 'write', 'write']);
    expect(read.plan({}, { roleOf: () => undefined, tool: () => undefined, readsOnly: () => false })).toEqual({ kind: 'read' });
    expect(unannotated.plan({}, { roleOf: () => undefined, tool: () => undefined, readsOnly: () => false })).toEqual({ kind: 'write' });
    expect([read.idempotent, write.idempotent, unannotated.idempotent]).toEqual([true, true, false]);
  });

  it('describes a tool without a description by its title or its name', () => {
    expect(mcpTool(connection, info(undefined, { description: undefined, title: 'Read File' })).description).toBe('Read File');
    expect(mcpTool(connection, info(undefined, { description: '  ' })).description).toBe('The tool "read_file" of the MCP server "files".');
  });

  it('accepts any JSON object as arguments and refuses anything else', () => {
    const tool = mcpTool(connection, info(undefined));
    expect(tool.parameters.safeParse({ path: 'a', extra: 1 })).toEqual({ success: true, data: { path: 'a', extra: 1 } });
    expect(tool.parameters.safeParse([1]).success).toBe(false);
    expect(tool.parameters.safeParse('a').success).toBe(false);
  });

  it('gives an error result that says why when its server is not available', async () => {
    const tool = mcpTool(connection, info(undefined));
    await expect(Promise.resolve().then(() => tool.execute({}, { signal: new AbortController().signal } as never))).rejects.toThrow(
      'MCP server "files" has not started yet.',
    );
  });
});

describe('mcpReply', () => {
  it('joins text blocks and names images, audio, resources and links', () => {
    const reply = mcpReply({
      content: [
        { type: 'text', text: 'one' },
        { type: 'image', data: 'AAAA', mimeType: 'image/png' },
        { type: 'audio', data: 'AAAAAAAA', mimeType: 'audio/wav' },
        { type: 'resource', resource: { uri: 'file:///a.txt', text: 'the text' } },
        { type: 'resource', resource: { uri: 'file:///b.bin', blob: 'AA==', mimeType: 'application/octet-stream' } },
        { type: 'resource_link', uri: 'file:///c.txt', name: 'c.txt' },
      ],
    });
    expect(isToolReply(reply)).toBe(true);
    expect(reply.content).toBe(
      ['one', '[image: image/png, 3 bytes]', '[audio: audio/wav, 6 bytes]', 'the text', '[resource: file:///b.bin (application/octet-stream)]', '[resource link: file:///c.txt (c.txt)]'].join('\n'),
    );
    expect(reply.isError).toBe(false);
  });

  it('cuts a text longer than the limit (100,000 characters by default), saying how long it was', () => {
    const long = 'y'.repeat(100_001);
    expect(mcpReply({ content: [{ type: 'text', text: long.slice(1) }] }).content).toBe(long.slice(1));
    expect(mcpReply({ content: [{ type: 'text', text: long }] }).content).toBe(
      `${long.slice(1)}\n[cut: the answer had 100,001 characters; the first 100,000 are shown (the server's maxResultChars)]`,
    );
    expect(mcpReply({ content: [{ type: 'text', text: 'abcdef' }], isError: true }, 3)).toMatchObject({ isError: true, content: "abc\n[cut: the answer had 6 characters; the first 3 are shown (the server's maxResultChars)]" });
  });

  it('does not cut between the two halves of a character beyond U+FFFF (a lone half is not text)', () => {
    // 'ab😀cd': the emoji is characters 3 and 4 (two UTF-16 units); a cut at 3 would keep its first half alone.
    expect(mcpReply({ content: [{ type: 'text', text: 'ab\u{1F600}cd' }] }, 3).content).toBe(
      "ab\n[cut: the answer had 6 characters; the first 2 are shown (the server's maxResultChars)]",
    );
    expect(mcpReply({ content: [{ type: 'text', text: 'ab\u{1F600}cd' }] }, 4).content).toBe(
      "ab\u{1F600}\n[cut: the answer had 6 characters; the first 4 are shown (the server's maxResultChars)]",
    );
  });

  it('keeps the error flag, and gives structured content as JSON when there are no blocks (and as metadata)', () => {
    expect(mcpReply({ content: [{ type: 'text', text: 'no such file' }], isError: true })).toMatchObject({ content: 'no such file', isError: true });
    expect(mcpReply({ content: [], structuredContent: { sum: 5 } })).toMatchObject({ content: '{"sum":5}', metadata: { structuredContent: { sum: 5 } } });
  });
});
