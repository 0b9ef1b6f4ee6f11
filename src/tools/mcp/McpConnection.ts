import { stat } from 'node:fs/promises';
import { resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ErrorCode, McpError, ToolSchema, type Tool as McpToolInfo } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { ToolError, ToolTimeoutError, causeChain } from '../../errors.js';
import { innermostIssue } from '../../zodIssue.js';
import { DEFAULT_MCP_CALL_TIMEOUT_MS, DEFAULT_MCP_START_TIMEOUT_MS, type McpServerConfig } from './McpServerConfig.js';

export type { McpToolInfo };

/**
 * Where a server is: `idle` (not started: no agent that needs it has taken a turn yet), `starting`, `ready`, `failed`
 * (it did not start, timed out, or died; see `error`) or `closed` (the runtime shut down).
 */
export type McpServerState = 'idle' | 'starting' | 'ready' | 'failed' | 'closed';

/** One MCP server as `runtime.mcpServers()` reports it. */
export interface McpServerStatus {
  /** The server's name, the prefix of its tools' names. */
  readonly name: string;
  readonly transport: 'stdio' | 'http';
  readonly state: McpServerState;
  /** The child process's id, for a stdio server that was spawned (kept after it ends, to check that it is gone). */
  readonly pid?: number;
  /** Its tools' names as the server lists them (without the `server:` prefix), once it is ready. */
  readonly tools: readonly string[];
  /** Why it failed. */
  readonly error?: string;
  /**
   * Tools the server listed that are not offered, because their entry is not a valid MCP tool (an `inputSchema` whose
   * `type` is not `object`, say), each with why; a call to one is an error result that says so.
   */
  readonly refusedTools?: readonly { readonly name: string; readonly reason: string }[];
}

/**
 * A page of `tools/list` as troupe reads it: the tools are checked one by one (the SDK's `listTools` refuses the whole
 * page, and so the whole server, for one bad entry).
 */
const ToolPage = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

/**
 * A server's answer to a tool call as troupe reads it: its content blocks are checked one by one when they are shown
 * (the SDK's `callTool` refuses the whole answer, its text too, for one block of a type it does not know).
 */
const CallAnswer = z.looseObject({
  content: z.array(z.unknown()).default([]),
  isError: z.unknown().optional(),
  structuredContent: z.unknown().optional(),
});
/** A server's answer to a tool call: content blocks not checked yet, `isError`, structured content. */
export type McpCallAnswer = z.infer<typeof CallAnswer>;

/** How much of a stdio server's stderr is kept, to explain a failure. */
const STDERR_TAIL = 2_000;

/**
 * One connection to one MCP server, through the official SDK's `Client`: started once (`start` never rejects; a
 * failure is its state), its tools listed when it starts, its tools called, and closed with the runtime (a stdio
 * child is ended: stdin closed, then SIGTERM, then SIGKILL, as the SDK's transport does). A server that fails to start,
 * passes `timeoutMs`, or dies is `failed` for good, and each call to it throws a {@link ToolError} that says why.
 */
export class McpConnection {
  private state: McpServerState = 'idle';
  private client: Client | undefined;
  private started: Promise<void> | undefined;
  private tools: readonly McpToolInfo[] = [];
  private refused = new Map<string, string>();
  private failure: string | undefined;
  private pid: number | undefined;
  private stderr = '';
  private calls = 0;
  /** The last thing the server sent while it started that was not MCP (a log line on stdout), to explain a time-out. */
  private notMcp: string | undefined;

  constructor(
    /** The server's name. */
    readonly name: string,
    readonly config: McpServerConfig,
  ) {}

  /** Starts the server, once: resolves when it is ready or has failed (it never rejects). */
  start(): Promise<void> {
    this.started ??= this.open().catch((error: unknown) => this.fail(`failed to start: ${failureOf(error)}`));
    return this.started;
  }

  /** True once the server is ready or will never be (failed, closed). */
  get settled(): boolean {
    return this.state !== 'idle' && this.state !== 'starting';
  }

  /** True while the server is starting or answering a call: real work a simulation waits for. */
  get busy(): boolean {
    return this.state === 'starting' || this.calls > 0;
  }

  /** The tools the server listed when it started (none unless it is or was ready). */
  listed(): readonly McpToolInfo[] {
    return this.tools;
  }

  /**
   * Why calls to this server (or to its tool `tool`) cannot be made, or undefined while it is ready (and listed that
   * tool as a valid one).
   */
  unavailable(tool?: string): string | undefined {
    if (this.state === 'ready') {
      const reason = tool === undefined ? undefined : this.refused.get(tool);
      return reason === undefined ? undefined : `MCP server "${this.name}" listed the tool "${tool}" with an entry that is not valid (${reason}), so it is not offered.`;
    }
    if (this.state === 'idle' || this.state === 'starting') return `MCP server "${this.name}" has not started yet.`;
    return `MCP server "${this.name}" is not available: ${this.failure ?? 'it stopped'}.${this.stderrNote()}`;
  }

  /**
   * Calls one of its tools; throws a {@link ToolError} when the server is not available or the call fails, and a
   * {@link ToolTimeoutError} when it does not answer within `toolTimeoutMs`.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpCallAnswer> {
    const toolName = `${this.name}:${tool}`;
    const client = this.client;
    const down = this.unavailable();
    if (down !== undefined || !client) throw new ToolError(down ?? `MCP server "${this.name}" is not available.`, toolName);
    this.calls += 1;
    const timeout = this.config.toolTimeoutMs ?? DEFAULT_MCP_CALL_TIMEOUT_MS;
    try {
      return await client.request({ method: 'tools/call', params: { name: tool, arguments: args } }, CallAnswer, { signal, timeout });
    } catch (error) {
      if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : error;
      const gone = this.unavailable();
      if (gone !== undefined) throw new ToolError(gone, toolName, { cause: error });
      // The SDK's own message (`MCP error -32001: Request timed out`) names neither the limit nor the setting.
      if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) throw new ToolTimeoutError(toolName, timeout);
      throw new ToolError(`MCP server "${this.name}" could not run "${tool}": ${failureOf(error)}`, toolName, { cause: error });
    } finally {
      this.calls -= 1;
    }
  }

  /** Closes the connection and ends a stdio server's process; waits for a start under way to end first. */
  async close(): Promise<void> {
    if (this.state === 'closed') return;
    this.state = 'closed';
    this.failure ??= 'the runtime has shut down';
    await this.client?.close().catch(() => {});
    await this.started; // a start under way fails on the closed transport, within its timeout
    await this.client?.close().catch(() => {});
  }

  /** How the server stands. */
  status(): McpServerStatus {
    return {
      name: this.name,
      transport: this.config.type === 'http' ? 'http' : 'stdio',
      state: this.state,
      ...(this.pid === undefined ? {} : { pid: this.pid }),
      tools: this.tools.map((tool) => tool.name),
      ...(this.failure === undefined || this.state === 'ready' ? {} : { error: this.failure }),
      ...(this.refused.size === 0 ? {} : { refusedTools: [...this.refused].map(([name, reason]) => ({ name, reason })) }),
    };
  }

  private async open(): Promise<void> {
    if (this.state !== 'idle') return;
    this.state = 'starting';
    await this.checkCwd();
    if (this.state !== 'starting') return; // closed while the folder was checked: nothing is spawned
    const transport = this.transport();
    const client = new Client({ name: 'troupe', version: '0.1.0' });
    this.client = client;
    // A server that dies after it started: every call from now on says so (calls in flight are rejected by the SDK).
    client.onclose = () => {
      if (this.state === 'ready') this.fail('its connection closed (the server stopped)');
    };
    // Errors reach the requests they break; the SDK would otherwise only log them. A line that is not JSON-RPC while the
    // server starts (a banner or log line on stdout, where only MCP may go) is kept: it explains a start that times out.
    client.onerror = (error) => {
      if (this.state === 'starting' && error instanceof SyntaxError) this.notMcp = error.message;
    };
    const timeoutMs = this.config.timeoutMs ?? DEFAULT_MCP_START_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<never>((_, reject) => {
      timer = setTimeout(() => {
        const note = this.notMcp === undefined ? '' : `; it wrote what is not MCP on its stdout (${this.notMcp})`;
        reject(new Error(`it did not answer within ${timeoutMs} ms (timeoutMs)${note}`));
      }, timeoutMs);
    });
    try {
      await Promise.race([this.handshake(client, transport, timeoutMs), deadline]);
    } catch (error) {
      await client.close().catch(() => {});
      throw error;
    } finally {
      clearTimeout(timer);
    }
    if (this.state !== 'starting') return void (await client.close().catch(() => {})); // closed while starting
    this.state = 'ready';
  }

  /**
   * Connects (the MCP handshake) and lists every tool, page by page. Each listed tool is checked on its own: one the
   * MCP schema refuses (an `inputSchema` that is not an object schema, no name) is left out with why, and the others
   * are offered.
   */
  private async handshake(client: Client, transport: Transport, timeout: number): Promise<void> {
    await client.connect(transport, { timeout });
    const tools: McpToolInfo[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.request({ method: 'tools/list', params: cursor === undefined ? {} : { cursor } }, ToolPage, { timeout });
      for (const entry of page.tools) {
        const tool = ToolSchema.safeParse(entry);
        if (tool.success) tools.push(tool.data);
        else this.refused.set(listedName(entry), describeIssue(tool.error.issues[0]));
      }
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    this.tools = tools;
  }

  /**
   * A stdio server's `cwd` must be a folder: spawn reports a missing one as the command's ENOENT
   * (`spawn /usr/bin/node ENOENT`), which sends a person looking for a program that is there.
   */
  private async checkCwd(): Promise<void> {
    const { config } = this;
    if (config.type === 'http' || config.cwd === undefined) return;
    const folder = resolve(config.cwd);
    const found = await stat(folder).then(
      (stats) => (stats.isDirectory() ? undefined : 'is not a folder'),
      (error: NodeJS.ErrnoException) => (error.code === 'ENOENT' ? 'does not exist' : causeChain(error)),
    );
    if (found !== undefined) throw new Error(`its cwd ${folder} ${found}`);
  }

  private transport(): Transport {
    const { config } = this;
    if (config.type === 'http') {
      return new StreamableHTTPClientTransport(new URL(config.url), config.headers ? { requestInit: { headers: config.headers } } : {});
    }
    const transport = new SpawnedTransport(
      {
        command: config.command,
        args: config.args ?? [],
        ...(config.env ? { env: config.env } : {}),
        ...(config.cwd ? { cwd: config.cwd } : {}),
        stderr: 'pipe',
      },
      (pid) => (this.pid = pid),
    );
    // Kept, not printed: the end of a server's stderr explains why it failed.
    transport.stderr?.on('data', (chunk: Buffer) => {
      this.stderr = (this.stderr + chunk.toString('utf8')).slice(-STDERR_TAIL);
    });
    return transport;
  }

  private fail(reason: string): void {
    if (this.state === 'closed') return;
    this.state = 'failed';
    this.failure = reason;
  }

  private stderrNote(): string {
    const tail = this.stderr.trim().split('\n').slice(-3).join(' | ');
    return tail === '' ? '' : ` Its last output: ${tail}`;
  }
}

/**
 * Why a start or a call failed, in words: the error's message with its causes, and for an HTTP server the status it
 * answered (the SDK's message has the body, not the status: a 401 read like any other failure).
 */
function failureOf(error: unknown): string {
  const message = causeChain(error);
  if (!(error instanceof StreamableHTTPError) || typeof error.code !== 'number' || error.code < 100) return message;
  const hint = error.code === 401 || error.code === 403 ? ' (check its headers: Authorization)' : '';
  return `HTTP ${error.code}${hint}: ${message}`;
}

/** The name a listed tool entry gives itself, for a note about it. */
function listedName(entry: unknown): string {
  const name = typeof entry === 'object' && entry !== null ? (entry as { name?: unknown }).name : undefined;
  return typeof name === 'string' ? name : '(no name)';
}

/** One issue of a refused tool entry, with its path: `inputSchema.type: Invalid input: expected "object"`. */
function describeIssue(issue: z.core.$ZodIssue | undefined): string {
  if (issue === undefined) return 'it is not a tool';
  const { path, message } = innermostIssue(issue);
  return path.length === 0 ? message : `${path.join('.')}: ${message}`;
}

/** The SDK's stdio transport, telling the id of its child as soon as it is spawned (it forgets it once closed). */
class SpawnedTransport extends StdioClientTransport {
  constructor(
    parameters: ConstructorParameters<typeof StdioClientTransport>[0],
    private readonly spawned: (pid: number) => void,
  ) {
    super(parameters);
  }

  override start(): Promise<void> {
    const started = super.start(); // spawns at once: the id is known now, before a close can forget it
    if (this.pid !== null) this.spawned(this.pid);
    return started;
  }
}
