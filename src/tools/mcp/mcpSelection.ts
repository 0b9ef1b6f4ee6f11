import { ConfigurationError } from '../../errors.js';
import { readMcpEntries, type McpServerConfig, type McpServerEntries } from './McpServerConfig.js';

/** The tools of one server an agent may call: all of them (`*`), or those named. */
export interface McpServerChoice {
  /** How to reach the server: the agent's own definition of it, or the runtime's. */
  readonly config: McpServerConfig;
  readonly tools: '*' | ReadonlySet<string>;
}

/** The MCP tools an agent may call, by server name: what its `tools` names (`files:*`, `files:read_file`) and its `mcpServers`. */
export interface McpSelection {
  readonly servers: ReadonlyMap<string, McpServerChoice>;
  /** The agent's MCP entries as names (`files:*`, `files:read_file`), for its summary and its pool key. */
  readonly listed: readonly string[];
}

/** True for a tool name that names an MCP server's tool (`server:tool` or `server:*`): no other tool name has a colon. */
export function isMcpToolName(name: string): boolean {
  return name.includes(':');
}

/**
 * The MCP tools of an agent: each `server:*` or `server:tool` in its tools, and every tool of each server in its
 * `mcpServers` (one it defines, or one of the runtime's it names). A server the agent defines takes the place of the
 * runtime's of the same name for this agent. Undefined for an agent with none; a {@link ConfigurationError} for a name
 * of a server that neither the agent nor the runtime has.
 */
export function selectMcp(
  agentName: string,
  toolNames: readonly string[],
  entries: McpServerEntries | undefined,
  runtime: ReadonlyMap<string, McpServerConfig>,
): McpSelection | undefined {
  const { own, named } = entries === undefined ? { own: new Map<string, McpServerConfig>(), named: [] } : readMcpEntries(entries);
  const chosen = new Map<string, { config: McpServerConfig; tools: '*' | Set<string> }>();
  const configOf = (server: string, what: string): McpServerConfig => {
    const config = own.get(server) ?? runtime.get(server);
    if (config) return config;
    const known = [...new Set([...own.keys(), ...runtime.keys()])];
    throw new ConfigurationError(
      `Agent "${agentName}" ${what}, but there is no MCP server "${server}" (${known.length > 0 ? `servers: ${known.join(', ')}` : 'createRuntime({ mcpServers }) or the agent\'s mcpServers define them'}).`,
    );
  };
  const choose = (server: string, tool: string, what: string) => {
    const entry = chosen.get(server) ?? { config: configOf(server, what), tools: new Set<string>() };
    if (tool === '*') entry.tools = '*';
    else if (entry.tools !== '*') entry.tools.add(tool);
    chosen.set(server, entry);
  };
  for (const server of [...own.keys(), ...named]) choose(server, '*', `names the MCP server "${server}" in mcpServers`);
  for (const name of toolNames) {
    const at = name.indexOf(':');
    const server = name.slice(0, at);
    const tool = name.slice(at + 1);
    if (server === '' || tool === '') {
      throw new ConfigurationError(`Agent "${agentName}" lists the tool "${name}": an MCP tool is named "server:tool" or "server:*".`);
    }
    choose(server, tool, `lists the tool "${name}"`);
  }
  if (chosen.size === 0) return undefined;
  const listed = [...chosen].flatMap(([server, { tools }]) => (tools === '*' ? [`${server}:*`] : [...tools].map((tool) => `${server}:${tool}`)));
  return { servers: chosen, listed };
}
