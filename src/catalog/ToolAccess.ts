import type { ResolvedAgent, ToolRefusal } from '../actors/agentEnvironment.js';
import { InvalidToolError, errorMessage } from '../errors.js';
import type { ToolSchema } from '../models/Model.js';
import type { AgentSummary } from '../tools/Delegation.js';
import type { PlanLookup, Tool, ToolAudience } from '../tools/defineTool.js';
import type { McpServers } from '../tools/mcp/McpServers.js';
import type { PlannedCall } from '../tools/schedule.js';
import type { AgentCatalog } from './AgentCatalog.js';

/** What tool access reads of the catalog. */
export type CatalogView = Pick<AgentCatalog, 'version' | 'get' | 'tool' | 'knowsTool' | 'delegatesOf' | 'summary' | 'hasMadeAgents'>;

/** The tool lists of one agent definition. */
interface Lists {
  /** The list every caller at every depth is offered, when no tool has a `describe` hook or `delegates`. */
  readonly fixed: readonly ToolSchema[] | undefined;
  /** Otherwise, the lists made for the catalog of this version: by side of the depth limit, and by caller for a caller that made agents. */
  described?: Map<string, readonly ToolSchema[]>;
  version: number;
}

/**
 * What each agent of a catalog may call at its depth: the tools it is offered as the model sees them, the tool a
 * call names (the allow-list and the depth limit, enforced where tools run), and how the planner sees a call. What a
 * tool says to an agent and how its calls are planned are the tool's own hooks (`describe`, `plan`); this only
 * calls them, and keeps the lists they make per agent definition until the catalog's agents change.
 */
export class ToolAccess {
  private readonly lists = new WeakMap<ResolvedAgent, Lists>();
  /** What `plan` hooks may look up; made once, so planning a call allocates nothing more. */
  private readonly lookup: PlanLookup;
  /** Each agent's tools with its MCP servers' tools, made once those servers have settled. */
  private readonly withMcp = new WeakMap<ResolvedAgent, ReadonlyMap<string, Tool>>();

  constructor(
    private readonly catalog: CatalogView,
    private readonly maxDepth: number,
    /** The runtime's MCP servers, for agents that use their tools. */
    private readonly mcp?: McpServers,
  ) {
    this.lookup = {
      roleOf: (name) => catalog.get(name)?.definition.role,
      readsOnly: (name) => readsOnly(catalog.get(name)),
      tool: (name) => catalog.tool(name),
    };
  }

  /**
   * The tools an agent at this depth is offered, as the model sees them: delegation tools left out at the depth
   * limit, and each tool described (or left out) by its `describe` hook for this agent.
   */
  offered(agent: ResolvedAgent, depth: number, callerId: string): readonly ToolSchema[] {
    let lists = this.lists.get(agent);
    if (!lists) {
      const tools = this.toolsOf(agent);
      lists = { fixed: fixedSchemas(tools), version: this.catalog.version };
      // An agent whose MCP servers are still starting (a caller that did not wait for them) is asked again next time.
      if (!agent.mcp || this.withMcp.has(agent)) this.lists.set(agent, lists);
    }
    if (lists.fixed) return lists.fixed;
    if (!lists.described || lists.version !== this.catalog.version) {
      lists.described = new Map();
      lists.version = this.catalog.version;
    }
    const atLimit = depth >= this.maxDepth;
    // Agents an agent made are only its own, so a caller's list is personal once it has made one.
    const key = this.catalog.hasMadeAgents(callerId) ? `${atLimit}|${callerId}` : atLimit ? 'limit' : 'below';
    let schemas = lists.described.get(key);
    if (!schemas) {
      schemas = this.describe(agent, atLimit, callerId);
      lists.described.set(key, schemas);
    }
    return schemas;
  }

  /** The tool a call names, or why this agent may not call it. */
  toolFor(agent: ResolvedAgent, depth: number, toolName: string): Tool | ToolRefusal {
    const atLimit = depth >= this.maxDepth;
    const tools = this.toolsOf(agent);
    const tool = tools.get(toolName) ?? (agent.mcp && this.mcp?.unavailable(agent.mcp, toolName));
    if (tool && !(atLimit && tool.delegates)) return tool;
    if (tool) {
      return {
        reason: 'depth_limit',
        error: `"${toolName}" is refused: agent "${agent.name}" is at depth ${depth}, the runtime's delegation limit (maxDepth ${this.maxDepth}). Do the work yourself.`,
      };
    }
    // Refused: name what the agent may call instead.
    const own = [...tools.values()].filter((known) => !(atLimit && known.delegates)).map((known) => known.name);
    if (this.catalog.knowsTool(toolName)) {
      const listing = own.length > 0 ? `Its tools: ${own.join(', ')}.` : 'It has no tools.';
      return { reason: 'not_allowed', error: `Tool "${toolName}" is not allowed for agent "${agent.name}". ${listing}` };
    }
    return {
      reason: 'unknown',
      error: `Unknown tool "${toolName}". ${own.length > 0 ? `Available tools: ${own.join(', ')}.` : 'This agent has no tools.'}`,
    };
  }

  /**
   * How the planner sees a valid call: the tool's `plan` (its hook, or its kind and targets). Throws when the hook
   * gives no plan (a promise from an async hook, an unknown kind, targets that are not a list of strings), as a hook
   * that throws does: the caller then plans the call as its tool's kind, with unknown targets.
   */
  plan(tool: Tool, args: unknown): PlannedCall {
    const planned: unknown = tool.plan(args as never, this.lookup);
    if (isPlannedCall(planned)) return planned;
    throw new InvalidToolError(`Tool "${tool.name}": its plan must be { kind: 'read' | 'write' | 'other', targets?: string[] }, given at once.`, tool.name);
  }

  /** The tools an agent may call: its own, and its MCP servers' (those listed so far, until they have all settled). */
  private toolsOf(agent: ResolvedAgent): ReadonlyMap<string, Tool> {
    if (!agent.mcp || !this.mcp) return agent.tools;
    const made = this.withMcp.get(agent);
    if (made) return made;
    const tools = new Map([...agent.tools, ...this.mcp.toolsOf(agent.mcp)]);
    if (this.mcp.settled(agent.mcp)) this.withMcp.set(agent, tools);
    return tools;
  }

  private describe(agent: ResolvedAgent, atLimit: boolean, callerId: string): ToolSchema[] {
    let delegates: readonly AgentSummary[] | undefined;
    const audience: ToolAudience = {
      agentName: agent.name,
      delegates: () =>
        (delegates ??= this.catalog.delegatesOf({ id: callerId, name: agent.name }).map((entry) => this.catalog.summary(entry))),
    };
    const schemas: ToolSchema[] = [];
    for (const tool of this.toolsOf(agent).values()) {
      if (atLimit && tool.delegates) continue;
      const description = tool.describe ? described(tool, audience) : tool.schema.description;
      if (description === false) continue;
      schemas.push(description === tool.schema.description ? tool.schema : { ...tool.schema, description });
    }
    return schemas;
  }
}

/**
 * What a tool's `describe` hook writes for one agent. A hook that throws, or answers anything but text or `false` (a
 * promise from an async hook), is an {@link InvalidToolError} naming the tool, which fails the agent.
 */
function described(tool: Tool, audience: ToolAudience): string | false {
  let description: unknown;
  try {
    description = tool.describe!(audience);
  } catch (error) {
    throw new InvalidToolError(`Tool "${tool.name}": its describe hook threw (${errorMessage(error)}).`, tool.name);
  }
  if (typeof description === 'string' || description === false) return description;
  const got = description instanceof Promise ? 'a promise' : description === null ? 'null' : `a ${typeof description}`;
  throw new InvalidToolError(`Tool "${tool.name}": its describe hook must answer a description or false at once (it gave ${got}).`, tool.name);
}

/** The schemas of tools that read the same to every caller at every depth, or undefined when some do not. */
function fixedSchemas(tools: ReadonlyMap<string, Tool>): readonly ToolSchema[] | undefined {
  const list = [...tools.values()];
  return list.some((tool) => tool.describe !== undefined || tool.delegates === true) ? undefined : list.map((tool) => tool.schema);
}

/** True for what a plan hook must give: a known kind, and targets that are a list of strings or none. */
function isPlannedCall(value: unknown): value is PlannedCall {
  if (typeof value !== 'object' || value === null) return false;
  const { kind, targets } = value as Partial<PlannedCall>;
  if (kind !== 'read' && kind !== 'write' && kind !== 'other') return false;
  return targets === undefined || (Array.isArray(targets) && targets.every((target) => typeof target === 'string'));
}

/** True when the agent exists and every tool it has is a `read` tool. */
function readsOnly(agent: ResolvedAgent | undefined): boolean {
  if (!agent) return false;
  for (const tool of agent.tools.values()) if (tool.kind !== 'read') return false;
  return true;
}
