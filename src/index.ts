// troupe: an actor-model runtime for LLM agents. This file is the whole public API.
// The declarations use Node's types (`node:util`, `AbortSignal`): the reference keeps them found in a project whose
// tsconfig lists no `types` (TypeScript 6 and later read no @types package unless it does; `tsc --init` writes `[]`).
/// <reference types="node" preserve="true" />

// ── Runtime ─────────────────────────────────────────────────────────────────────────────────────────────
export { createRuntime } from './createRuntime.js';
export type {
  AgentHandle,
  AgentResult,
  GroupHandle,
  GroupOptions,
  ResultMetrics,
  Runtime,
  RuntimeOptions,
  SpawnOptions,
} from './createRuntime.js';
export { realClock, realClockFromNow, sleep } from './clock.js';
export { DEFAULT_RETRY, retryDelay } from './retry.js';
export type { RetryOptions, RetryPolicy } from './retry.js';
export { DEFAULT_RESTART_INTENSITY, RESTARTABLE_REASONS } from './restart.js';
export type { GroupRestart, RestartIntensity, RestartLimit, RestartMode } from './restart.js';
export type { PoolOptions, PoolStats } from './runtime/AgentPool.js';
export type { PendingApproval } from './runtime/Approvals.js';

// ── Patterns: composing agents without a lead model ─────────────────────────────────────────────────────
export { sequence } from './patterns/sequence.js';
export { parallel } from './patterns/parallel.js';
export type { ParallelOptions } from './patterns/parallel.js';
export { fanIn } from './patterns/fanIn.js';
export type { FanInCombine } from './patterns/fanIn.js';
export { pipeline } from './patterns/pipeline.js';
export { race } from './patterns/race.js';
export type { RaceOptions } from './patterns/race.js';
export { step } from './patterns/Pattern.js';
export type { AgentStep, OnFailure, Pattern, PatternOptions, Step, TaskFrom } from './patterns/Pattern.js';

// ── Messaging and simulation ────────────────────────────────────────────────────────────────────────────
export { Message, RUNTIME_ADDRESS, TOPIC_PREFIX, TopicName, renderMessage } from './messaging/Message.js';
export { Inbox } from './messaging/Inbox.js';
export type { InboxPush, Overflow } from './messaging/Inbox.js';
export { PostOffice } from './messaging/PostOffice.js';
export type { DeadLetterReason, Delivery, InboxOptions, RouteReport, WaitAnswer, WaitSpec } from './messaging/PostOffice.js';
export { Blackboard } from './messaging/Blackboard.js';
export type { BlackboardChange } from './messaging/Blackboard.js';
export type {
  MessageDecision,
  MessagePolicy,
  MessageReceipt,
  MessageRequest,
  Messaging,
  SendOptions,
  WaitOptions,
} from './messaging/Messaging.js';
export {
  blackboardRead,
  blackboardWrite,
  finish,
  messagingTools,
  publish,
  reply,
  sendMessage,
  stopAgent,
  subscribe,
  waitForMessages,
} from './tools/messagingTools.js';
export { finishSignal, isToolSignal, waitSignal } from './tools/toolSignal.js';
export type { ToolSignal } from './tools/toolSignal.js';
export { RandomSource } from './random.js';
export { RuntimeClock } from './runtime/RuntimeClock.js';
export type { SettableClock } from './runtime/RuntimeClock.js';
export type { IdleReport, RunUntilIdleOptions } from './runtime/Simulation.js';
export { RESIDENT_MAX_TURNS } from './runtime/Launcher.js';
export { recordEvents } from './views/recordEvents.js';
export type { EventRecording, RecordingHeader } from './views/recordEvents.js';
export { readRecording } from './views/readRecording.js';
export type { ReadRecordingOptions, Recording } from './views/readRecording.js';
export { traceEvents } from './views/traceEvents.js';

// ── Delegation ──────────────────────────────────────────────────────────────────────────────────────────
export { assignTask } from './tools/assignTask.js';
export { taskOutput, DEFAULT_TASK_OUTPUT_TIMEOUT_MS } from './tools/taskOutput.js';
export { spawnAgent } from './tools/spawnAgent.js';
export { parallelTasks } from './tools/parallelTasks.js';
export type { TaskReport } from './tools/parallelTasks.js';
export { BUILTIN_TOOLS, builtinTools, DELEGATION_TOOLS } from './tools/builtinTools.js';
export { sharedContext } from './runtime/sharedContext.js';
export type {
  AgentSummary,
  DelegateRequest,
  Delegation,
  DelegationDecision,
  DelegationPolicy,
  DelegationRequest,
  DelegationResult,
  SpawnAgentRequest,
  TaskOutput,
  TaskOutputOptions,
  TaskResult,
  TaskRunning,
} from './tools/Delegation.js';
export { categoryOf, TOOL_CATEGORIES } from './tools/toolApproval.js';
export type { PersonAnswer, ToolApprovalRequest, ToolCategory, ToolDecision, ToolPolicy } from './tools/toolApproval.js';
export type { Clock, TroupeClock } from './clock.js';

// ── Agents and tools ────────────────────────────────────────────────────────────────────────────────────
export { AGENT_NAME, defineAgent } from './catalog/defineAgent.js';
export type { Agent, AgentDefinition } from './catalog/defineAgent.js';
export { AgentFiles } from './catalog/AgentFiles.js';
export type { AgentScan, LoadedAgent } from './catalog/AgentFiles.js';
export { AgentFrontmatter, parseAgentFile } from './catalog/parseAgentFile.js';
export type { AgentFileWarning } from './catalog/adaptAgentFile.js';

// ── File tools ──────────────────────────────────────────────────────────────────────────────────────────
export { CLAUDE_CODE_TOOLS, fileTools } from './tools/files/fileTools.js';
export { Workspace } from './tools/files/Workspace.js';
export type { WorkspacePath } from './tools/files/Workspace.js';
export { FILE_LIMITS } from './tools/files/fileLimits.js';
export type { FileLimits } from './tools/files/fileLimits.js';

// ── Memory and sessions ─────────────────────────────────────────────────────────────────────────────────
export type { MemoryPort } from './memory/MemoryPort.js';
export { InMemoryMemory } from './memory/InMemoryMemory.js';
export type { InMemoryMemoryOptions } from './memory/InMemoryMemory.js';
export { JsonFileMemory } from './memory/JsonFileMemory.js';
export type { JsonFileMemoryOptions } from './memory/JsonFileMemory.js';
export type { FileLockOptions } from './memory/fileLock.js';
export { SESSIONS_KEY, SessionRecord, SessionStore } from './memory/SessionStore.js';
export type { RecoverOptions, SessionManager } from './memory/SessionStore.js';
export { RECORDING_SCHEMA_VERSION, SESSION_SCHEMA_VERSION, STORE_SCHEMA_VERSION } from './schemaVersion.js';
export { TOOL_NAME, defineTool } from './tools/defineTool.js';
export type { PlanLookup, Tool, ToolAudience, ToolContext, ToolDefinition, ToolKind, ToolOutput } from './tools/defineTool.js';
export { isToolReply, toolReply } from './tools/toolReply.js';
export type { ToolReply } from './tools/toolReply.js';
export { schedule, targetsOverlap } from './tools/schedule.js';
export type { PlannedCall, ToolPlan } from './tools/schedule.js';

// ── Todo lists and long-term notes ──────────────────────────────────────────────────────────────────────
export { formatTodos, TodoList, todoRead, todosOf, todoTools, todoWrite } from './tools/todoTools.js';
export { TodoItem, TodoUpdated } from './events/events.js';
export { memorySave, memorySearch, memoryTools } from './tools/memoryTools.js';
export { Note, NOTES_KEY, NoteScope, NoteStore } from './memory/NoteStore.js';
export type { AgentNotes, NoteHit, NoteReader, NoteSearch } from './memory/NoteStore.js';
export { NOTE_SCHEMA_VERSION } from './schemaVersion.js';
export type { ToolAnnouncement } from './tools/defineTool.js';
// ── MCP servers as tool sources ─────────────────────────────────────────────────────────────────────────
export {
  DEFAULT_MCP_CALL_TIMEOUT_MS,
  DEFAULT_MCP_START_TIMEOUT_MS,
  MCP_SERVER_NAME,
  McpHttpServerConfig,
  McpServerConfig,
  McpServerConfigs,
  McpServerEntries,
  McpStdioServerConfig,
} from './tools/mcp/McpServerConfig.js';
export type { McpServerState, McpServerStatus } from './tools/mcp/McpConnection.js';

// ── Models ──────────────────────────────────────────────────────────────────────────────────────────────
export { ChatMessage, ToolCall, Usage } from './models/Model.js';
export type { Model, ModelReply, ModelRequest, ToolSchema } from './models/Model.js';
export { DEFAULT_EMBEDDING_MODEL, OpenAIModel } from './models/OpenAIModel.js';
export type { OpenAIModelOptions } from './models/OpenAIModel.js';
// Kept for one release: ScriptedModel and its types are shipped in `troupe/testing`, with the steps of a script.
export {
  /** @deprecated Import `ScriptedModel` from `troupe/testing`; this re-export from `troupe` goes in the next release. */
  ScriptedModel,
} from './models/ScriptedModel.js';
export type {
  /** @deprecated Import it from `troupe/testing`; this re-export from `troupe` goes in the next release. */
  ScriptFunction,
  /** @deprecated Import it from `troupe/testing`; this re-export from `troupe` goes in the next release. */
  ScriptStep,
  /** @deprecated Import it from `troupe/testing`; this re-export from `troupe` goes in the next release. */
  ScriptedModelOptions,
} from './models/ScriptedModel.js';
export { costOf, defaultPrices, findPrice } from './models/prices.js';
export type { ModelPrice, PriceTable } from './models/prices.js';

// ── Machines (for inspection, tests and custom runtimes) ────────────────────────────────────────────────
export { agentMachine } from './machines/agentMachine.js';
export { clockedAgentActions, clockedGroupAnnounce } from './machines/agentClock.js';
export type {
  AgentActorRef,
  AgentBudget,
  AgentEvent,
  AgentInput,
  AgentOutcome,
  ApprovalHold,
} from './machines/agentMachine.js';
export { supervisorMachine } from './machines/supervisorMachine.js';
export type { GroupSpawnRequest, SpawnRequest, SupervisorEvent, SupervisorInput } from './machines/supervisorMachine.js';
export { groupMachine } from './machines/groupMachine.js';
export type { GroupActorRef, GroupEvent, GroupInput } from './machines/groupMachine.js';
export type { AgentRecord, AgentState } from './machines/agentTable.js';

// ── Inspection: the Stately inspector ───────────────────────────────────────────────────────────────────
export { createStatelyInspector, STATELY_INSPECTOR_URL } from './inspect/statelyInspector.js';
export type { StatelyInspector, StatelyInspectorOptions } from './inspect/statelyInspector.js';
export { StatelyBridge, STATELY_PROTOCOL_VERSION } from './inspect/StatelyBridge.js';
export type { StatelyListener } from './inspect/StatelyBridge.js';

// ── Inspection: troupe's web inspector ──────────────────────────────────────────────────────────────────
export { createWebInspector, openWebReplay } from './inspect/webInspector.js';
export type { WebInspector, WebInspectorOptions, WebReplay } from './inspect/webInspector.js';
export { machineGraph } from './inspect/machineGraph.js';
export type { GraphState, GraphTransition, MachineGraph } from './inspect/machineGraph.js';


// ── Events and metrics ──────────────────────────────────────────────────────────────────────────────────
export {
  AgentCompleted,
  AgentFailed,
  AgentSpawned,
  AgentStarted,
  AgentRestarted,
  AgentEscalated,
  ApprovalDenied,
  ApprovalGranted,
  ApprovalRequested,
  AgentWaiting,
  BlackboardChanged,
  MessageDeadLetter,
  MessageDelivered,
  MessageDropped,
  MessageSent,
  FailureReason,
  Risk,
  ModelRequested,
  ModelResponded,
  ModelRetried,
  ToolCalled,
  ToolDenied,
  ToolPlanned,
  ToolResulted,
  ToolWait,
  ToolWaitCause,
  ToolWaitEnded,
  WaitOutcome,
  TroupeEvent,
} from './events/events.js';
export type { TroupeEventOf, TroupeEventType } from './events/events.js';
export { foldMetrics } from './events/foldMetrics.js';
export { applyEvent, createMetrics, emptyFigures } from './events/metrics.js';
export type { AgentMetrics, Figures, MetricsSnapshot, TotalMetrics } from './events/metrics.js';

// ── Errors ──────────────────────────────────────────────────────────────────────────────────────────────
export {
  AbortedError,
  AgentFileError,
  ConfigurationError,
  CorruptRecordingError,
  CorruptStoreError,
  DeadlockError,
  DelegationError,
  InboxFullError,
  MessageRefusedError,
  ReplyTimeoutError,
  TimeLimitError,
  UndeliverableError,
  InvalidAgentError,
  InvalidScriptStepError,
  InvalidToolError,
  /** A model call that failed, wrapping what the model threw: it names the model, the agent and the try. */
  ModelCallError,
  ModelError,
  RuntimeClosedError,
  ScriptExhaustedError,
  StoreLockedError,
  StoreLockLostError,
  ToolError,
  ToolTimeoutError,
  TroupeError,
  UnknownAgentError,
  UnknownRequestError,
  UnsupportedSchemaError,
  UnusedStepsError,
  WorkspaceEscapeError,
  errorMessage,
  TROUPE_ERROR_CODES,
} from './errors.js';
export type {
  DelegationRefusal,
  Fault,
  ModelCallFailure,
  StoredKind,
  TroupeErrorCode,
  UndeliverableReason,
  WorkspaceEscape,
} from './errors.js';
export { ENDING_CODES, ErrorInfo, ending, errorInfo } from './failure.js';
export type { EndingCode } from './failure.js';

// ── Secrets ─────────────────────────────────────────────────────────────────────────────────────────────
export { MIN_SECRET_LENGTH, REDACTED, Redactor } from './redaction.js';
export type { RedactorOptions } from './redaction.js';
// ── The troupe command ──────────────────────────────────────────────────────────────────────────────────
export type { Scenario, ScenarioContext, ScenarioDefinition, ScenarioRun, ScenarioRuntimeOptions } from './cli/Scenario.js';

// ── Views ───────────────────────────────────────────────────────────────────────────────────────────────
export { formatEvent, shortId } from './views/formatEvent.js';
export { formatMetrics } from './views/formatMetrics.js';
export { formatTimeline } from './views/formatTimeline.js';
export type { TimelineOptions } from './views/formatTimeline.js';
export { summarizeTrace } from './views/summarizeTrace.js';
