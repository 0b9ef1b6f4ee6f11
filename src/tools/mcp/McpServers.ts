import type { Tool } from '../defineTool.js';
import { McpConnection, type McpServerStatus } from './McpConnection.js';
import type { McpServerConfig } from './McpServerConfig.js';
import type { McpSelection } from './mcpSelection.js';
import { mcpTool, unavailableMcpTool } from './mcpTool.js';

/**
 * The MCP servers of one runtime: its own (`createRuntime({ mcpServers })`) and those agents define, each started
 * once, on the first turn of an agent that needs it, and closed with the runtime. A server is one connection per name
 * and definition: an agent that defines a server exactly as the runtime does shares the runtime's; one that defines it
 * otherwise gets a connection of its own under the same name.
 */
export class McpServers {
  private readonly connections = new Map<string, McpConnection>();
  /** Each agent's MCP tools by name, made once its servers have settled. */
  private readonly made = new WeakMap<McpSelection, ReadonlyMap<string, Tool>>();
  private closed = false;

  constructor(
    /** The runtime's servers by name. */
    readonly configs: ReadonlyMap<string, McpServerConfig>,
  ) {}

  /** Starts the servers an agent needs (the ones not started yet); resolves when each is ready or has failed. */
  async ready(selection: McpSelection): Promise<void> {
    await Promise.all([...selection.servers].map(([name, { config }]) => this.connection(name, config).start()));
  }

  /** True when every server of the selection is ready or will never be. */
  settled(selection: McpSelection): boolean {
    return [...selection.servers].every(([name, { config }]) => this.connection(name, config).settled);
  }

  /** The MCP tools of an agent by name (`server:tool`): the chosen tools of each server that listed its tools. */
  toolsOf(selection: McpSelection): ReadonlyMap<string, Tool> {
    const made = this.made.get(selection);
    if (made) return made;
    const tools = new Map<string, Tool>();
    for (const [name, choice] of selection.servers) {
      const connection = this.connection(name, choice.config);
      for (const info of connection.listed()) {
        if (choice.tools !== '*' && !choice.tools.has(info.name)) continue;
        const tool = mcpTool(connection, info);
        tools.set(tool.name, tool);
      }
    }
    if (this.settled(selection)) this.made.set(selection, tools);
    return tools;
  }

  /**
   * For a `server:tool` name the agent may call but was not offered, because the server is not available (it failed
   * to start or died) or listed that tool with an entry that is not valid: a tool whose every call is an error result
   * that says why. Undefined for any other name.
   */
  unavailable(selection: McpSelection, name: string): Tool | undefined {
    const at = name.indexOf(':');
    if (at < 0) return undefined;
    const server = name.slice(0, at);
    const tool = name.slice(at + 1);
    const choice = selection.servers.get(server);
    if (!choice || (choice.tools !== '*' && !choice.tools.has(tool))) return undefined;
    const connection = this.connection(server, choice.config);
    return connection.unavailable(tool) === undefined ? undefined : unavailableMcpTool(connection, tool);
  }

  /** True while some server starts or answers a call: work in real time that a simulation waits for. */
  busy(): boolean {
    for (const connection of this.connections.values()) if (connection.busy) return true;
    return false;
  }

  /** How each server stands, in the order they were first needed (the runtime's unused ones as `idle`). */
  status(): McpServerStatus[] {
    for (const [name, config] of this.configs) this.connection(name, config);
    return [...this.connections.values()].map((connection) => connection.status());
  }

  /** Closes every connection and ends every child process; a server needed after this fails at once. */
  async close(): Promise<void> {
    this.closed = true;
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }

  private connection(name: string, config: McpServerConfig): McpConnection {
    const key = `${name}\u0000${JSON.stringify(config)}`;
    let connection = this.connections.get(key);
    if (!connection) {
      connection = new McpConnection(name, config);
      if (this.closed) void connection.close();
      this.connections.set(key, connection);
    }
    return connection;
  }
}
