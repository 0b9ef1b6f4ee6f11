import { AgentFileError, errorMessage } from '../errors.js';
import { adaptAgentFile, misspellingWarnings, type AgentFileWarning } from './adaptAgentFile.js';
import { AGENT_NAME } from './defineAgent.js';
import { shadowedMessage, type AgentFiles, type LoadedAgent } from './AgentFiles.js';

/** The file an agent was read from, and its version when read. */
export interface AgentSource {
  readonly path: string;
  readonly version: string;
}

/** What an {@link AgentFileSync} needs of the catalog it keeps in step. */
export interface FileAgentShelf {
  /** The file the agent of that name was read from; `null` for an agent not from a file, undefined for no agent. */
  sourceOf(name: string): AgentSource | null | undefined;
  /** Puts the agent of a file in, in place of the agent of its name if any; throws, changing nothing, if it cannot be made. */
  put(loaded: LoadedAgent): void;
  /** Takes the agent of that name out. */
  remove(name: string): void;
  /** True when an agent may list a tool of that name (a tool of the runtime, or a Claude Code name for one). */
  hasTool(name: string): boolean;
}

/**
 * Keeps a catalog's file agents in step with their files: loads every file once, reads an agent's file again
 * before it is spawned (or loads a file added since), and keeps the files refused, each reported once. A file whose
 * agent cannot be made is refused, and the version that ran before, if any, stays. Agents given in code are never
 * replaced by a file. Unless `strict`, a file written for Claude Code loads as it is: tools the runtime does not have
 * are skipped and Claude Code's model aliases give way to the runtime's model, each reported once as a warning.
 */
export class AgentFileSync {
  /** Agent files that were refused, each naming the file and the field; the other agents loaded. */
  readonly errors: AgentFileError[] = [];
  /** What agent files asked for that the runtime does not have, skipped or replaced; those files loaded. */
  readonly warnings: AgentFileWarning[] = [];

  constructor(
    private readonly files: AgentFiles,
    private readonly shelf: FileAgentShelf,
    /** True to refuse a file that names a tool the runtime does not have, and to take its `model` as written. */
    private readonly strict = false,
  ) {}

  /**
   * Loads the agent of every file whose name no agent has yet. Once all are in, a file agent that lists a sub-agent
   * no agent has is refused.
   */
  loadAll(): void {
    const scan = this.files.scan();
    this.errors.push(...scan.errors);
    const inCode = (file: string, name: string): AgentFileWarning => ({
      file,
      field: 'name',
      message: `${file} is not used: an agent named "${name}" is given in code, which wins over a file.`,
    });
    for (const shadowed of scan.shadowed) {
      // A file of an agent given in code is not used for that reason, whichever folder it is in.
      const name = scan.agents.find((loaded) => loaded.file === shadowed.by)?.definition.name;
      const given = name !== undefined && this.shelf.sourceOf(name) === null;
      this.warn(given ? inCode(shadowed.file, name) : { file: shadowed.file, field: 'name', message: shadowedMessage(shadowed) });
    }
    for (const loaded of scan.agents) {
      if (this.shelf.sourceOf(loaded.definition.name) === null) this.warn(inCode(loaded.file, loaded.definition.name));
    }
    const taken = scan.agents.filter((loaded) => this.shelf.sourceOf(loaded.definition.name) === undefined && this.put(loaded) === undefined);
    for (const loaded of taken) {
      const missing = this.missingSubagents(loaded);
      if (missing.length > 0) this.shelf.remove(loaded.definition.name);
      for (const name of missing) this.refuse(unknownSubagent(loaded, name));
    }
  }

  /**
   * Brings an agent up to date with its file before it is spawned: reads `<name>.md` again if it changed (or for an
   * agent not known yet). Returns why the file could not be read or its agent made, for an agent that has no version
   * that ran (a changed file that is refused leaves the last good version in place); an agent given in code is left as
   * it is. A new version must list only sub-agents that exist: agents known, or, for a file not loaded before, agent
   * files not read yet (a new file may list files added with it). A file refused when all were loaded is refused again.
   */
  refresh(name: string): AgentFileError | undefined {
    const source = this.shelf.sourceOf(name);
    if (source === null) return undefined;
    let loaded: LoadedAgent | undefined;
    try {
      loaded = this.files.load(name);
    } catch (error) {
      return this.refuse(error instanceof AgentFileError ? error : new AgentFileError(name, 'path', errorMessage(error)));
    }
    if (!loaded || loaded.version === source?.version) return undefined;
    const [missing] = this.missingSubagents(loaded, source === undefined);
    const refused = missing === undefined ? this.put(loaded) : this.refuse(unknownSubagent(loaded, missing));
    return source === undefined ? refused : undefined;
  }

  /** Records a warning once. */
  private warn(warning: AgentFileWarning): void {
    if (!this.warnings.some((known) => known.message === warning.message)) this.warnings.push(warning);
  }

  /** Records a refused file once (an edit refused on every spawn is one error), and returns it. */
  private refuse(error: AgentFileError): AgentFileError {
    if (!this.errors.some((known) => known.message === error.message)) this.errors.push(error);
    return error;
  }

  /** Puts a file's agent in (adapted, unless strict); if it cannot be made, the file is refused and the error returned. */
  private put(loaded: LoadedAgent): AgentFileError | undefined {
    try {
      const adapted = this.strict ? { loaded, warnings: [] } : adaptAgentFile(loaded, (name) => this.shelf.hasTool(name));
      this.shelf.put(adapted.loaded);
      for (const warning of [...misspellingWarnings(loaded), ...adapted.warnings]) this.warn(warning);
      return undefined;
    } catch (error) {
      const message = errorMessage(error);
      return this.refuse(error instanceof AgentFileError ? error : new AgentFileError(loaded.file, /tool/.test(message) ? 'tools' : 'frontmatter', message));
    }
  }

  /** The sub-agents a file lists that no agent has (nor, with `orFiles`, any agent file not read yet). */
  private missingSubagents(loaded: LoadedAgent, orFiles = false): string[] {
    return (loaded.definition.subagents ?? []).filter((name) => this.shelf.sourceOf(name) === undefined && !(orFiles && this.hasFile(name)));
  }

  /**
   * True when an agent file of that name exists (one that cannot be read is refused when its own agent is spawned); a
   * name that is no agent name has none.
   */
  private hasFile(name: string): boolean {
    if (!AGENT_NAME.test(name)) return false;
    try {
      return this.files.load(name) !== undefined;
    } catch {
      return true;
    }
  }
}

function unknownSubagent(loaded: LoadedAgent, name: string): AgentFileError {
  return new AgentFileError(loaded.file, 'subagents', `lists "${name}" in subagents, but no agent has that name`);
}
