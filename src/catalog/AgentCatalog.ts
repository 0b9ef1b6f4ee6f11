import type { ResolvedAgent } from '../actors/agentEnvironment.js';
import { ConfigurationError, UnknownAgentError } from '../errors.js';
import type { Model } from '../models/Model.js';
import type { AgentSummary } from '../tools/Delegation.js';
import { runtimeTools } from '../tools/builtinTools.js';
import type { Tool } from '../tools/defineTool.js';
import { fileTools, toolNameOf } from '../tools/files/fileTools.js';
import type { Workspace } from '../tools/files/Workspace.js';
import type { McpServerConfig } from '../tools/mcp/McpServerConfig.js';
import { isMcpToolName } from '../tools/mcp/mcpSelection.js';
import type { AgentFiles, LoadedAgent } from './AgentFiles.js';
import { AgentFileSync, type AgentSource } from './AgentFileSync.js';
import { defineAgent, type Agent, type AgentDefinition } from './defineAgent.js';
import { generalPurpose, resolveAgent, toolNamesOf, type ResolveOptions } from './resolveAgent.js';

/** Where an agent of the catalog came from. */
export type AgentLifecycle = 'catalog' | 'temporary' | 'permanent';

/** The options of an {@link AgentCatalog}. */
export interface AgentCatalogOptions {
  /** Agent files: read once when the catalog is made, and again by name when an agent is spawned. */
  files?: AgentFiles;
  /** The model of agents that name none. */
  model?: Model;
  /** Tools agents may list by name. */
  tools: readonly Tool[];
  /** Tool calls of one turn running at once. */
  maxToolConcurrency: number;
  /** False to run every turn's calls one at a time unless an agent's definition says otherwise. */
  parallel?: boolean;
  /** The folder the file tools work in; without one they answer every call with an error that says so. */
  workspace?: Workspace;
  /** True to refuse an agent file that lists a tool the runtime does not have, instead of skipping the tool. */
  strictAgentFiles?: boolean;
  /** The runtime's MCP servers by name: agents list their tools as `server:tool` or `server:*`. */
  mcpServers?: ReadonlyMap<string, McpServerConfig>;
}

interface Entry extends ResolvedAgent {
  readonly lifecycle: AgentLifecycle;
  /** For agents made during the run: the id and name of the agent that made them. */
  readonly createdBy?: { id: string; name: string };
  /** For agents read from a file: the file and its version when read. */
  readonly file?: AgentSource;
}

/**
 * The runtime's agents by name, with their models and tools looked up: the ones it was created with (in code and in
 * agent files, kept in step with their files by an {@link AgentFileSync}), and the ones agents make during the run
 * (`spawn_agent`). It answers whom each agent may delegate to. It knows no tool by name: what a tool says to an
 * agent and how its calls are planned are the tool's own hooks (see `ToolAccess`).
 */
export class AgentCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly resolving: ResolveOptions;
  /** The agent files, when the catalog has a folder: read again before an agent is spawned, and the files refused. */
  readonly files: AgentFileSync | undefined;
  /** How many agents in the catalog each agent made (by the maker's id). */
  private readonly made = new Map<string, number>();
  private changes = 0;

  constructor(definitions: readonly (Agent | AgentDefinition)[], options: AgentCatalogOptions) {
    const { model, tools, maxToolConcurrency, parallel, workspace, mcpServers } = options;
    this.resolving = {
      model,
      tools: runtimeTools(tools, workspace),
      maxToolConcurrency,
      ...(parallel === undefined ? {} : { parallel }),
      ...(mcpServers ? { mcpServers } : {}),
    };
    for (const given of definitions) this.insert(defineAgent(given), 'catalog');
    this.files = options.files && new AgentFileSync(options.files, {
      sourceOf: (name) => {
        const entry = this.entries.get(name);
        return entry && (entry.file ?? null);
      },
      put: (loaded) => this.putFile(loaded),
      remove: (name) => {
        this.entries.delete(name);
        this.changes += 1;
      },
      // An MCP tool name (`files:*`) is checked when the agent is resolved: its server must be defined (or it is refused).
      hasTool: (name) => isMcpToolName(name) || this.resolving.tools.has(name) || this.resolving.tools.has(toolNameOf(name)),
    }, options.strictAgentFiles === true);
    this.files?.loadAll(); // agents given in code win over files of the same name
    if (this.entries.size === 0) {
      const own = new Set(tools.map((tool) => tool.name));
      const granted = workspace ? fileTools(workspace).filter((tool) => !own.has(tool.name)) : [];
      this.insert(defineAgent(generalPurpose([...tools, ...granted], mcpServers?.keys())), 'catalog');
    }
    for (const entry of this.entries.values()) {
      const missing = entry.file ? undefined : entry.definition.subagents?.find((name) => !this.entries.has(name));
      if (missing !== undefined) throw new ConfigurationError(`Agent "${entry.name}" lists "${missing}" in subagents, but no agent has that name.`);
    }
  }

  /** Changes whenever an agent is added or removed (what delegation tools list may then change). */
  get version(): number {
    return this.changes;
  }

  /** Every agent's name. */
  names(): string[] {
    return [...this.entries.keys()];
  }

  /** The agent of that name, if there is one. */
  get(name: string): ResolvedAgent | undefined {
    return this.entries.get(name);
  }

  /** The agent of that name; throws {@link UnknownAgentError} when there is none. */
  resolve(name: string): ResolvedAgent {
    const entry = this.entries.get(name);
    if (!entry) throw new UnknownAgentError(name, this.names());
    return entry;
  }

  /** Where an agent came from, or undefined for an unknown name. */
  lifecycleOf(name: string): AgentLifecycle | undefined {
    return this.entries.get(name)?.lifecycle;
  }

  /** The runtime's tool of that name (built-in, or given to the runtime). */
  tool(name: string): Tool | undefined {
    return this.resolving.tools.get(name);
  }

  /** True for a tool of the runtime or of any agent (a tool an agent may not call is then not an unknown one). */
  knowsTool(name: string): boolean {
    if (this.resolving.tools.has(name)) return true;
    for (const entry of this.entries.values()) if (entry.tools.has(name)) return true;
    return false;
  }

  /** Adds an agent made during the run by another agent. Throws for a bad definition or a name in use. */
  add(definition: AgentDefinition, lifecycle: 'temporary' | 'permanent', createdBy: { id: string; name: string }): ResolvedAgent {
    const agent = defineAgent(definition);
    if (this.entries.has(agent.name)) {
      throw new ConfigurationError(`An agent named "${agent.name}" already exists.`);
    }
    return this.insert(agent, lifecycle, createdBy);
  }

  /** Removes an agent made during the run; agents the runtime was created with stay. Returns true if removed. */
  remove(name: string): boolean {
    const entry = this.entries.get(name);
    if (!entry || entry.lifecycle === 'catalog') return false;
    this.entries.delete(name);
    if (entry.createdBy) this.count(entry.createdBy.id, -1);
    this.changes += 1;
    return true;
  }

  /** The names of the temporary agents still in the catalog. */
  temporary(): string[] {
    return [...this.entries.values()].filter((entry) => entry.lifecycle === 'temporary').map((entry) => entry.name);
  }

  /** True when the agent of this id made agents still in the catalog (its delegates are then its own list). */
  hasMadeAgents(agentId: string): boolean {
    return this.made.has(agentId);
  }

  /**
   * The agents a caller may delegate to: its `subagents` list (default: every other agent that is not temporary),
   * plus the agents the caller itself made. Temporary agents made by others are never listed.
   */
  delegatesOf(caller: { id: string; name: string }): ResolvedAgent[] {
    const chosen = this.entries.get(caller.name)?.definition.subagents;
    return [...this.entries.values()].filter((entry) => delegates(caller, chosen, entry));
  }

  /** True when the caller may delegate to the agent of this name (as {@link delegatesOf} would list it). */
  mayDelegateTo(caller: { id: string; name: string }, name: string): boolean {
    const entry = this.entries.get(name);
    return entry !== undefined && delegates(caller, this.entries.get(caller.name)?.definition.subagents, entry);
  }

  /** An agent as a delegation tool describes it. */
  summary(agent: ResolvedAgent): AgentSummary {
    return {
      name: agent.name,
      description: agent.definition.description,
      tools: toolNamesOf(agent),
      examples: [...(agent.definition.examples ?? [])],
    };
  }

  /** Puts the agent of a file in, in place of the agent of its name if any. Throws, changing nothing, if it cannot be made. */
  private putFile(loaded: LoadedAgent): void {
    const agent = resolveAgent(defineAgent(loaded.definition), this.resolving);
    this.entries.delete(agent.name);
    this.store({ ...agent, lifecycle: 'catalog', file: { path: loaded.file, version: loaded.version } });
  }

  private insert(definition: Agent, lifecycle: AgentLifecycle, createdBy?: { id: string; name: string }): Entry {
    if (this.entries.has(definition.name)) {
      throw new ConfigurationError(`Two agents are named "${definition.name}"; agent names must be unique.`);
    }
    return this.store({ ...resolveAgent(definition, this.resolving), lifecycle, ...(createdBy ? { createdBy } : {}) });
  }

  private store(entry: Entry): Entry {
    this.entries.set(entry.name, entry);
    if (entry.createdBy) this.count(entry.createdBy.id, 1);
    this.changes += 1;
    return entry;
  }

  private count(maker: string, change: number): void {
    const made = (this.made.get(maker) ?? 0) + change;
    if (made > 0) this.made.set(maker, made);
    else this.made.delete(maker);
  }
}

/** Whether a caller (with its `subagents` list, if any) may delegate to this entry: the rule of `delegatesOf`. */
function delegates(caller: { id: string; name: string }, chosen: readonly string[] | undefined, entry: Entry): boolean {
  if (entry.createdBy?.id === caller.id) return true; // the agents it made itself
  return chosen
    ? chosen.includes(entry.name) || (entry.lifecycle === 'permanent' && entry.createdBy?.name === caller.name)
    : entry.lifecycle !== 'temporary' && entry.name !== caller.name;
}
