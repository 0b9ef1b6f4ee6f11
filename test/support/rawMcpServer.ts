// A stdio MCP server written without the SDK, line by line in JSON-RPC, so that it can answer what the SDK's own server
// refuses to send: its one tool `odd` answers a text block beside a block of a type MCP does not define and an image
// block without its data (a server of another language, or of a later MCP version, may).
//   node --import tsx test/support/rawMcpServer.ts
import { createInterface } from 'node:readline';

const answers: Record<string, (params: Record<string, unknown>) => unknown> = {
  initialize: (params) => ({
    protocolVersion: params.protocolVersion,
    capabilities: { tools: {} },
    serverInfo: { name: 'raw', version: '1.0.0' },
  }),
  'tools/list': () => ({ tools: [{ name: 'odd', description: 'Answers blocks MCP does not define.', inputSchema: { type: 'object' } }] }),
  'tools/call': () => ({ content: [{ type: 'text', text: 'Here it is:' }, { type: 'widget', size: 3 }, { type: 'image' }] }),
};

for await (const line of createInterface({ input: process.stdin })) {
  const request = JSON.parse(line) as { id?: number; method: string; params?: Record<string, unknown> };
  const answer = answers[request.method];
  if (request.id === undefined) continue; // a notification
  const reply = answer
    ? { jsonrpc: '2.0', id: request.id, result: answer(request.params ?? {}) }
    : { jsonrpc: '2.0', id: request.id, error: { code: -32601, message: `no method ${request.method}` } };
  process.stdout.write(`${JSON.stringify(reply)}\n`);
}
