import { parse as parseYaml, YAMLParseError } from 'yaml';
import { z } from 'zod';
import { AgentFileError, errorMessage } from '../errors.js';
import { McpServerEntries, mcpMisspelling } from '../tools/mcp/McpServerConfig.js';
import { innermostIssue } from '../zodIssue.js';
import { INBOX_FIELDS, unknownFields, unknownKeys } from '../unknownKeys.js';
import { RETRY_FIELDS } from '../retry.js';
import { INTENSITY_FIELDS } from '../restart.js';
import { AGENT_NAME, type AgentDefinition } from './defineAgent.js';

/** A list in an agent file: a YAML list, or one comma-separated string (`tools: Read, Grep`). */
const List = z.union([z.array(z.string()), z.string()]).transform((value) =>
  (Array.isArray(value) ? value : value.split(',')).map((item) => item.trim()).filter((item) => item !== ''),
);

/**
 * The frontmatter of an agent file. Fields troupe does not know (a `color`, say, from files written for other
 * tools) are ignored.
 */
export const AgentFrontmatter = z.object({
  name: z.string().regex(AGENT_NAME, 'must be lower-case letters, digits, "-" or "_", starting with a letter or digit, at most 64 long'),
  description: z.string().trim().min(1, 'must not be empty'),
  tools: List.optional(),
  /** MCP servers whose tools the agent gets: `{ name: { command, args, env } | { type: http, url } }`, or a list of names and such mappings. */
  mcpServers: McpServerEntries.optional(),
  model: z.string().trim().min(1).optional(),
  temperature: z.number().min(0).max(2).optional(),
  maxTurns: z.number().int().positive().optional(),
  role: z.enum(['read', 'write']).optional(),
  /** `persistent` (or `persist: true`) pools the agent between tasks; `temporary` and `permanent` do not. */
  lifecycle: z.enum(['temporary', 'permanent', 'persistent']).optional(),
  persist: z.boolean().optional(),
  enableParallelExecution: z.boolean().optional(),
  shareContext: z.union([z.boolean(), z.number().int().positive()]).optional(),
  examples: List.optional(),
  subagents: List.optional(),
  /** A resident agent waits for messages after it answers, until it is stopped. */
  resident: z.boolean().optional(),
  /** Keep at most this many messages after the system prompt. */
  historyLimit: z.number().int().positive().optional(),
  /** Topics it subscribes to from the start. */
  subscribe: List.optional(),
  /** Tools it must call before it gives its final answer. */
  requiredToolCalls: List.optional(),
  /** Whom it may message: agent names and `topic:<name>`. */
  canMessage: List.optional(),
  inbox: z
    .object({ capacity: z.number().int().positive().optional(), overflow: z.enum(['reject', 'drop-oldest']).optional() })
    .optional(),
  /** How its failed model calls are tried again: tries in all, and the first and longest wait in ms. */
  retry: z
    .object({
      attempts: z.number().int().positive().optional(),
      baseMs: z.number().nonnegative().optional(),
      maxMs: z.number().nonnegative().optional(),
    })
    .optional(),
  /** `on-failure` starts the agent again after a failure with reason `error` or `timeout` (default `never`). */
  restart: z.enum(['never', 'on-failure']).optional(),
  /** At most `max` restarts within `withinMs` ms on the runtime's clock (default 3 within 60,000). */
  restartIntensity: z
    .object({ max: z.number().int().nonnegative().optional(), withinMs: z.number().positive().optional() })
    .optional(),
});
/** The frontmatter of an agent file. */
export type AgentFrontmatter = z.infer<typeof AgentFrontmatter>;

const FRONTMATTER = /^\uFEFF?---[ \t]*\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n([\s\S]*))?$/;

/**
 * Reads an agent definition from the text of a Markdown file with YAML frontmatter: the frontmatter gives the
 * fields, the body is the system prompt. Throws {@link AgentFileError} naming the file and the field at fault.
 *
 * @example
 * parseAgentFile('agents/reviewer.md', '---\nname: reviewer\ndescription: Reviews code.\ntools: read_file, grep\n---\nYou review code.')
 */
export function parseAgentFile(file: string, text: string): AgentDefinition {
  return readAgentFile(file, text).definition;
}

/** The frontmatter fields troupe reads. */
const FRONTMATTER_FIELDS = Object.keys(AgentFrontmatter.shape);

/** The nested options of a frontmatter whose fields are checked, with the fields each has. */
const NESTED_FIELDS: readonly (readonly [string, readonly string[]])[] = [
  ['retry', RETRY_FIELDS],
  ['restartIntensity', INTENSITY_FIELDS],
  ['inbox', INBOX_FIELDS],
];

/**
 * {@link parseAgentFile}, and the fields of the frontmatter troupe does not read that look like a misspelling of one it
 * does (`maxturns`, `resident_`), each with the field most likely meant. Other unknown fields (a `color` from Claude
 * Code) are left out of it: files written for other tools carry them on purpose.
 */
export function readAgentFile(file: string, text: string): { definition: AgentDefinition; misspelled: { key: string; meant: string }[] } {
  const { definition, raw } = parseFile(file, text);
  const misspelled = unknownKeys(raw, FRONTMATTER_FIELDS).flatMap(({ key, meant }) => (meant === undefined ? [] : [{ key, meant }]));
  return { definition, misspelled };
}

/**
 * What the YAML parser found wrong, and where as a line of the file: the parser counts the lines of the frontmatter,
 * which starts on the file's line 2 (after the first `---`), and ends its message with a colon before a code frame.
 */
function yamlProblem(error: unknown): string {
  const first = errorMessage(error).split('\n')[0] ?? '';
  const at = error instanceof YAMLParseError ? error.linePos?.[0] : undefined;
  if (!at) return first.replace(/:$/, '');
  return `${first.replace(/ at line \d+, column \d+:$/, '')} at line ${at.line + 1}, column ${at.col}`;
}

function parseFile(file: string, text: string): { definition: AgentDefinition; raw: object } {
  const match = FRONTMATTER.exec(text);
  if (!match) throw new AgentFileError(file, 'frontmatter', 'the file must start with YAML frontmatter between two "---" lines');
  let raw: unknown;
  try {
    raw = parseYaml(match[1] ?? '');
  } catch (error) {
    throw new AgentFileError(file, 'frontmatter', `not valid YAML: ${yamlProblem(error)}`);
  }
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new AgentFileError(file, 'frontmatter', 'must be a YAML mapping of fields');
  }
  const parsed = AgentFrontmatter.safeParse(raw);
  if (!parsed.success) {
    const issue = innermostIssue(parsed.error.issues[0]!);
    throw new AgentFileError(file, issue.path.join('.') || 'frontmatter', issue.message);
  }
  const misspelled = mcpMisspelling((raw as { mcpServers?: unknown }).mcpServers);
  if (misspelled) throw new AgentFileError(file, ['mcpServers', ...misspelled.path].join('.'), misspelled.message);
  // A field of a nested option the schema would drop (retry: { maxAttempts }), leaving the default in force: these
  // options are troupe's own, so no other tool's file carries them.
  for (const [field, known] of NESTED_FIELDS) {
    const value = (raw as Record<string, unknown>)[field];
    if (typeof value !== 'object' || value === null || Array.isArray(value)) continue;
    const unknown = unknownFields(value, known);
    if (unknown) throw new AgentFileError(file, field, unknown);
  }
  const systemPrompt = (match[2] ?? '').trim();
  if (systemPrompt === '') throw new AgentFileError(file, 'body', 'the system prompt (the text after the frontmatter) is empty');
  return { raw, definition: definitionOf(parsed.data, systemPrompt) };
}

function definitionOf(fields: AgentFrontmatter, systemPrompt: string): AgentDefinition {
  const persist = fields.persist ?? fields.lifecycle === 'persistent';
  return {
    name: fields.name,
    description: fields.description,
    systemPrompt,
    ...(fields.tools === undefined ? {} : { tools: fields.tools }),
    ...(fields.mcpServers === undefined ? {} : { mcpServers: fields.mcpServers }),
    ...(fields.model === undefined ? {} : { model: fields.model }),
    ...(fields.temperature === undefined ? {} : { temperature: fields.temperature }),
    ...(fields.maxTurns === undefined ? {} : { maxTurns: fields.maxTurns }),
    ...(fields.role === undefined ? {} : { role: fields.role }),
    ...(fields.shareContext === undefined ? {} : { shareContext: fields.shareContext }),
    ...(fields.examples === undefined ? {} : { examples: fields.examples }),
    ...(fields.subagents === undefined ? {} : { subagents: fields.subagents }),
    ...(persist ? { persist: true } : {}),
    ...(fields.enableParallelExecution === undefined ? {} : { enableParallelExecution: fields.enableParallelExecution }),
    ...(fields.resident === undefined ? {} : { resident: fields.resident }),
    ...(fields.historyLimit === undefined ? {} : { historyLimit: fields.historyLimit }),
    ...(fields.subscribe === undefined ? {} : { subscribe: fields.subscribe }),
    ...(fields.requiredToolCalls === undefined ? {} : { requiredToolCalls: fields.requiredToolCalls }),
    ...(fields.canMessage === undefined ? {} : { canMessage: fields.canMessage }),
    ...(fields.inbox === undefined ? {} : { inbox: fields.inbox }),
    ...(fields.retry === undefined ? {} : { retry: fields.retry }),
    ...(fields.restart === undefined ? {} : { restart: fields.restart }),
    ...(fields.restartIntensity === undefined ? {} : { restartIntensity: fields.restartIntensity }),
  };
}
