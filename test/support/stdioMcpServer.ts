// A stdio MCP server for tests, written with the SDK's low-level Server so that it can answer what a well-behaved
// server would not. Its tools: `echo` (read-only; answers its arguments as JSON), `fail` (an answer with isError),
// `crash` (the process exits mid-call) and `hang` (never answers). With `bad-schema` it also lists `bad`, whose
// inputSchema is not an object schema.
//   node --import tsx test/support/stdioMcpServer.ts [normal | bad-schema]
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';

const mode = process.argv[2] ?? 'normal';
const server = new Server({ name: 'scripted', version: '1.0.0' }, { capabilities: { tools: {} } });
const object = { type: 'object' as const };

server.setRequestHandler(ListToolsRequestSchema, () => ({
  tools: [
    { name: 'echo', description: 'Answers its arguments.', inputSchema: object, annotations: { readOnlyHint: true } },
    { name: 'fail', description: 'Always fails.', inputSchema: object },
    { name: 'crash', description: 'Ends the server.', inputSchema: object },
    { name: 'hang', description: 'Never answers.', inputSchema: object },
    ...(mode === 'bad-schema' ? [{ name: 'bad', description: 'A string is not an object schema.', inputSchema: { type: 'string' } }] : []),
  ] as never,
}));

server.setRequestHandler(CallToolRequestSchema, async ({ params }): Promise<CallToolResult> => {
  switch (params.name) {
    case 'echo':
      return { content: [{ type: 'text', text: JSON.stringify(params.arguments ?? {}) }] };
    case 'fail':
      return { content: [{ type: 'text', text: 'It failed.' }], isError: true };
    case 'crash':
      process.stderr.write('crashing on purpose\n');
      process.exit(7);
    case 'hang':
      return new Promise<never>(() => {});
    default:
      throw new Error(`no tool ${params.name}`);
  }
});

await server.connect(new StdioServerTransport());
