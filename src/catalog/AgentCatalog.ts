import type { ResolvedAgent } from '../actors/agentEnvironment.js';
import { AgentFileError, ConfigurationError, UnknownAgentError, errorMessage } from '../errors.js';
import type { Model } from '../models/Model.js';
import type { AgentSummary } from '../tools/Delegation.js';
import { runtimeTools } from '../tools/builtinTools.js';
import { indexTools, type Tool } from '../tools/defineTool.js';
import type { AgentFiles, LoadedAgent } from './AgentFiles.js';
import { defineAgent, type Agent, type AgentDefinition } from './defineAgent.js';

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
}

interface Entry extends ResolvedAgent {
  readonly lifecycle: AgentLifecycle;
  /** For agents made during the run: the id and name of the agent that made them. */
  readonly createdBy?: { id: string; name: string };
  /** For agents read from a file: the file and its version (size and modification time) when read. */
  readonly file?: { path: string; version: string };
}

/**
 * The runtime's agents by name, with their models and tools looked up: the ones it was created with, and the ones
 * agents make during the run (`spawn_agent`). It answers whom each agent may delegate to. It knows no tool by name:
 * what a tool says to an agent and how its calls are planned are the tool's own hooks (see `ToolAccess`).
 */
export class AgentCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly tools: Map<string, Tool>;
  private readonly options: AgentCatalogOptions;
  private changes = 0;
  /** How many agents in the catalog each agent made (by the maker's id). */
  private readonly made = new Map<string, number>();

  /** Agent files that were refused, each naming the file and the field; the other agents loaded. */
  readonly fileErrors: AgentFileError[] = [];

  constructor(definitions: readonly (Agent | AgentDefinition)[], options: AgentCatalogOptions) {
    this.options = options;
    this.tools = runtimeTools(options.tools);
    for (const given of definitions) this.insert(defineAgent(given), 'catalog');
    if (options.files) {
      const scan = options.files.scan();
      this.fileErrors.push(...scan.errors);
      // Agents given in code win over files of the same name.
      for (const loaded of scan.agents) if (!this.entries.has(loaded.definition.name)) this.insertFile(loaded);
    }
    if (this.entries.size === 0) this.insert(defineAgent(generalPurpose(options.tools)), 'catalog');
    for (const entry of [...this.entries.values()]) {
      for (const name of entry.definition.subagents ?? []) {
        if (this.entries.has(name)) continue;
        const message = `lists "${name}" in subagents, but no agent has that name`;
        if (!entry.file) throw new ConfigurationError(`Agent "${entry.name}" ${message}.`);
        this.entries.delete(entry.name);
        this.fileErrors.push(new AgentFileError(entry.file.path, 'subagents', message));
      }
    }
  }

  /** Changes whenever an agent is added or removed (what delegation tools list may then change). */
  get version(): number {
    return this.changes;
  }

  /**
   * Brings an agent up to date with its file before it is spawned: reads `<name>.md` again if it changed (or for an
   * agent not known yet). Returns why a file was refused, if one was; an agent given in code is left as it is.
   */
  refresh(name: string): AgentFileError | undefined {
    const { files } = this.options;
    const entry = this.entries.get(name);
    if (!files || (entry && !entry.file)) return undefined;
    try {
      const loaded = files.load(name);
      if (loaded && loaded.version !== entry?.file?.version) {
        if (entry) this.entries.delete(name);
        this.insertFile(loaded, entry);
      }
      return undefined;
    } catch (error) {
      return this.refuse(error instanceof AgentFileError ? error : new AgentFileError(name, 'path', errorMessage(error)));
    }
  }

  /** Records a refused file once (an edit refused on every spawn is one error), and returns it. */
  private refuse(error: AgentFileError): AgentFileError {
    if (!this.fileErrors.some((known) => known.message === error.message)) this.fileErrors.push(error);
    return error;
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

  /** The runtime's tool of that name (built-in, or given to the runtime). */
  tool(name: string): Tool | undefined {
    return this.tools.get(name);
  }

  /** True for a tool of the runtime or of any agent (a tool an agent may not call is then not an unknown one). */
  knowsTool(name: string): boolean {
    if (this.tools.has(name)) return true;
    for (const entry of this.entries.values()) if (entry.tools.has(name)) return true;
    return false;
  }

  /** True when the agent of this id made agents still in the catalog (its delegates are then its own list). */
  hasMadeAgents(agentId: string): boolean {
    return this.made.has(agentId);
  }

  /** The names of the temporary agents still in the catalog. */
  temporary(): string[] {
    return [...this.entries.values()].filter((entry) => entry.lifecycle === 'temporary').map((entry) => entry.name);
  }

  /**
   * The agents a caller may delegate to: its `subagents` list (default: every other agent that is not temporary),
   * plus the agents the caller itself made. Temporary agents made by others are never listed.
   */
  delegatesOf(caller: { id: string; name: string }): ResolvedAgent[] {
    const self = this.entries.get(caller.name);
    const chosen = self?.definition.subagents;
    const result: ResolvedAgent[] = [];
    for (const entry of this.entries.values()) {
      const mine = entry.createdBy?.id === caller.id;
      const listed = chosen
        ? chosen.includes(entry.name) || (entry.lifecycle === 'permanent' && entry.createdBy?.name === caller.name)
        : entry.lifecycle !== 'temporary' && entry.name !== caller.name;
      if (mine || listed) result.push(entry);
    }
    return result;
  }

  /** An agent as a delegation tool describes it. */
  summary(agent: ResolvedAgent): AgentSummary {
    return {
      name: agent.name,
      description: agent.definition.description,
      tools: [...agent.tools.keys()],
      examples: [...(agent.definition.examples ?? [])],
    };
  }

  /**
   * Adds an agent read from a file. A file whose agent cannot be made (an unknown tool, an unknown sub-agent once
   * the catalog is loaded) is refused and reported, and the version that ran before, if any, stays in use.
   */
  private insertFile(loaded: LoadedAgent, previous?: Entry): void {
    try {
      const entry = this.insert(defineAgent(loaded.definition), 'catalog', undefined, { path: loaded.file, version: loaded.version });
      const missing = previous ? entry.definition.subagents?.find((name) => !this.entries.has(name)) : undefined;
      if (missing !== undefined) {
        this.entries.delete(entry.name);
        throw new AgentFileError(loaded.file, 'subagents', `lists "${missing}" in subagents, but no agent has that name`);
      }
    } catch (error) {
      if (previous) this.entries.set(previous.name, previous);
      if (error instanceof AgentFileError) this.refuse(error);
      else this.refuse(new AgentFileError(loaded.file, /tool/.test(errorMessage(error)) ? 'tools' : 'frontmatter', errorMessage(error)));
    }
  }

  private insert(
    definition: Agent,
    lifecycle: AgentLifecycle,
    createdBy?: { id: string; name: string },
    file?: { path: string; version: string },
  ): Entry {
    if (this.entries.has(definition.name)) {
      throw new ConfigurationError(`Two agents are named "${definition.name}"; agent names must be unique.`);
    }
    const model = typeof definition.model === 'object' ? definition.model : this.options.model;
    if (!model) throw new ConfigurationError(`Agent "${definition.name}" has no model: pass createRuntime({ model }).`);
    const tools = indexTools(
      (definition.tools ?? []).map((tool) => {
        if (typeof tool !== 'string') return tool;
        const found = this.tools.get(tool);
        if (!found) {
          throw new ConfigurationError(
            `Agent "${definition.name}" lists the tool "${tool}", which is not in createRuntime({ tools }) nor a built-in tool.`,
          );
        }
        return found;
      }),
    );
    const entry: Entry = {
      name: definition.name,
      definition,
      model,
      ...(typeof definition.model === 'string' ? { modelName: definition.model } : {}),
      ...(definition.temperature === undefined ? {} : { temperature: definition.temperature }),
      tools,
      maxToolConcurrency: this.options.maxToolConcurrency,
      lifecycle,
      ...(file ? { file } : {}),
      ...(createdBy ? { createdBy } : {}),
    };
    this.entries.set(definition.name, entry);
    if (createdBy) this.count(createdBy.id, 1);
    this.changes += 1;
    return entry;
  }

  private count(maker: string, change: number): void {
    const made = (this.made.get(maker) ?? 0) + change;
    if (made > 0) this.made.set(maker, made);
    else this.made.delete(maker);
  }
}

/** The agent a runtime gets when none is defined: a generalist with every tool of the runtime. */
function generalPurpose(tools: readonly Tool[]): AgentDefinition {
  return {
    name: 'general-purpose',
    description: 'A general agent for research, searching and multi-step tasks that need several tools.',
    systemPrompt:
      'You are a capable general assistant. Work on the task step by step, use your tools when they help, and finish ' +
      'with a complete, direct answer.',
    tools: tools.map((tool) => tool.name),
  };
}
