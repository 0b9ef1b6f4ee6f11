/**
 * Errors thrown by troupe. Every error shares one abstract base, {@link TroupeError}, and carries a readonly
 * literal `code` a caller can `switch` on. Subclasses say who is at fault: the caller of the API
 * ({@link ConfigurationError}, {@link UnknownAgentError}, …), a model ({@link ModelError}), or a tool
 * ({@link ToolError}).
 *
 * Thrown errors are for misuse of the API. Failures during a run (a model that errors, a tool that throws, a
 * timeout) become state: a failed agent with a typed reason, or an error result the model sees.
 */

/** The codes of every troupe error, one per subclass, as a list (for schemas) and as a type. */
export const TROUPE_ERROR_CODES = [
  'configuration',
  'invalid_tool',
  'invalid_agent',
  'unknown_agent',
  'runtime_closed',
  'script_exhausted',
  'invalid_script_step',
  'unused_steps',
  'model_error',
  'model_call_failed',
  'tool_error',
  'tool_timeout',
  'delegation_refused',
  'unknown_request',
  'invalid_agent_file',
  'corrupt_store',
  'unsupported_schema',
  'corrupt_recording',
  'store_locked',
  'aborted',
  'inbox_full',
  'undeliverable',
  'message_refused',
  'reply_timeout',
  'deadlock',
  'time_limit',
  'budget_spent',
  'outside_workspace',
] as const;

/** The codes of every troupe error, one per subclass. */
export type TroupeErrorCode = (typeof TROUPE_ERROR_CODES)[number];

/**
 * The side a failure comes from, for whoever decides what to do next: `user` (a misuse of the API, or a limit the
 * user set), `model` (the model failed or misbehaved), `tool` (a tool failed or timed out), `system` (the runtime or
 * its host: an abort, a store, a deadlock).
 */
export type Fault = 'user' | 'model' | 'tool' | 'system';

/** The side each error comes from. A record, so a new code cannot be added without deciding its side. */
const FAULTS: Record<TroupeErrorCode, Fault> = {
  configuration: 'user',
  invalid_tool: 'user',
  invalid_agent: 'user',
  unknown_agent: 'user',
  runtime_closed: 'user',
  script_exhausted: 'user',
  invalid_script_step: 'user',
  unused_steps: 'user',
  model_error: 'model',
  model_call_failed: 'model',
  tool_error: 'tool',
  tool_timeout: 'tool',
  delegation_refused: 'user',
  unknown_request: 'user',
  invalid_agent_file: 'user',
  corrupt_store: 'system',
  unsupported_schema: 'user',
  corrupt_recording: 'system',
  store_locked: 'system',
  aborted: 'system',
  inbox_full: 'system',
  undeliverable: 'user',
  message_refused: 'user',
  reply_timeout: 'system',
  deadlock: 'system',
  time_limit: 'system',
  budget_spent: 'user',
  outside_workspace: 'model',
};

/** The common base of every error troupe throws. */
export abstract class TroupeError extends Error {
  /** A literal code that names the kind of error. */
  abstract readonly code: TroupeErrorCode;

  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }

  /** The side this error comes from. */
  get fault(): Fault {
    return FAULTS[this.code];
  }
}

/** A runtime or definition option is invalid (user error, raised before anything runs). */
export class ConfigurationError extends TroupeError {
  readonly code = 'configuration' as const;
}

/** A tool definition is invalid: bad name, duplicate name, or parameters that are not a zod object. */
export class InvalidToolError extends TroupeError {
  readonly code = 'invalid_tool' as const;
  constructor(
    message: string,
    /** The name of the tool, as given. */
    readonly toolName: string,
  ) {
    super(message);
  }
}

/** An agent definition is invalid. */
export class InvalidAgentError extends TroupeError {
  readonly code = 'invalid_agent' as const;
  constructor(
    message: string,
    /** The name of the agent, as given. */
    readonly agentName: string,
  ) {
    super(message);
  }
}

/** An agent name or id that the runtime does not know. */
export class UnknownAgentError extends TroupeError {
  readonly code = 'unknown_agent' as const;
  constructor(
    /** The unknown name or id. */
    readonly agent: string,
    known: readonly string[] = [],
  ) {
    super(
      known.length > 0
        ? `Unknown agent "${agent}". Known agents: ${known.join(', ')}.`
        : `Unknown agent "${agent}".`,
    );
  }
}

/** The runtime was shut down; it accepts no more work. */
export class RuntimeClosedError extends TroupeError {
  readonly code = 'runtime_closed' as const;
  constructor() {
    super('The runtime has been shut down and accepts no more work.');
  }
}

/** A `ScriptedModel` was called more times than it has steps. */
export class ScriptExhaustedError extends TroupeError {
  readonly code = 'script_exhausted' as const;
  constructor(
    /** The number of calls the script answered before this one. */
    readonly callIndex: number,
    /** The id of the agent that made the extra call. */
    readonly agentId: string,
    /** What is missing, when the model can say more than the call's number (a per-agent script). */
    detail?: string,
  ) {
    super(detail ?? `ScriptedModel has no step for call #${callIndex + 1} (from agent ${agentId}).`);
  }
}

/**
 * A step of a `ScriptedModel`'s script gave something that is not a reply: `null` or `undefined`, a number, a reply
 * whose content is not text or whose tool calls are not a list, or a tool call that is not an object. The test's script
 * is at fault, so the side is `user`.
 */
export class InvalidScriptStepError extends TroupeError {
  readonly code = 'invalid_script_step' as const;
  constructor(
    /** The name of the scripted model. */
    readonly model: string,
    /** Where the step is, such as `step 2 of the script` or `call 3 of the script function`. */
    readonly step: string,
    /** The id of the agent that asked. */
    readonly agentId: string,
    /** What is wrong with it, such as `gave null instead of a reply`. */
    readonly problem: string,
  ) {
    super(
      `ScriptedModel "${model}": ${step} (asked by ${agentId}) ${problem}. A step is a string, a reply ` +
        '({ content, toolCalls? }, each tool call { id, name, arguments }), an Error to throw, or a function giving one of those.',
    );
  }
}

/** A model call failed: the server answered with an error, or the reply could not be read. */
export class ModelError extends TroupeError {
  readonly code = 'model_error' as const;
  constructor(
    message: string,
    options: {
      /** HTTP status of the failed request, if there was one. */
      status?: number;
      /** Whether the same call may succeed if tried again; by default judged from the status. */
      retryable?: boolean;
      /** How long the server asked to wait before trying again (its `retry-after`), in ms. */
      retryAfterMs?: number;
      cause?: unknown;
    } = {},
  ) {
    super(message, { cause: options.cause });
    this.status = options.status;
    this.retryable = options.retryable ?? retryableStatus(options.status);
    const { retryAfterMs } = options;
    this.retryAfterMs = retryAfterMs !== undefined && Number.isFinite(retryAfterMs) && retryAfterMs >= 0 ? retryAfterMs : undefined;
  }
  /** HTTP status of the failed request, if there was one. */
  readonly status: number | undefined;
  /**
   * How long the server asked to wait before the next try, in ms (an HTTP `retry-after` or `retry-after-ms` header,
   * as `OpenAIModel` reads it), if it said. troupe's retries wait that long instead of their own backoff, at most
   * their `maxMs`. A negative or non-finite value is dropped.
   */
  readonly retryAfterMs: number | undefined;
  /**
   * Whether the same call may succeed if tried again. Unless the error says, it is judged from the status: a request
   * timeout (408), a conflict (409), a rate limit (429) or a server error (5xx) may pass; other statuses (a bad
   * request, a missing key, an unknown model) and no status at all (a reply that could not be read) fail again. A
   * model adapter that lost its connection or timed out says `retryable: true` itself (`OpenAIModel` does).
   */
  readonly retryable: boolean;
}

function retryableStatus(status: number | undefined): boolean {
  return status !== undefined && (status === 408 || status === 409 || status === 429 || status >= 500);
}

/** What a {@link ModelCallError} is made from. */
export interface ModelCallFailure {
  /** The model asked: the name the agent's definition gives, else the model's own name. */
  model: string;
  /** The name of the calling agent's definition. */
  agentName: string;
  /** The id of the calling agent. */
  agentId: string;
  /** Which try of this turn's model call it was, from 1 (default 1): the last one, when the call was tried again. */
  attempt?: number;
  /** What the model threw: anything, not only an `Error`. */
  cause: unknown;
}

/**
 * A model call failed: the model threw (or rejected with) `cause`, whatever it was. It names the model, the agent and
 * the try, and its message reads on its own: `The model call of agent "writer" to model "gpt-4o" failed: <cause>`
 * (`failed after 3 tries: <cause>` when it was tried again, `cause` being the last try's), where a cause that is no
 * `Error` with a message is described (`the model threw undefined`), never printed raw. `cause` holds what the model
 * threw, as it was; `status` and `retryable` are the cause's when it is a {@link ModelError}, else undefined.
 *
 * In an agent's failure (`errorInfo`) the `code` and `fault` are the cause's when the cause is a troupe error
 * (`model_error`, `script_exhausted`, …), and `model_call_failed` with fault `model` when it is not (a plain `Error`,
 * a string, `undefined`); the message is this error's.
 */
export class ModelCallError extends TroupeError {
  readonly code = 'model_call_failed' as const;
  /** The model asked. */
  readonly model: string;
  /** The name of the calling agent's definition. */
  readonly agentName: string;
  /** The id of the calling agent. */
  readonly agentId: string;
  /** Which try of this turn's model call failed, from 1. */
  readonly attempt: number;
  /** The cause's HTTP status, when it is a {@link ModelError} that has one. */
  readonly status: number | undefined;
  /** Whether the same call may succeed if tried again, when the cause is a {@link ModelError}; undefined otherwise. */
  readonly retryable: boolean | undefined;

  constructor(failure: ModelCallFailure) {
    const tries = (failure.attempt ?? 1) > 1 ? ` after ${failure.attempt} tries` : '';
    super(
      `The model call of agent "${failure.agentName}" to model "${failure.model}" failed${tries}: ${describeThrown(failure.cause)}`,
      { cause: failure.cause },
    );
    this.model = failure.model;
    this.agentName = failure.agentName;
    this.agentId = failure.agentId;
    this.attempt = failure.attempt ?? 1;
    const cause = failure.cause instanceof ModelError || failure.cause instanceof ModelCallError ? failure.cause : undefined;
    this.status = cause?.status;
    this.retryable = cause?.retryable;
  }
}

/** What a model threw, in words: its message, or what it was when it has none (never a bare `undefined`). */
function describeThrown(thrown: unknown): string {
  if (thrown === undefined || thrown === null) return `the model threw ${String(thrown)}`;
  if (typeof thrown === 'string') return thrown.trim() === '' ? 'the model threw an empty string' : thrown;
  const message: unknown = typeof thrown === 'object' ? (thrown as { message?: unknown }).message : undefined;
  if (typeof message === 'string' && message.trim() !== '') return message;
  if (thrown instanceof Error) return `the model threw ${thrown.name} without a message`;
  if (typeof thrown === 'function') return 'the model threw a function';
  return `the model threw the ${typeof thrown} ${errorMessage(thrown)}`;
}

/** A tool failed while it ran. The model sees the message as the tool's error result. */
export class ToolError extends TroupeError {
  readonly code = 'tool_error' as const;
  constructor(
    message: string,
    /** The name of the tool. */
    readonly toolName: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A tool did not finish within its `timeoutMs`. */
export class ToolTimeoutError extends TroupeError {
  readonly code = 'tool_timeout' as const;
  constructor(
    /** The name of the tool. */
    readonly toolName: string,
    /** The limit that passed. */
    readonly timeoutMs: number,
  ) {
    super(`Tool "${toolName}" timed out after ${timeoutMs} ms.`);
  }
}

/** Why a delegation was refused before any sub-agent was made. */
export type DelegationRefusal =
  | 'unknown_agent'
  | 'not_allowed'
  | 'depth_limit'
  | 'unknown_session'
  | 'still_running'
  | 'wrong_agent'
  | 'name_taken'
  /** `spawn_agent` named tools its caller does not have. */
  | 'invalid_tools'
  /** `spawn_agent` gave a definition that is not valid (a bad name, say). */
  | 'invalid_agent'
  /** A limit of the run: `maxAgents`, `maxPending`, or a spent budget of the caller's subtree or above it. */
  | 'budget';

/**
 * A delegation was refused before anything was spawned: an unknown or forbidden agent, the depth limit, a limit of
 * the run (`budget`), or a resume of a session that cannot be resumed. Inside a tool it becomes an error result the model sees.
 */
export class DelegationError extends TroupeError {
  readonly code = 'delegation_refused' as const;
  constructor(
    /** What made it refuse. */
    readonly reason: DelegationRefusal,
    message: string,
  ) {
    super(message);
  }
}

/** An approval request id that is not waiting for an answer (unknown, or already answered). */
export class UnknownRequestError extends TroupeError {
  readonly code = 'unknown_request' as const;
  constructor(
    /** The id given. */
    readonly requestId: string,
  ) {
    super(`No approval request "${requestId}" is waiting for an answer.`);
  }
}

/** An agent file that cannot be used: a bad field, a name that does not match, or a path that leaves its folder. */
export class AgentFileError extends TroupeError {
  readonly code = 'invalid_agent_file' as const;
  constructor(
    /** The file (or the name asked for, when no file was read). */
    readonly file: string,
    /** The frontmatter field at fault, `body` for the system prompt, or `path` for a refused path. */
    readonly field: string,
    message: string,
  ) {
    super(`${file}: ${field}: ${message}`);
  }
}

/** Why a path was refused by the workspace (see {@link WorkspaceEscapeError}). */
export type WorkspaceEscape = 'outside' | 'symlink';

/**
 * A file tool was asked for a path outside its workspace: a path that climbs out (`../x`), an absolute path elsewhere
 * (`/etc/passwd`), or one that leads out through a symbolic link (the link itself, or a folder on the way). Nothing is
 * read or written; the model sees the message as an error result.
 */
export class WorkspaceEscapeError extends TroupeError {
  readonly code = 'outside_workspace' as const;
  constructor(
    /** The path as the tool was given it. */
    readonly path: string,
    /** `outside` for a path that names a place outside; `symlink` for one that leads out through a symbolic link. */
    readonly reason: WorkspaceEscape,
  ) {
    super(
      reason === 'symlink'
        ? `"${path}" leads outside the workspace through a symbolic link; file tools reach only files inside the workspace.`
        : `"${path}" is outside the workspace; file tools reach only files inside it (give a path relative to the workspace).`,
    );
  }
}

/** A store file that does not hold what a store writes. It is left as it is and never overwritten. */
export class CorruptStoreError extends TroupeError {
  readonly code = 'corrupt_store' as const;
  constructor(
    /** The store file. */
    readonly file: string,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`The store ${file} is not a valid store file (${reason}). It was left as it is; move or repair it.`);
  }
}

/** A recording (`record` file) that does not hold what troupe writes: a line that is not JSON or not an event. */
export class CorruptRecordingError extends TroupeError {
  readonly code = 'corrupt_recording' as const;
  constructor(
    /** The recording file. */
    readonly file: string,
    /** The line at fault, from 1. */
    readonly line: number,
    /** What is wrong with it. */
    readonly reason: string,
  ) {
    super(`The recording ${file} is not a valid recording: line ${line}: ${reason}.`);
  }
}

/** What kind of stored thing an {@link UnsupportedSchemaError} is about. */
export type StoredKind = 'store' | 'session' | 'recording';

/**
 * A stored file or record written by a newer troupe: its `schemaVersion` is above the newest this version reads. It
 * is left as it is and never rewritten; read it with the newer troupe that wrote it.
 */
export class UnsupportedSchemaError extends TroupeError {
  readonly code = 'unsupported_schema' as const;
  constructor(
    /** A store file, a session record, or a recording. */
    readonly kind: StoredKind,
    /** The file (absolute path), or for a session record `session <id>`. */
    readonly source: string,
    /** The `schemaVersion` it carries. */
    readonly found: number,
    /** The newest version this troupe reads. */
    readonly supported: number,
  ) {
    super(
      `The ${kind === 'session' ? '' : `${kind} `}${source} has schemaVersion ${found}, but this version of troupe reads ` +
        `up to ${supported}. It was left as it is; use the newer troupe that wrote it.`,
    );
  }
}

/**
 * A store's lock was held by another writer (another process, or another store object of this process on the same
 * file) for longer than the wait allowed. Nothing was written.
 */
export class StoreLockedError extends TroupeError {
  readonly code = 'store_locked' as const;
  constructor(
    /** The lock (`<store>.lock`). */
    readonly lockFile: string,
    /** How long it waited. */
    readonly waitedMs: number,
  ) {
    super(`The store lock ${lockFile} was held by another writer for more than ${waitedMs} ms.`);
  }
}

/**
 * A store's lock was lost while this process held it: it was not kept fresh within `staleMs` (this process stalled
 * that long, so another took it as abandoned) or it was removed. The write fails with this error; when the loss was
 * only noticed after the file was replaced, the change may be in the file all the same. A kind of
 * {@link StoreLockedError} (same `code`).
 */
export class StoreLockLostError extends StoreLockedError {
  constructor(
    /** The lock (`<store>.lock`). */
    lockFile: string,
    /** What proper-lockfile reported. */
    cause: unknown,
  ) {
    super(lockFile, 0);
    this.message = `The store lock ${lockFile} was lost while this process held it (${errorMessage(cause)}); the write failed and may or may not be in the file.`;
    this.cause = cause;
  }
}

/**
 * A model turn was not started because a budget over the agent's subtree (its own, an ancestor's or the run's) is
 * spent: the agent fails with reason `budget` (a resident with an answer completes with it), and the model is not
 * called.
 */
export class BudgetSpentError extends TroupeError {
  readonly code = 'budget_spent' as const;
  constructor(
    /** The agent (or group) whose budget is spent. */
    readonly owner: string,
    /** The limit used up, in words (`maxTurns 3 used`). */
    readonly limit?: string,
  ) {
    super(`The budget of ${owner} is spent${limit === undefined ? '' : ` (${limit})`}: no more model turns under it.`);
  }
}

/** Work was stopped through its AbortSignal (the agent was cancelled or the runtime shut down). */
export class AbortedError extends TroupeError {
  readonly code = 'aborted' as const;
  constructor(message = 'The operation was aborted.') {
    super(message);
  }
}

/** A message was refused because the receiver's inbox was full (and set to refuse rather than drop the oldest). */
export class InboxFullError extends TroupeError {
  readonly code = 'inbox_full' as const;
  constructor(
    /** The receiver's id. */
    readonly receiver: string,
    /** The id of the refused message. */
    readonly messageId: string,
  ) {
    super(`The inbox of ${receiver} is full; message ${messageId} was not delivered. Try again later or send less often.`);
  }
}

/**
 * Why a message reached nobody (see {@link UndeliverableError}); `no_message`: a reply with no message read to answer
 * (none yet, or not the id given).
 */
export type UndeliverableReason = 'unknown_agent' | 'ended' | 'no_live_agent' | 'ambiguous' | 'no_subscribers' | 'no_message';

/**
 * A message reached nobody: an unknown or ended agent, a name with no live agent or with several, a topic with no
 * subscriber when a reply is awaited (a plain publish to none is no error), or a reply with no message read to answer
 * (see {@link UndeliverableReason}).
 */
export class UndeliverableError extends TroupeError {
  readonly code = 'undeliverable' as const;
  constructor(
    /** The address it was sent to. */
    readonly address: string,
    /** Why it could not be delivered. */
    readonly reason: UndeliverableReason,
    message: string,
  ) {
    super(message);
  }
}

/** A message an agent may not send: its `canMessage` list or the runtime's message policy refused it. */
export class MessageRefusedError extends TroupeError {
  readonly code = 'message_refused' as const;
  constructor(
    /** The sender's id. */
    readonly sender: string,
    /** The address it tried to reach. */
    readonly address: string,
    message: string,
  ) {
    super(message);
  }
}

/** No reply came to a request within its time limit. */
export class ReplyTimeoutError extends TroupeError {
  readonly code = 'reply_timeout' as const;
  constructor(
    /** The id of the message that got no reply. */
    readonly messageId: string,
    /** The limit that passed, on the runtime's clock. */
    readonly timeoutMs: number,
  ) {
    super(`No reply to message ${messageId} came within ${timeoutMs} ms.`);
  }
}

/**
 * A simulation can go no further: no agent is thinking or acting, no timer is set, and some agents still wait for
 * messages or replies that nobody can send.
 */
export class DeadlockError extends TroupeError {
  readonly code = 'deadlock' as const;
  constructor(
    /**
     * The agents that wait, each with the state it waits in and, for one that waits for messages, what for (`a reply to
     * msg:3 from agent:judge:x1`, `a message from bob`).
     */
    readonly waiting: readonly { id: string; state: string; waitsFor?: string }[],
    /** The runtime clock's time when it was found. */
    readonly at: number,
  ) {
    super(
      waiting.length === 0
        ? `Deadlock at ${at} ms: nothing is left to run and no timer is set, but what is awaited has not settled.`
        : `Deadlock at ${at} ms: nothing is left to run and no timer is set, but ${waiting.length} agent(s) still wait: ` +
            `${waiting
              .slice(0, 10)
              .map((agent) => `${agent.id} (${agent.state}${agent.waitsFor === undefined ? '' : `, for ${agent.waitsFor}`})`)
              .join(', ')}${waiting.length > 10 ? ` and ${waiting.length - 10} more` : ''}.`,
    );
  }
}

/** `runUntilIdle` or `advanceUntilSettled` gave up: simulated time moved past its limit while work was still due. */
export class TimeLimitError extends TroupeError {
  readonly code = 'time_limit' as const;
  constructor(
    /** The limit, in ms of the runtime's clock from the start of the call. */
    readonly limitMs: number,
    /** The clock's time when it gave up. */
    readonly at: number,
  ) {
    super(`Simulated time passed the limit (${limitMs} ms from the start of runUntilIdle or advanceUntilSettled) at ${at} ms; raise limitMs, or look for an agent that never stops.`);
  }
}

/** Turns anything thrown into a readable one-line message. */
export function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  if (typeof error === 'string') return error;
  try {
    return JSON.stringify(error) ?? String(error);
  } catch {
    // A cycle or a BigInt, which JSON cannot write: String() would say `[object Object]` and nothing of what it held.
    try {
      return looseJson(error);
    } catch {
      return String(error); // a getter or a toJSON that throws
    }
  }
}

/** JSON of a thrown value, with a cycle written `"[Circular]"` and a BigInt as `"10n"` (for {@link errorMessage}). */
function looseJson(value: unknown): string {
  // The objects from the root down to the one being written: `this` is the holder of each key as it is written.
  const path: object[] = [];
  return JSON.stringify(value, function (this: unknown, _key: string, item: unknown) {
    if (typeof item === 'bigint') return `${item}n`;
    if (typeof item !== 'object' || item === null) return item;
    while (path.length > 0 && path[path.length - 1] !== this) path.pop();
    if (path.includes(item)) return '[Circular]';
    path.push(item);
    return item;
  });
}

/**
 * An error's message with its causes' (`fetch failed (connect ECONNREFUSED 127.0.0.1:1)`): fetch and the SDKs built on
 * it say only `fetch failed`, and why is in the cause.
 */
export function causeChain(error: unknown): string {
  const messages: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    // A refused connection to several addresses is an AggregateError with a code and no message.
    const { code } = current as { code?: unknown };
    const text = current.message !== '' ? current.message : typeof code === 'string' ? code : '';
    if (text !== '' && !messages.includes(text)) messages.push(text);
    current = current.cause;
  }
  return messages.length === 0 ? errorMessage(error) : `${messages[0]}${messages.length > 1 ? ` (${messages.slice(1).join(': ')})` : ''}`;
}

/**
 * A `ScriptedModel`'s script was not used up (`assertDone`): the run asked the model fewer times than the test scripted.
 * Either the test scripted too much, or the runtime skipped a turn it should have taken.
 */
export class UnusedStepsError extends TroupeError {
  readonly code = 'unused_steps' as const;
  constructor(
    /** The name of the scripted model. */
    readonly model: string,
    /** How many steps were never used, in all. */
    readonly remaining: number,
    /** How many calls the model answered. */
    readonly calls: number,
    /**
     * For a per-agent script: the unused steps of each agent, by id (or by name, for a script no agent of that name
     * ever used). Empty for a single list of steps.
     */
    readonly byAgent: Readonly<Record<string, number>> = {},
  ) {
    const agents = Object.entries(byAgent).map(([agent, left]) => `${agent}: ${left}`);
    super(
      `ScriptedModel "${model}" has ${remaining} unused step(s) after ${calls} call(s)` +
        `${agents.length > 0 ? ` (${agents.join(', ')})` : ''}: the run asked the model fewer times than the script expects.`,
    );
  }
}
