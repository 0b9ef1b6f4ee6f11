import { z } from 'zod';
import { MIN_SECRET_LENGTH, isSecretHeader, secretVariables } from '../../redaction.js';
import { unknownKeys } from '../../unknownKeys.js';
import { innermostIssue } from '../../zodIssue.js';

/** The name of an MCP server: what its tools are called by (`files:read_file` for the server `files`). */
export const MCP_SERVER_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** The default limit on a server's start (spawn or connect, the MCP handshake and the tool listing), in ms. */
export const DEFAULT_MCP_START_TIMEOUT_MS = 30_000;

/** The default limit on one tool call to a server, in ms (the MCP SDK's own default). */
export const DEFAULT_MCP_CALL_TIMEOUT_MS = 60_000;

/**
 * The default limit on what one answer of a server brings into a conversation, in characters (about 25,000 tokens):
 * the rest is cut, and the result says so.
 */
export const DEFAULT_MCP_RESULT_CHARS = 100_000;

const limits = {
  /** How long the server may take to start and list its tools, in ms (default 30,000). */
  timeoutMs: z.number().positive().optional(),
  /** How long one tool call may take, in ms (default 60,000). */
  toolTimeoutMs: z.number().positive().optional(),
  /** The most characters of one answer the model is given; the rest is cut, and the result says so (default 100,000). */
  maxResultChars: z.number().int().positive().optional(),
};

/**
 * A server started as a child process that speaks MCP over its stdin and stdout (`.mcp.json`'s shape: `command`,
 * `args`, `env`). The child gets only a few variables of this process's environment (`PATH`, `HOME`, …) and `env`.
 */
export const McpStdioServerConfig = z.object({
  type: z.literal('stdio').optional(),
  /** The program to run, such as `node` or `npx`. */
  command: z.string().trim().min(1, 'must not be empty'),
  /** Its arguments. */
  args: z.array(z.string()).optional(),
  /** Variables added to the child's environment. */
  env: z.record(z.string(), z.string()).optional(),
  /** The child's working folder (default: this process's). */
  cwd: z.string().min(1).optional(),
  ...limits,
});
/** A server started as a child process over stdio. */
export type McpStdioServerConfig = z.infer<typeof McpStdioServerConfig>;

/** A server reached over streamable HTTP at `url` (`.mcp.json`'s `{ "type": "http", "url": … }`). */
export const McpHttpServerConfig = z.object({
  type: z.literal('http'),
  /**
   * The server's MCP endpoint, such as `http://127.0.0.1:8080/mcp`; without a user name or password in it (fetch
   * refuses such a URL, with a message that quotes the password): give credentials in `headers`.
   */
  url: z.url({ protocol: /^https?$/ }).refine(withoutCredentials, {
    message: 'must not hold a user name or password (fetch refuses such a URL): give them in headers, such as Authorization',
    abort: true,
  }),
  /** Headers sent with every request (an `Authorization` header, say). */
  headers: z.record(z.string(), z.string()).optional(),
  ...limits,
});
/** True for a URL without a user name or password in it. */
function withoutCredentials(url: string): boolean {
  try {
    const parsed = new URL(url);
    return parsed.username === '' && parsed.password === '';
  } catch {
    return true; // z.url has said what is wrong with it
  }
}

/** A server reached over streamable HTTP. */
export type McpHttpServerConfig = z.infer<typeof McpHttpServerConfig>;

/**
 * How to reach one MCP server: a child process over stdio, or a URL over streamable HTTP. A value that says which it
 * is (a `command`, or `type: "http"`) is told what is wrong with it as that (`args: Invalid input: expected array,
 * received number`); any other is told the two shapes.
 */
export const McpServerConfig = z.union([McpStdioServerConfig, McpHttpServerConfig], {
  error: (issue) => {
    const input = typeof issue.input === 'object' && issue.input !== null ? (issue.input as { type?: unknown; command?: unknown }) : undefined;
    if (input?.type === 'sse') return 'the SSE transport is not supported: use { type: "http", url } (streamable HTTP)';
    const branch = input === undefined ? undefined : input.type === 'http' ? 1 : input.type === 'stdio' || 'command' in input ? 0 : undefined;
    const branches = (issue as { errors?: readonly (readonly z.core.$ZodIssue[])[] }).errors;
    const first = branch === undefined ? undefined : branches?.[branch]?.[0];
    if (first === undefined) return 'must be { command, args?, env? } (stdio) or { type: "http", url } (streamable HTTP)';
    const { path, message } = innermostIssue(first);
    return path.length === 0 ? message : `${path.join('.')}: ${message}`;
  },
});
/** How to reach one MCP server. */
export type McpServerConfig = z.infer<typeof McpServerConfig>;

const ServerName = z.string().regex(MCP_SERVER_NAME, 'an MCP server name must be 1-64 letters, digits, "_" or "-"');

/** MCP servers by name, as `createRuntime({ mcpServers })` and `.mcp.json`'s `mcpServers` give them. */
export const McpServerConfigs = z.record(ServerName, McpServerConfig);
/** MCP servers by name. */
export type McpServerConfigs = z.infer<typeof McpServerConfigs>;

/**
 * An agent's `mcpServers`, in either of Claude Code's shapes: a mapping of servers by name (`.mcp.json`'s), or a list
 * whose items name a server of the runtime (`- files`) or define one (`- files: { command: … }`).
 */
export const McpServerEntries = z.union([
  McpServerConfigs,
  z.array(z.union([ServerName, z.record(ServerName, McpServerConfig)])),
]);
/** An agent's `mcpServers`. */
export type McpServerEntries = z.infer<typeof McpServerEntries>;

/** An agent's `mcpServers` read out: the servers it defines by name, and the runtime's servers it names. */
export function readMcpEntries(entries: McpServerEntries): { own: Map<string, McpServerConfig>; named: string[] } {
  const own = new Map<string, McpServerConfig>();
  const named: string[] = [];
  const items = Array.isArray(entries) ? entries : [entries];
  for (const item of items) {
    if (typeof item === 'string') named.push(item);
    else for (const [name, config] of Object.entries(item)) own.set(name, config);
  }
  return { own, named };
}

/**
 * The first problem of a value given as MCP servers by name (`field` names it), or undefined when it is valid. A field
 * of a server that looks like a misspelling of one troupe reads (`arg`, `header`, `timeout`) is a problem too: it would
 * be dropped without a word. Other unknown fields (`disabled`, `autoApprove` in a file written for another tool) pass.
 */
export function mcpConfigProblem(value: unknown, field: string, schema: z.ZodType = McpServerConfigs): string | undefined {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    const issue = innermostIssue(parsed.error.issues[0]!);
    return `${[field, ...issue.path].join('.')}: ${issue.message}`;
  }
  const misspelled = mcpMisspelling(value);
  return misspelled && `${[field, ...misspelled.path].join('.')}: ${misspelled.message}`;
}

/**
 * The first field of a server definition in a valid value of MCP servers that looks like a misspelling of one troupe
 * reads (`arg` for `args`), with the path to its server (`files`, or `0.files` in a list) and what to say of it; zod
 * drops such a field without a word. Fields far from every known one (`disabled`, another tool's) are not reported.
 */
export function mcpMisspelling(value: unknown): { path: (string | number)[]; message: string } | undefined {
  for (const [path, config] of serverConfigs(value)) {
    const misspelled = unknownKeys(config, SERVER_FIELDS).find(({ key, meant }) => meant !== undefined && !OTHER_CLIENTS_FIELDS.has(key));
    if (!misspelled) continue;
    if (misspelled.key === 'timeout') return { path, message: TIMEOUT_FIELD };
    return { path, message: `unknown field "${misspelled.key}" (did you mean "${misspelled.meant}"?)` };
  }
  return undefined;
}

/**
 * What is said of `timeout`: the nearest field, `timeoutMs`, limits a server's start, while the `timeout` of Cline's
 * and Gemini CLI's files limits each call (in seconds for Cline), so "did you mean timeoutMs" would have a file's
 * `timeout: 60` become a start limit of 60 ms.
 */
const TIMEOUT_FIELD =
  'unknown field "timeout": troupe reads timeoutMs (how long the server may take to start) and toolTimeoutMs (how long one call may take), both in ms';

/**
 * Fields other MCP clients write in a server's definition that are near one troupe reads but no misspelling of it:
 * VS Code's `dev` (its development mode: `watch`, `debug`), two edits from `env`. Ignored, as other clients' fields are.
 */
const OTHER_CLIENTS_FIELDS: ReadonlySet<string> = new Set(['dev']);

/** Every field a server definition may have, stdio or HTTP. */
const SERVER_FIELDS = [...new Set([...Object.keys(McpStdioServerConfig.shape), ...Object.keys(McpHttpServerConfig.shape)])];

/** The server definitions in a valid value of MCP servers (by name, or a list of names and definitions), with their paths. */
function serverConfigs(value: unknown): [(string | number)[], object][] {
  const records = Array.isArray(value) ? value.map((item, index) => [[index], item] as const) : [[[], value] as const];
  const found: [(string | number)[], object][] = [];
  for (const [at, record] of records) {
    if (typeof record !== 'object' || record === null) continue;
    for (const [name, config] of Object.entries(record)) if (typeof config === 'object' && config !== null) found.push([[...at, name], config]);
  }
  return found;
}

/**
 * The secrets in MCP server definitions, for the runtime's redactor: the values of `env` variables named like secrets
 * (`GITHUB_TOKEN`: a server that fails may quote it on stderr, which its error quotes) and of credential headers
 * (`Authorization`, whole and without its scheme), each long enough to be told from ordinary text.
 */
export function mcpSecrets(configs: Iterable<McpServerConfig>): string[] {
  const found: string[] = [];
  for (const config of configs) {
    if (config.type === 'http') {
      for (const [name, value] of Object.entries(config.headers ?? {})) {
        if (isSecretHeader(name)) found.push(value, value.replace(/^\S+\s+/, ''));
      }
    } else found.push(...secretVariables(config.env ?? {}));
  }
  return [...new Set(found)].filter((secret) => secret.length >= MIN_SECRET_LENGTH);
}
