import type { ResolvedAgent } from '../actors/agentEnvironment.js';
import { ConfigurationError } from '../errors.js';
import type { Model } from '../models/Model.js';
import { indexTools, type Tool } from '../tools/defineTool.js';
import { toolNameOf } from '../tools/files/fileTools.js';
import type { McpServerConfig } from '../tools/mcp/McpServerConfig.js';
import { isMcpToolName, selectMcp } from '../tools/mcp/mcpSelection.js';
import type { Agent, AgentDefinition } from './defineAgent.js';

/** What a definition is resolved against: the runtime's model and tools. */
export interface ResolveOptions {
  /** The model of agents that name none. */
  readonly model?: Model | undefined;
  /** The runtime's tools by name (built-in and given), for agents that list tools by name. */
  readonly tools: ReadonlyMap<string, Tool>;
  /** Tool calls of one turn running at once. */
  readonly maxToolConcurrency: number;
  /** False when the runtime runs every turn's calls one at a time (an agent's definition may say otherwise). */
  readonly parallel?: boolean;
  /** The runtime's MCP servers by name, for agents that list `server:*` or `server:tool`. */
  readonly mcpServers?: ReadonlyMap<string, McpServerConfig>;
}

const NO_SERVERS: ReadonlyMap<string, McpServerConfig> = new Map();

/**
 * An agent definition with its model and tools looked up. A Claude Code tool name (`Read`, `Grep`, …) stands for
 * its file tool, unless the runtime has a tool of that very name. Throws {@link ConfigurationError} for an agent with
 * no model, or one that lists a tool the runtime does not have (or an MCP tool of a server that neither it nor the
 * runtime defines). MCP tools are only chosen here; they are known once their servers start.
 */
export function resolveAgent(definition: Agent, options: ResolveOptions): ResolvedAgent {
  const { model, tools, maxToolConcurrency, parallel = true } = options;
  const chosen = typeof definition.model === 'object' ? definition.model : model;
  if (!chosen) throw new ConfigurationError(`Agent "${definition.name}" has no model: pass createRuntime({ model }).`);
  const listed = definition.tools ?? [];
  const mcpNames = listed.filter((tool): tool is string => typeof tool === 'string' && isMcpToolName(tool));
  const mcp = selectMcp(definition.name, mcpNames, definition.mcpServers, options.mcpServers ?? NO_SERVERS);
  const own = indexTools(
    listed.filter((tool) => typeof tool !== 'string' || !isMcpToolName(tool)).map((tool) => {
      if (typeof tool !== 'string') return tool;
      const found = tools.get(tool) ?? tools.get(toolNameOf(tool));
      if (!found) {
        throw new ConfigurationError(
          `Agent "${definition.name}" lists the tool "${tool}", which is not in createRuntime({ tools }) nor a built-in tool.`,
        );
      }
      return found;
    }),
  );
  return {
    name: definition.name,
    definition,
    model: chosen,
    ...(typeof definition.model === 'string' ? { modelName: definition.model } : {}),
    ...(definition.temperature === undefined ? {} : { temperature: definition.temperature }),
    tools: own,
    ...(mcp ? { mcp } : {}),
    // One at a time runs the calls in the model's order: the executor starts ready calls in index order.
    maxToolConcurrency: (definition.enableParallelExecution ?? parallel) ? maxToolConcurrency : 1,
  };
}

/** Every tool name an agent lists: its tools, then its MCP entries (`files:*`, `files:read_file`). */
export function toolNamesOf(agent: ResolvedAgent): string[] {
  const names = [...agent.tools.keys()];
  return agent.mcp ? [...names, ...agent.mcp.listed] : names;
}

/**
 * The agent a runtime gets when none is defined: a generalist with every tool the runtime was given (the file tools
 * too when it has a workspace) and every tool of its MCP servers.
 */
export function generalPurpose(tools: readonly Tool[], mcpServers: Iterable<string> = []): AgentDefinition {
  return {
    name: 'general-purpose',
    description: 'A general agent for research, searching and multi-step tasks that need several tools.',
    systemPrompt:
      'You are a capable general assistant. Work on the task step by step, use your tools when they help, and finish ' +
      'with a complete, direct answer.',
    tools: [...tools.map((tool) => tool.name), ...[...mcpServers].map((server) => `${server}:*`)],
  };
}
