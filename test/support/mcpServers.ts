// MCP servers for tests: the reference filesystem server from the npm registry (a devDependency), started with this
// Node on its installed entry file so no network is needed; and a streamable HTTP server of the SDK's own, in this
// process on 127.0.0.1.
import { createServer, type Server } from 'node:http';
import { createRequire } from 'node:module';
import type { AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';
import type { McpServerConfig } from 'troupe';

const require = createRequire(import.meta.url);

/** The installed entry file of `@modelcontextprotocol/server-filesystem`. */
export const FILESYSTEM_SERVER = require.resolve('@modelcontextprotocol/server-filesystem/dist/index.js');

/** The filesystem server over stdio, allowed into `dir`. */
export function filesystemServer(dir: string, extra: Partial<McpServerConfig> = {}): McpServerConfig {
  return { command: process.execPath, args: [FILESYSTEM_SERVER, dir], ...extra } as McpServerConfig;
}

/** True while a process of this id runs. */
export function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/**
 * A streamable HTTP MCP server on 127.0.0.1 (a free port) with two tools: `add` (read-only) and `shout`. Stateless:
 * each request gets a fresh server and transport, as the SDK's stateless example does.
 */
export async function httpMcpServer(): Promise<{ url: string; close: () => Promise<void> }> {
  const server: Server = createServer((request, response) => {
    const mcp = new McpServer({ name: 'calc', version: '1.0.0' });
    mcp.registerTool(
      'add',
      { description: 'Adds two numbers.', inputSchema: { a: z.number(), b: z.number() }, annotations: { readOnlyHint: true } },
      ({ a, b }) => ({ content: [{ type: 'text', text: String(a + b) }] }),
    );
    mcp.registerTool('shout', { description: 'Shouts the text.', inputSchema: { text: z.string() } }, ({ text }) => ({
      content: [{ type: 'text', text: text.toUpperCase() }],
    }));
    const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    response.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    void mcp.connect(transport).then(() => transport.handleRequest(request, response));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

/** The scripted stdio server of `stdioMcpServer.ts` (see there for its tools), run by this Node through tsx. */
export function scriptedStdioServer(mode: 'normal' | 'bad-schema' = 'normal', extra: Partial<McpServerConfig> = {}): McpServerConfig {
  const script = fileURLToPath(new URL('./stdioMcpServer.ts', import.meta.url));
  return { command: process.execPath, args: ['--import', 'tsx', script, mode], ...extra } as McpServerConfig;
}

/** The SDK-less stdio server of `rawMcpServer.ts` (one tool, `odd`), run by this Node through tsx. */
export function rawStdioServer(): McpServerConfig {
  return { command: process.execPath, args: ['--import', 'tsx', fileURLToPath(new URL('./rawMcpServer.ts', import.meta.url))] };
}
