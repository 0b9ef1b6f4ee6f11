import type { Observable } from 'rxjs';
import type { ErrorInfo } from '../failure.js';
import type { InspectionEvent, Observer } from 'xstate';
import type { Agent, AgentDefinition } from '../catalog/defineAgent.js';
import type { Clock } from '../clock.js';
import type { AgentFileWarning } from '../catalog/adaptAgentFile.js';
import type { AgentFileError } from '../errors.js';
import type { FailureReason, TroupeEvent } from '../events/events.js';
import type { MetricsSnapshot } from '../events/metrics.js';
import type { AgentBudget } from '../machines/agentTypes.js';
import type { AgentRecord } from '../machines/agentTable.js';
import type { MemoryPort } from '../memory/MemoryPort.js';
import type { SessionManager } from '../memory/SessionStore.js';
import type { ChatMessage, Model } from '../models/Model.js';
import type { GroupRestart, RestartIntensity, RestartMode } from '../restart.js';
import type { RetryOptions } from '../retry.js';
import type { PriceTable } from '../models/prices.js';
import type { StatelyInspector } from '../inspect/statelyInspector.js';
import type { WebInspector, WebInspectorOptions } from '../inspect/webInspector.js';
import type { Tool } from '../tools/defineTool.js';
import type { McpServerStatus } from '../tools/mcp/McpConnection.js';
import type { McpServerConfigs } from '../tools/mcp/McpServerConfig.js';
import type { PoolOptions, PoolStats } from './AgentPool.js';
import type { AgentResult } from './AgentResults.js';
import type { PendingApproval } from './Approvals.js';
import type { ToolPolicy } from '../tools/toolApproval.js';
import type { DelegationPolicy, TaskOutput, TaskOutputOptions } from '../tools/Delegation.js';
import type { Blackboard } from '../messaging/Blackboard.js';
import type { Message } from '../messaging/Message.js';
import type { MessagePolicy, MessageReceipt } from '../messaging/Messaging.js';
import type { Overflow } from '../messaging/Inbox.js';
import type { IdleReport, RunUntilIdleOptions } from './Simulation.js';

/** The options of `createRuntime`. */
export interface RuntimeOptions {
  /** The model agents use unless their definition names another `Model`. */
  model?: Model;
  /** Agents defined in code, made with `defineAgent` (plain definitions are validated the same way). */
  agents?: readonly (Agent | AgentDefinition)[];
  /**
   * Folders of agent files (`<name>.md`, YAML frontmatter and the system prompt as the body), read besides the
   * project's `./agents`. Later folders win on a name; agents in `agents` win over files.
   */
  agentDirs?: readonly string[];
  /** The project's agent folder, read when it exists (default `./agents`); `false` reads none. */
  projectAgentDir?: string | false;
  /** Tools agents may name in their `tools` list (the delegation, messaging, todo, memory and file tools are built in). */
  tools?: readonly Tool[];
  /**
   * The folder the built-in file tools (`read_file`, `list_files`, `grep`, `write_file`, `edit_file`) work in. Only
   * agents that list them get them. Nothing outside the folder is reached: a path that climbs out, an absolute path
   * elsewhere or a symbolic link that leads out is an error result (`WorkspaceEscapeError`). Without a workspace
   * the file tools answer every call with an error that says so. It must be an existing folder.
   */
  workspace?: string;
  /**
   * `true` refuses an agent file that lists a tool the runtime does not have (as troupe did before it read Claude
   * Code's agent files), and passes its `model` to the model as written. By default such a tool is skipped and a
   * Claude Code model alias (`sonnet`, `opus`, `haiku`, `inherit`) gives way to the runtime's model, each change
   * listed in `runtime.agentFileWarnings`.
   */
  strictAgentFiles?: boolean;
  /**
   * MCP servers whose tools agents may call, by name, in `.mcp.json`'s shape: `{ files: { command: 'npx', args: [...],
   * env } }` for a server spawned over stdio, `{ docs: { type: 'http', url, headers } }` for one over streamable HTTP;
   * `timeoutMs` (default 30,000) limits its start and `toolTimeoutMs` (default 60,000) each call, in real time, and
   * `maxResultChars` (default 100,000) what one answer brings into the conversation (the rest is cut, saying so); a field
   * that looks like a misspelling of one of these (`arg`, `header`, `timeout`) is a `ConfigurationError`. An agent
   * lists a server's tools as `files:read_file`, or `files:*` for all of them (the default agent gets every server's).
   * A server starts on the first turn of an agent that uses it and stops at `shutdown()`; one that fails to start,
   * times out or dies turns each call to it into an error result the model sees (see `runtime.mcpServers()`).
   */
  mcpServers?: McpServerConfigs;
  /** Where sessions (records and conversations) are kept: a `JsonFileMemory` outlives the process (default: memory). */
  store?: MemoryPort;
  /** Limits of the pool of idle `persist` agents. */
  pool?: PoolOptions;
  /** At most this many agents think or run tools at once; the rest wait in `pending` (default 5). */
  maxParallel?: number;
  /**
   * Model turns an agent may take before it fails with `max_turns` (default 10). Not a resident agent's: it gets
   * `RESIDENT_MAX_TURNS` (1,000) unless its definition or spawn gives `maxTurns`.
   */
  maxTurns?: number;
  /** How long an agent may make no progress before it fails with `timeout` (default 5 minutes). */
  idleTimeoutMs?: number;
  /** At most this many tool calls of one turn run at once (default 3; at least 1, `Infinity` for no limit). */
  maxToolConcurrency?: number;
  /**
   * `false` runs every turn's tool calls one at a time, in the order the model wrote them, whatever the planner would
   * allow side by side (default `true`). An agent's definition may say otherwise for itself.
   */
  enableParallelExecution?: boolean;
  /** Agents at this depth (top-level agents are at 0) get no delegation tools (default 3). */
  maxDepth?: number;
  /**
   * At most this many agents in one run: a top-level agent and every agent started under it, by delegation,
   * `spawn_agent` or a pattern (default 1,000). A delegation past it fails with reason `budget`; the caller goes on.
   */
  maxAgents?: number;
  /**
   * At most this many agents started by agents may wait for a slot at once, over the whole runtime (default 10,000);
   * a delegation past it fails with reason `budget`. Agents spawned from code are not bounded by it.
   */
  maxPending?: number;
  /**
   * The budget of every run: the model turns, tokens and cost a top-level agent and everything under it may spend
   * together. A turn that would pass it fails its agent with `budget`; no agent may be started under a spent one.
   */
  budget?: AgentBudget;
  /**
   * How many finished agents the runtime keeps in memory (their records, results and metrics entries; default 10,000).
   * Past it, the oldest finished runs (a top-level agent and everything under it, all ended) are forgotten whole:
   * `runtime.record`, `result` and `metrics().agents` no longer know them (`metrics().total` still counts them, so it
   * is then more than the sum over `agents`), and their sessions stay readable and resumable from a store you gave
   * (`store`); the default in-memory store forgets them too. `Infinity` keeps all.
   */
  retainFinished?: number;
  /**
   * How a model call that failed in a way another try may mend (no answer, a time-out, HTTP 408, 409, 429, 5xx) is
   * tried again: `attempts` in all (default 3), waiting a random time up to `baseMs` (default 500) doubling each
   * retry, at most `maxMs` (default 30,000), or what the server's `retry-after` asks (at most `maxMs` too), on the
   * runtime's clock. Each retry is a `model.retry` event; when the tries run out the agent fails with `error`. An
   * agent's definition and a spawn may set each field over this.
   */
  retry?: RetryOptions;
  /** Decides every delegation an agent asks for: allow, deny, or ask a person (default: allow all). */
  delegationPolicy?: DelegationPolicy;
  /**
   * Decides tool calls before they run: allow, deny (the model gets an error result with the reason) or ask a person
   * (`runtime.approve` / `runtime.deny`; the agent waits in `running.acting.waitingForPerson`), per category
   * (`{ file_op: 'ask', db_op: 'deny' }`) or by a function of the call. With a policy set, file writes ask unless it
   * says otherwise; without one, only tools with `needsApproval` ask. See {@link ToolPolicy}.
   */
  toolPolicy?: ToolPolicy;
  /**
   * The actor system's clock: pass XState's `SimulatedClock` to run in simulated time (default: real time, reading
   * 0 when the runtime is made, so event times are milliseconds since then).
   */
  clock?: Clock;
  /**
   * Inspection of the actor system. `'stately'` starts a Stately inspector (`createStatelyInspector`): a relay on
   * 127.0.0.1 whose page shows the supervisor, every agent and each agent's worker (its model calls and tool
   * batches, `worker:<agent id>`) as actors, with their states and the events between them; its address is printed on stderr (and is `runtime.inspector.url`), and
   * it closes at `shutdown()`. A Stately inspector of your own (`createStatelyInspector()`) is used as it is and stays
   * open after shutdown until you close it, so a page opened later still shows the run. Any XState inspection
   * observer works too (handed to `createActor`): it sees the same actors and events.
   */
  inspect?: 'stately' | StatelyInspector | Observer<InspectionEvent> | ((event: InspectionEvent) => void);
  /**
   * troupe's web inspector (`createWebInspector`): `true` (or its options, such as `{ port }`) starts a page on
   * 127.0.0.1 that shows this run live: the agent tree, each agent's statechart, conversation and figures, the event
   * log, the messages, charts, and a slider back through time. Its address is printed on stderr (and is
   * `runtime.ui.url`); it closes at `shutdown()`, after sending pages the whole run (open pages keep showing it). A web
   * inspector of your own is fed this run's events and stays open until you close it.
   */
  ui?: boolean | WebInspectorOptions | WebInspector;
  /** Prices by model name, merged over `defaultPrices`: each `{ input, output }`, USD per million tokens, numbers ≥ 0. */
  prices?: PriceTable;
  /** The id stamped on every event (default: a new random id, drawn from `seed` when one is given). */
  runId?: string;
  /**
   * Seeds the run's one random source: agent ids, the run id, approval ids and each agent's `request.random` (which
   * scripted models may draw from). With a `SimulatedClock`, two runs with the same seed and inputs are identical.
   */
  seed?: number;
  /**
   * Writes every event as one JSON line to this file (made anew), after a header line with the run id and the
   * format's `schemaVersion` (read it back with `readRecording`); with a seed, two runs write identical files.
   */
  record?: string;
  /**
   * Writes every event as one JSON line to this file as it happens (a trace: the recording format, flushed event by
   * event, so a crash loses at most the last one), with every secret replaced by `[redacted]` (see `secrets`). Each
   * line is written with a synchronous write before any subscriber hears of its event (a few µs an event), and the
   * file is fsync'd at shutdown. Read it with `readRecording` or `troupe trace summary`. `record` is the buffered
   * alternative: the same lines, cheaper, but lost with the process.
   */
  trace?: string;
  /**
   * Values that must never appear in events, traces, error messages or stored sessions: each is replaced by
   * `[redacted]`. API keys, `Authorization` headers and environment variables whose names end in `_KEY`, `_TOKEN`
   * or `_SECRET` are secrets too, without being listed. Each must have at least 8 characters (`MIN_SECRET_LENGTH`;
   * shorter values are in ordinary words and ids): a shorter one is a `ConfigurationError`, and environment values
   * that short are not taken. Agents still work with the real values; what they say is redacted where it leaves the
   * runtime (see the `Redactor`).
   */
  secrets?: readonly string[];
  /** Every agent's inbox (default: 256 messages; a full one refuses more). */
  inbox?: { capacity?: number; overflow?: Overflow };
  /** Decides every message an agent sends (default: allow all, within each agent's `canMessage`). */
  messagePolicy?: MessagePolicy;
}

/** Per-spawn options. */
export interface SpawnOptions {
  /** The agent that spawns this one; its subtree metrics include this agent's, and cancelling it cancels this one. */
  parentId?: string;
  /** The parent's tool call that started this agent. */
  toolCallId?: string;
  /** Higher starts first among waiting agents (default 0). */
  priority?: number;
  /** Overrides the definition's and runtime's `maxTurns`. */
  maxTurns?: number;
  /** Overrides the definition's and runtime's idle timeout. */
  idleTimeoutMs?: number;
  /** How its failed model calls are tried again: each field over the definition's and the runtime's (see `RuntimeOptions.retry`). */
  retry?: RetryOptions;
  /**
   * Whether a failed run is started again, over the definition's: `on-failure` restarts it after a failure with reason
   * `error` or `timeout`, under the same id and fresh from this spawn's input (its `handle.result` is the last
   * attempt's), within `restartIntensity`; `never` (the default) does not. See `RestartMode`.
   */
  restart?: RestartMode;
  /**
   * At most `max` restarts within `withinMs` on the runtime's clock, each field over the definition's (default 3
   * within 60,000 ms); past it the failure is the result (`agent.escalated`). In a `one-for-all` group the group's
   * intensity counts instead.
   */
  restartIntensity?: RestartIntensity;
  /**
   * Spending limits of this agent and everything it starts (its subtree): a turn that would pass one fails its agent
   * with `budget`, and no agent may be started under a spent one.
   */
  budget?: AgentBudget;
  /** Messages to start from, after the system prompt and before the task. */
  history?: ChatMessage[];
  /** A short summary of the task, shown in events and logs. */
  description?: string;
  /**
   * Marks a background sub-agent: nobody waits for it; get its result later from the handle or with
   * `runtime.taskOutput(id)`. (`spawn` never blocks either way; this is what events and inspectors show.)
   */
  background?: boolean;
  /** Pool the agent between tasks (as `persist: true` in its definition does). */
  persist?: boolean;
  /**
   * For a top-level agent: the key its conversation is also stored under, and its sessions' parent (default
   * `main`).
   */
  conversationKey?: string;
  /** Keep at most this many messages after the system prompt, over the definition's `historyLimit`. */
  historyLimit?: number;
  /** Keep the agent after it answers, waiting for messages, until it is stopped (as `resident: true` in its definition). */
  resident?: boolean;
  /** Topics it subscribes to from the start, besides its definition's. */
  subscribe?: readonly string[];
  /** Its inbox, over its definition's and the runtime's. */
  inbox?: { capacity?: number; overflow?: Overflow };
}

/** What {@link Runtime.spawn} returns. */
export interface AgentHandle {
  /**
   * The agent's id, `agent:<name>:<key>`: the key is ten letters and digits from the runtime's random source (the same
   * on every run with the same `seed`).
   */
  readonly id: string;
  /** Resolves when the agent ends, completed or failed; it never rejects. */
  readonly result: Promise<AgentResult>;
  /**
   * The events of this agent and the agents it spawns, until it ends. Subscribe before awaiting: events that
   * happened in the same tick as `spawn` are replayed to subscribers that arrive in that tick.
   */
  readonly events$: Observable<TroupeEvent>;
}

/** Options of {@link Runtime.group}. */
export interface GroupOptions {
  /** The agent or group the new group runs under (its subtree metrics include the group's; cancelling it cancels the group). */
  parentId?: string | null;
  /** The parent's tool call that opened the group. */
  toolCallId?: string;
  /**
   * `one-for-all`: when a member agent is restarted (its `restart` is `on-failure` and it failed with `error` or
   * `timeout`), its sibling agents still pending or running are cancelled and restarted too, each under its id and
   * fresh from its input (members that ended keep their results; nested groups are left as they are). The group's
   * `restartIntensity` then counts every member's restarts together (one per failure, not per sibling).
   */
  restart?: GroupRestart;
  /** For a `one-for-all` group: at most `max` restarts of its members within `withinMs` (default 3 within 60,000 ms). */
  restartIntensity?: RestartIntensity;
}

/**
 * What {@link Runtime.group} returns: a group of agents that a piece of code runs as one (the patterns `sequence`,
 * `parallel`, `fanIn`, `pipeline` and `race` are built on it). Spawn its members with `parentId: handle.id`; end it
 * with `complete` or `fail`, which first cancel whatever still runs under it.
 */
export interface GroupHandle {
  /** The group's id, `group:<name>:<key>`. */
  readonly id: string;
  /** Resolves when the group ends (completed, failed, or cancelled with its subtree); it never rejects. */
  readonly result: Promise<AgentResult>;
  /** True until the group has ended: nothing should be spawned under it after that. Until then `runtime.idle()` waits for it. */
  readonly open: boolean;
  /**
   * Ends the group with its combined output (members still running are cancelled). Ignored once it has ended. An
   * output that is not a string is a `ConfigurationError`.
   */
  complete(output: string): void;
  /**
   * Fails the group (members still running are cancelled); `reason` defaults to `error`. A text becomes an error with
   * code `step_failed`; an {@link ErrorInfo} (a failed step's `result.error`) keeps its code. Ignored once it has ended.
   * An empty text, anything else as the error, or a reason that is not a `FailureReason` is a `ConfigurationError`.
   */
  fail(error: string | ErrorInfo, reason?: FailureReason): void;
}

/** A running troupe: spawn agents, watch them, cancel them, shut down. */
export interface Runtime {
  /** The id stamped on every event. */
  readonly runId: string;
  /** The names of the agents that may be spawned now (agents made with `spawn_agent` included). */
  readonly agentNames: readonly string[];
  /** Agent files that were refused, each naming its file and field; the other agents loaded. */
  readonly agentFileErrors: readonly AgentFileError[];
  /**
   * What agent files asked for that this runtime does not have, and what was done instead: a tool skipped and a Claude
   * Code model alias replaced by the runtime's model (neither with `strictAgentFiles: true`, which refuses such a file),
   * a field that looks like a misspelling of one troupe reads ignored, and a file not used because an agent of its name
   * is given in code or in a later folder. Every file named here but the unused ones loaded.
   */
  readonly agentFileWarnings: readonly AgentFileWarning[];
  /** Every event of every agent, merged. Hot: subscribe before spawning to see everything. */
  readonly events$: Observable<TroupeEvent>;
  /** Live metrics folded from `events$`; replays the latest snapshot to new subscribers. */
  readonly metrics$: Observable<MetricsSnapshot>;
  /** The sessions of this runtime's store: records and conversations, from this process and earlier ones. */
  readonly sessions: SessionManager;
  /**
   * The Stately inspector the runtime reports to (`await runtime.inspector.url`): the one it started for `inspect:
   * 'stately'` (closed at shutdown), or the one it was given.
   */
  readonly inspector?: StatelyInspector;
  /** The web inspector this run is shown in (`await runtime.ui.url`), when `ui` was given. */
  readonly ui?: WebInspector;
  /**
   * How each MCP server stands: the runtime's (`idle` until an agent needs it) and those agents define, with its
   * state, its tools once listed, its child's pid for a stdio server, and why it failed.
   */
  mcpServers(): McpServerStatus[];
  /**
   * Spawns an agent; it starts when a slot is free under `maxParallel`. Throws, starting nothing: `UnknownAgentError`
   * for an agent name or `parentId` the runtime does not have (`AgentFileError` for an agent file it refuses),
   * `ConfigurationError` for an empty task or a bad or unknown option, `DelegationError` (reason `budget`) under a
   * `parentId` whose run is at `maxAgents` or whose budget is spent (or an agent `parentId` past `maxPending`), and
   * `RuntimeClosedError` after `shutdown`.
   */
  spawn(agentName: string, task: string, options?: SpawnOptions): AgentHandle;
  /**
   * Spawns an agent and waits for its result. The promise resolves with a failed result when the agent fails; it
   * rejects, without starting anything, when the agent cannot be spawned (an unknown agent, a bad option, a runtime
   * shut down), as `spawn` throws then.
   */
  run(agentName: string, task: string, options?: SpawnOptions): Promise<AgentResult>;
  /**
   * Opens a group (an unknown option is a `ConfigurationError`, as for `spawn`): a node of the agent tree for code that composes agents without a lead model (what the patterns
   * use). It starts at once without taking a `maxParallel` slot, appears in events (`agent.spawned` with `group: true`)
   * and metrics like an agent whose own figures are zero, and its result is an {@link AgentResult} whose
   * `metrics.subtree` sums its members'. `name` must be a valid agent name (it is the `agent` of the result).
   *
   * @example
   * const group = runtime.group('review', 'Review the draft.');
   * const [a, b] = await Promise.all([
   *   runtime.run('critic', 'Find flaws.', { parentId: group.id }),
   *   runtime.run('editor', 'Fix the style.', { parentId: group.id }),
   * ]);
   * group.complete(`${a.output}\n${b.output}`);
   * const result = await group.result;
   */
  group(name: string, task: string, options?: GroupOptions): GroupHandle;
  /**
   * Continues an ended agent's session under the same id, from this process or one before it (with the same store):
   * its whole earlier conversation, then `task`. Rejects with a `DelegationError` for an unknown session
   * (`unknown_session`) or one that has not ended (`still_running`), and as `spawn` throws for a launch it refuses.
   */
  resume(id: string, task: string, options?: Omit<SpawnOptions, 'history'>): Promise<AgentHandle>;
  /** Says whether an agent still runs, or returns its result; `blocking` waits up to `timeoutMs`. */
  taskOutput(id: string, options?: TaskOutputOptions): Promise<TaskOutput>;
  /**
   * Cancels an agent or group and all its descendants (background ones included); they fail with `cancelled`. An agent
   * that has ended keeps its result (only its descendants still running are cancelled; with none, it is a no-op); an id
   * the runtime never had (or has forgotten, see `retainFinished`) throws `UnknownAgentError`, and anything but a
   * non-empty string a `ConfigurationError`.
   */
  cancel(id: string): void;
  /**
   * Lets a delegation (or tool call) that waits for a person go ahead. Throws `UnknownRequestError` if it is not
   * waiting, and `ConfigurationError` for a `requestId` that is not a non-empty string.
   */
  approve(requestId: string): void;
  /**
   * Refuses a delegation (or tool call) that waits for a person: its sub-agent fails with `denied`, its caller gets an
   * error. Throws as `approve` does, and `ConfigurationError` for a `reason` that is not a string.
   */
  deny(requestId: string, reason?: string): void;
  /** The delegations and tool calls waiting for a person, oldest first. */
  pendingApprovals(): PendingApproval[];
  /** Removes the temporary agents made with `spawn_agent` that are left, cancelling any still running. */
  cleanupTemporary(): string[];
  /** How the pool of idle `persist` agents has done. */
  poolStats(): PoolStats;
  /** The latest metrics snapshot. */
  metrics(): MetricsSnapshot;
  /** The supervisor's record of an agent (kept after it ends). */
  record(id: string): Readonly<AgentRecord> | undefined;
  /** Resolves when no agent is pending or running. */
  idle(): Promise<void>;
  /** Resolves when every session write so far has landed in the store; rejects if one failed. */
  flush(): Promise<void>;
  /**
   * Cancels every live agent (deepest first; a resident is stopped, ending with its last answer), writes what is left
   * to the store, stops the supervisor, completes the streams. Every call returns the same promise, which rejects with
   * the first failure (a session write, the recording) however often it is asked. From the call on, what would start
   * work (`spawn`, `run`, `group`, `resume`, `send`, `request`, `publish`) throws or rejects with `RuntimeClosedError`;
   * `cancel` and `stop` of an ended agent change nothing; what reads (`record`, `metrics`, `taskOutput` of an ended
   * agent, `sessions`) still answers.
   */
  shutdown(): Promise<void>;
  /**
   * What `JSON.stringify` writes of the runtime: its run id and the names of its agents. Its streams, stores and
   * models are live objects (and may hold keys): they are never written out.
   */
  toJSON(): { runId: string; agentNames: readonly string[] };

  // ── Messaging ──
  /** Every message sent, once each (a message to a topic once, with the topic as its `to`); secrets redacted. */
  readonly messages$: Observable<Message>;
  /** The run's shared key-value store; every change is a `blackboard.changed` event. */
  readonly blackboard: Blackboard;
  /**
   * Sends a message from code (`from` defaults to `runtime`; otherwise the id of a live agent) to an agent id, an agent
   * name (its one live instance), `topic:<name>`, or `runtime`. With `replyTo`, the id of a message code received, it is
   * the reply to it: an agent whose `send_message` to `runtime` expects a reply gets it as its tool's result. Rejects
   * with `UndeliverableError` or `InboxFullError` when a single receiver cannot get it, with `ConfigurationError` for a
   * `from` that is neither `runtime` nor an agent id, and with `UnknownAgentError` for the id of no live agent.
   *
   * @example
   * // Code answers what agents ask of it (`send_message` to `runtime` with `expect_reply`).
   * runtime.messages$.subscribe((message) => {
   *   if (message.to === 'runtime' && message.replyTo === undefined) void runtime.send(message.from, 'Approved.', { replyTo: message.id });
   * });
   */
  send(to: string, content: string, options?: { from?: string; replyTo?: string }): Promise<MessageReceipt>;
  /**
   * Sends a message from code and resolves with the reply (the first message to `runtime` whose `replyTo` is its id). Rejects with
   * `ReplyTimeoutError` after `timeoutMs` (on the runtime's clock; none waits for ever), with `UndeliverableError` when
   * it reaches nobody or its one receiver ends without replying, with `InboxFullError` when a full inbox refuses it or
   * its one receiver drops it unread, with `RuntimeClosedError` at shutdown, and with `ConfigurationError` for a `timeoutMs`
   * that is not a positive, finite number.
   */
  request(to: string, content: string, options?: { timeoutMs?: number }): Promise<Message>;
  /**
   * Publishes a message to every subscriber of a topic (but its sender): from `runtime`, or with `from` in the name of
   * a live agent (as {@link Runtime.send} takes it).
   */
  publish(topic: string, content: string, options?: { from?: string }): Promise<MessageReceipt>;
  /**
   * Subscribes a live agent to a topic. Throws `UnknownAgentError` for an agent that is not live, and
   * `ConfigurationError` for an id that is not a non-empty string (a handle: pass its `id`).
   */
  subscribe(agentId: string, topic: string): void;
  /** Ends a subscription. Throws `UnknownAgentError` for an agent that is not live, and refuses a topic as `subscribe` does. */
  unsubscribe(agentId: string, topic: string): void;
  /**
   * Stops an agent and its descendants: each completes with its last answer (a resident agent's result), or fails
   * with `cancelled` if it has none. Like `cancel`, it leaves an ended agent's result as it is (stopping its descendants
   * still running), and throws `UnknownAgentError` for an unknown id and `ConfigurationError` for anything but a
   * non-empty string.
   */
  stop(id: string): void;

  // ── Simulation ──
  /** The time on the runtime's clock, in milliseconds (simulated time with a `SimulatedClock`). */
  now(): number;
  /**
   * Runs until nothing is left to do: with a simulated clock, moves time from timer to timer. Resolves when no agent
   * thinks or acts and no timer is set (resident agents may wait for messages); rejects with `DeadlockError`,
   * naming the agents, when agents still wait for messages or replies that nothing can bring.
   */
  runUntilIdle(options?: RunUntilIdleOptions): Promise<IdleReport>;
}
