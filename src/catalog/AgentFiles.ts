import { lstatSync, readFileSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { basename, join, resolve, sep } from 'node:path';
import { AgentFileError, ConfigurationError, errorMessage } from '../errors.js';
import { AGENT_NAME, type AgentDefinition } from './defineAgent.js';
import { readAgentFile } from './parseAgentFile.js';

/** An agent read from a file. */
export interface LoadedAgent {
  readonly definition: AgentDefinition;
  /** The file it came from (absolute). */
  readonly file: string;
  /** Changes whenever the file does (its inode, size, and modification and change times). */
  readonly version: string;
  /** Frontmatter fields troupe does not read that look like a misspelling of one it does, with the one meant. */
  readonly misspelled?: readonly { key: string; meant: string }[];
}

/** What to say of a file a later folder's file of the same agent replaces. */
export function shadowedMessage({ file, by }: { file: string; by: string }): string {
  return `${file} is not used: ${by} defines the same agent, and a later folder wins.`;
}

/** What a scan of the agent folders found: the agents that load, and the files refused, each with its reason. */
export interface AgentScan {
  agents: LoadedAgent[];
  errors: AgentFileError[];
  /** Files not used because a later folder has a file of the same agent: each with the file used instead. */
  shadowed: { file: string; by: string }[];
}

interface Cached {
  version: string;
  loaded?: LoadedAgent;
  error?: AgentFileError;
}

/**
 * Agent definitions kept as Markdown files with YAML frontmatter (`<name>.md`) in one or more folders. Later folders
 * win when two define the same name. Parsed files are cached and parsed again when their size or modification time
 * changes. Loading by name never reads outside the folders: the name must be a plain agent name, and a file that is
 * (or passes through) a symbolic link pointing elsewhere is refused.
 */
export class AgentFiles {
  private readonly folders: { path: string; real: string }[] = [];
  private readonly cache = new Map<string, Cached>();

  /**
   * @param required folders that must exist (a missing one is a {@link ConfigurationError}).
   * @param optional folders used only if they exist (the project's `./agents`).
   */
  constructor(required: readonly string[], optional: readonly string[] = []) {
    for (const folder of optional) this.addFolder(folder, false);
    for (const folder of required) this.addFolder(folder, true);
  }

  /** The folders searched, in order (later ones win). */
  get dirs(): string[] {
    return this.folders.map((folder) => folder.path);
  }

  /** Reads every `*.md` file of every folder. A file that cannot be used is an error; the others still load. */
  scan(): AgentScan {
    const byName = new Map<string, LoadedAgent>();
    const errors: AgentFileError[] = [];
    const earlier: { file: string; name: string }[] = [];
    for (const folder of this.folders) {
      let entries: string[];
      try {
        entries = readdirSync(folder.path).filter((entry) => entry.endsWith('.md')).sort();
      } catch (error) {
        errors.push(new AgentFileError(folder.path, 'path', `the folder cannot be read: ${errorMessage(error)}`));
        continue;
      }
      for (const entry of entries) {
        const name = entry.slice(0, -'.md'.length);
        try {
          const loaded = this.read(folder, name);
          if (!loaded) continue;
          const before = byName.get(loaded.definition.name);
          if (before) earlier.push({ file: before.file, name: before.definition.name });
          byName.set(loaded.definition.name, loaded);
        } catch (error) {
          errors.push(error instanceof AgentFileError ? error : new AgentFileError(join(folder.path, entry), 'path', errorMessage(error)));
        }
      }
    }
    // Each file not used names the one used: the last folder's, when three folders have the agent.
    const shadowed = earlier.map(({ file, name }) => ({ file, by: byName.get(name)!.file }));
    return { agents: [...byName.values()], errors, shadowed };
  }

  /**
   * The agent of that name, read from the last folder that has `<name>.md` (from the cache if the file has not
   * changed), or undefined when no folder has it. Throws {@link AgentFileError} for a name that is not a plain agent
   * name (`../x`, `/etc/passwd`, `%2e%2e`, …), a file that leads outside its folder, or a file with a bad field.
   */
  load(name: string): LoadedAgent | undefined {
    if (typeof name !== 'string' || !AGENT_NAME.test(name)) {
      throw new AgentFileError(String(name), 'path', `"${String(name)}" is not an agent name; names match ${AGENT_NAME}`);
    }
    for (const folder of [...this.folders].reverse()) {
      const loaded = this.read(folder, name);
      if (loaded) return loaded;
    }
    return undefined;
  }

  private addFolder(folder: string, required: boolean): void {
    const path = resolve(folder);
    let real: string;
    try {
      if (!statSync(path).isDirectory()) throw new Error('not a folder');
      real = realpathSync(path);
    } catch (error) {
      if (!required) return;
      throw new ConfigurationError(`The agent folder ${path} cannot be used: ${errorMessage(error)}.`);
    }
    if (!this.folders.some((known) => known.real === real)) this.folders.push({ path, real });
  }

  /** Reads `<name>.md` of one folder, or undefined when it has none. */
  private read(folder: { path: string; real: string }, name: string): LoadedAgent | undefined {
    if (!AGENT_NAME.test(name)) {
      throw new AgentFileError(join(folder.path, `${name}.md`), 'name', `the file name is not an agent name (${AGENT_NAME})`);
    }
    const file = join(folder.path, `${name}.md`);
    let version: string;
    let target: string;
    try {
      lstatSync(file);
    } catch {
      return undefined;
    }
    try {
      const real = realpathSync(file);
      if (!real.startsWith(folder.real + sep)) {
        throw new AgentFileError(file, 'path', 'the file is a link that leads outside its agent folder');
      }
      const stats = statSync(real);
      if (!stats.isFile()) throw new AgentFileError(file, 'path', 'not a regular file');
      version = `${stats.ino}:${stats.size}:${stats.mtimeMs}:${stats.ctimeMs}`;
      target = real;
    } catch (error) {
      if (error instanceof AgentFileError) throw error;
      throw new AgentFileError(file, 'path', errorMessage(error));
    }
    const cached = this.cache.get(file);
    if (cached?.version === version) {
      if (cached.error) throw cached.error;
      return cached.loaded;
    }
    try {
      // Read the checked target, not the link, so a link swapped in meanwhile cannot lead outside.
      const { definition, misspelled } = readAgentFile(file, readFileSync(target, 'utf8'));
      if (definition.name !== name) {
        throw new AgentFileError(file, 'name', `"${definition.name}" does not match the file name ${basename(file)}`);
      }
      const loaded: LoadedAgent = { definition, file, version, ...(misspelled.length > 0 ? { misspelled } : {}) };
      this.cache.set(file, { version, loaded });
      return loaded;
    } catch (error) {
      const refused = error instanceof AgentFileError ? error : new AgentFileError(file, 'path', errorMessage(error));
      this.cache.set(file, { version, error: refused });
      throw refused;
    }
  }
}
