import type { LoadedAgent } from './AgentFiles.js';

/**
 * Something an agent file asked for that the runtime does not have, and what was done instead: the file still loaded.
 * A runtime lists them as `runtime.agentFileWarnings`.
 */
export interface AgentFileWarning {
  /** The file (absolute). */
  readonly file: string;
  /**
   * The frontmatter field it is about: `tools` or `model`, `frontmatter` for a field troupe does not read, or `name`
   * for a file not used because another definition of its agent wins (an agent given in code, or a file of a later
   * folder).
   */
  readonly field: 'tools' | 'model' | 'frontmatter' | 'name';
  /** What was asked and what was done, in one sentence. */
  readonly message: string;
}

/** A warning for each frontmatter field that looks like a misspelling of one troupe reads: it is ignored. */
export function misspellingWarnings(loaded: LoadedAgent): AgentFileWarning[] {
  return (loaded.misspelled ?? []).map(({ key, meant }) => ({
    file: loaded.file,
    field: 'frontmatter' as const,
    message: `${loaded.file}: the field "${key}" is not one troupe reads, and is ignored (did you mean "${meant}"?)`,
  }));
}

/** The model names Claude Code accepts in an agent file besides full model ids: `inherit` means the caller's model. */
const CLAUDE_CODE_MODELS = new Set(['inherit', 'sonnet', 'opus', 'haiku']);

/**
 * An agent file written for another tool (Claude Code's `.claude/agents/*.md`), made to load in this runtime: tools
 * it names that the runtime does not have (`Bash`, `WebFetch`) are left out, and a Claude Code model alias (`sonnet`,
 * `opus`, `haiku`, `inherit`) gives way to the runtime's model. Each change but `inherit`'s is a warning. Claude Code
 * tool names the file tools stand for (`Read`, `Grep`, …) are not changed here: every agent may list them, and
 * `hasTool` answers for them.
 */
export function adaptAgentFile(loaded: LoadedAgent, hasTool: (name: string) => boolean): { loaded: LoadedAgent; warnings: AgentFileWarning[] } {
  const { tools, model, ...rest } = loaded.definition;
  const warnings: AgentFileWarning[] = [];
  const kept = tools?.filter((tool) => typeof tool !== 'string' || hasTool(tool));
  const skipped = (tools ?? []).filter((tool) => !kept?.includes(tool));
  if (skipped.length > 0) {
    const names = skipped.map((tool) => String(tool)).join(', ');
    warnings.push({
      file: loaded.file,
      field: 'tools',
      message: `${loaded.file}: tools: skipped ${names}, which this runtime does not have; the agent runs without ${skipped.length === 1 ? 'it' : 'them'} (strictAgentFiles: true refuses the file instead)`,
    });
  }
  const alias = typeof model === 'string' && CLAUDE_CODE_MODELS.has(model);
  if (alias && model !== 'inherit') {
    warnings.push({
      file: loaded.file,
      field: 'model',
      message: `${loaded.file}: model: "${model}" is a Claude Code model alias; the agent uses the runtime's model`,
    });
  }
  if (skipped.length === 0 && !alias) return { loaded, warnings };
  const definition = { ...rest, ...(kept === undefined ? {} : { tools: kept }), ...(model === undefined || alias ? {} : { model }) };
  return { loaded: { ...loaded, definition }, warnings };
}
