import type { ResolvedAgent, ToolRefusal } from '../actors/agentEnvironment.js';
import { AgentFileError, ConfigurationError, UnknownAgentError, errorMessage } from '../errors.js';
import type { Model, ToolSchema } from '../models/Model.js';
import type { AgentSummary } from '../tools/Delegation.js';
import { builtinTools, DELEGATION_TOOLS } from '../tools/builtinTools.js';
import { indexTools, type Tool } from '../tools/defineTool.js';
import type { PlannedCall } from '../tools/schedule.js';
import type { AgentFiles, LoadedAgent } from './AgentFiles.js';
import { defineAgent, type Agent, type AgentDefinition } from './defineAgent.js';
import { describeAssignTask, describeParallelTasks } from './describeAgents.js';

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
  /** Agents at this depth or deeper get no delegation tools. */
  maxDepth: number;
}

interface Entry extends ResolvedAgent {
  readonly lifecycle: AgentLifecycle;
  /** True when the agent lists a delegation tool (its tool list then depends on its depth and the catalog). */
  readonly delegating: boolean;
  /** The schemas of its tools, for an agent that does not delegate. */
  readonly schemas: readonly ToolSchema[];
  /** For agents made during the run: the id and name of the agent that made them. */
  readonly createdBy?: { id: string; name: string };
  /** For agents read from a file: the file and its version (size and modification time) when read. */
  readonly file?: { path: string; version: string };
}

/**
 * The runtime's agents by name, with their models and tools looked up: the ones it was created with, and the ones
 * agents make during the run (`spawn_agent`). It answers what each agent may call at its depth, whom it may
 * delegate to, and how `assign_task` reads to it.
 */
export class AgentCatalog {
  private readonly entries = new Map<string, Entry>();
  private readonly tools: Map<string, Tool>;
  private readonly options: AgentCatalogOptions;
  /** Bumped whenever an agent is added or removed, so cached tool descriptions are rebuilt. */
  private version = 0;
  private readonly schemas = new Map<string, { version: number; schemas: readonly ToolSchema[] }>();
  /** How many agents in the catalog each agent made (by the maker's id). */
  private readonly made = new Map<string, number>();

  /** Agent files that were refused, each naming the file and the field; the other agents loaded. */
  readonly fileErrors: AgentFileError[] = [];

  constructor(definitions: readonly (Agent | AgentDefinition)[], options: AgentCatalogOptions) {
    this.options = options;
    for (const tool of options.tools) {
      if (DELEGATION_TOOLS.has(tool.name)) {
        throw new ConfigurationError(`The tool name "${tool.name}" belongs to a built-in delegation tool; pick another name.`);
      }
    }
    // A tool of the runtime's with the name of a built-in messaging tool (`reply`, `publish`, …) takes its place.
    const own = new Set(options.tools.map((tool) => tool.name));
    this.tools = indexTools([...builtinTools.filter((tool) => !own.has(tool.name)), ...options.tools]);
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
    this.version += 1;
    return true;
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
   * The tools an agent at this depth is offered, as the model sees them. At the depth limit the delegation tools
   * are left out; `assign_task` and `parallel_tasks` list only the agents this agent may delegate to, and are left
   * out when there are none.
   */
  toolSchemas(agent: ResolvedAgent, depth: number, callerId: string): readonly ToolSchema[] {
    const known = agent as Partial<Entry>;
    if (known.delegating === false && known.schemas) return known.schemas;
    const atLimit = depth >= this.options.maxDepth;
    const delegates = !atLimit && [...agent.tools.keys()].some((name) => DELEGATION_TOOLS.has(name));
    // Agents an agent made are only its own, so a caller's list is personal once it has made one.
    const personal = delegates && (this.made.get(callerId) ?? 0) > 0;
    const key = `${agent.name}|${atLimit}|${personal ? callerId : ''}`;
    const cached = this.schemas.get(key);
    if (cached && cached.version === this.version) return cached.schemas;
    const summaries = delegates ? this.delegatesOf({ id: callerId, name: agent.name }).map((entry) => this.summary(entry)) : [];
    const schemas: ToolSchema[] = [];
    for (const tool of agent.tools.values()) {
      if (!DELEGATION_TOOLS.has(tool.name)) schemas.push(tool.schema);
      else if (atLimit) continue;
      else if (tool.name === 'assign_task' || tool.name === 'parallel_tasks') {
        if (summaries.length === 0) continue;
        const describe = tool.name === 'assign_task' ? describeAssignTask : describeParallelTasks;
        schemas.push({ ...tool.schema, description: describe(summaries) });
      } else schemas.push(tool.schema);
    }
    this.schemas.set(key, { version: this.version, schemas });
    return schemas;
  }

  /** The tool a call names, or why this agent may not call it: the allow-list, enforced where tools run. */
  toolFor(agent: ResolvedAgent, depth: number, toolName: string): Tool | ToolRefusal {
    const atLimit = depth >= this.options.maxDepth;
    const tool = agent.tools.get(toolName);
    if (tool && !(atLimit && DELEGATION_TOOLS.has(toolName))) return tool;
    // Refused: name what the agent may call instead.
    const own = [...agent.tools.keys()].filter((name) => !(atLimit && DELEGATION_TOOLS.has(name)));
    const listing = own.length > 0 ? `Its tools: ${own.join(', ')}.` : 'It has no tools.';
    if (tool) {
      return {
        reason: 'depth_limit',
        error: `"${toolName}" is refused: agent "${agent.name}" is at depth ${depth}, the runtime's delegation limit (maxDepth ${this.options.maxDepth}). Do the work yourself.`,
      };
    }
    if (this.isKnownTool(toolName)) {
      return { reason: 'not_allowed', error: `Tool "${toolName}" is not allowed for agent "${agent.name}". ${listing}` };
    }
    return {
      reason: 'unknown',
      error: `Unknown tool "${toolName}". ${own.length > 0 ? `Available tools: ${own.join(', ')}.` : 'This agent has no tools.'}`,
    };
  }

  /** How the planner sees a call: delegations by the role of the agents they go to, other tools by kind and targets. */
  plan(tool: Tool, args: unknown): PlannedCall {
    const roleOf = (name: unknown) => (typeof name === 'string' ? this.entries.get(name)?.definition.role : undefined);
    const input = args as Record<string, unknown>;
    switch (tool.name) {
      case 'assign_task':
        return { kind: roleOf(input.agent) === 'write' ? 'write' : 'read' };
      case 'parallel_tasks': {
        const tasks = Array.isArray(input.tasks) ? (input.tasks as { agent?: unknown }[]) : [];
        return { kind: tasks.some((task) => roleOf(task.agent) === 'write') ? 'write' : 'read' };
      }
      case 'spawn_agent': {
        const names = Array.isArray(input.tools) ? (input.tools as unknown[]) : [];
        const writes = names.some((name) => typeof name === 'string' && this.tools.get(name)?.kind !== 'read');
        return { kind: writes ? 'write' : 'read' };
      }
      default:
        return { kind: tool.kind, targets: tool.targets?.(args as never) };
    }
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

  private isKnownTool(name: string): boolean {
    if (this.tools.has(name)) return true;
    for (const entry of this.entries.values()) if (entry.tools.has(name)) return true;
    return false;
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
      delegating: [...tools.keys()].some((name) => DELEGATION_TOOLS.has(name)),
      schemas: [...tools.values()].map((tool) => tool.schema),
      ...(createdBy ? { createdBy } : {}),
    };
    this.entries.set(definition.name, entry);
    if (createdBy) this.count(createdBy.id, 1);
    this.version += 1;
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
