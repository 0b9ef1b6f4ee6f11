// troupe: an actor-model runtime for LLM agents. This file is the whole public API.

// ── Runtime ─────────────────────────────────────────────────────────────────────────────────────────────
export { createRuntime } from './createRuntime.js';
export type {
  AgentHandle,
  AgentResult,
  ResultMetrics,
  Runtime,
  RuntimeOptions,
  SpawnOptions,
} from './createRuntime.js';
export { realClock, sleep } from './clock.js';
export type { Clock, TroupeClock } from './clock.js';

// ── Agents and tools ────────────────────────────────────────────────────────────────────────────────────
export { AGENT_NAME, defineAgent } from './catalog/defineAgent.js';
export type { Agent, AgentDefinition } from './catalog/defineAgent.js';
export { TOOL_NAME, defineTool } from './tools/defineTool.js';
export type { Tool, ToolContext, ToolDefinition, ToolKind, ToolOutput } from './tools/defineTool.js';
export { schedule } from './tools/schedule.js';
export type { PlannedCall, ToolPlan } from './tools/schedule.js';

// ── Models ──────────────────────────────────────────────────────────────────────────────────────────────
export { ChatMessage, ToolCall, Usage } from './models/Model.js';
export type { Model, ModelReply, ModelRequest, ToolSchema } from './models/Model.js';
export { OpenAIModel } from './models/OpenAIModel.js';
export type { OpenAIModelOptions } from './models/OpenAIModel.js';
export { ScriptedModel } from './models/ScriptedModel.js';
export type { ScriptFunction, ScriptStep, ScriptedModelOptions } from './models/ScriptedModel.js';
export { costOf, defaultPrices, findPrice } from './models/prices.js';
export type { ModelPrice, PriceTable } from './models/prices.js';

// ── Machines (for inspection, tests and custom runtimes) ────────────────────────────────────────────────
export { agentMachine } from './machines/agentMachine.js';
export type { AgentActorRef, AgentBudget, AgentEvent, AgentInput, AgentOutcome } from './machines/agentMachine.js';
export { supervisorMachine } from './machines/supervisorMachine.js';
export type { SpawnRequest, SupervisorEvent, SupervisorInput } from './machines/supervisorMachine.js';
export type { AgentRecord, AgentState } from './machines/agentTable.js';

// ── Events and metrics ──────────────────────────────────────────────────────────────────────────────────
export {
  AgentCompleted,
  AgentFailed,
  AgentSpawned,
  AgentStarted,
  FailureReason,
  ModelRequested,
  ModelResponded,
  ToolCalled,
  ToolResulted,
  TroupeEvent,
} from './events/events.js';
export type { TroupeEventOf, TroupeEventType } from './events/events.js';
export { foldMetrics } from './events/foldMetrics.js';
export { applyEvent, createMetrics, emptyFigures } from './events/metrics.js';
export type { AgentMetrics, Figures, MetricsSnapshot, TotalMetrics } from './events/metrics.js';

// ── Errors ──────────────────────────────────────────────────────────────────────────────────────────────
export {
  AbortedError,
  ConfigurationError,
  InvalidAgentError,
  InvalidToolError,
  ModelError,
  RuntimeClosedError,
  ScriptExhaustedError,
  ToolError,
  ToolTimeoutError,
  TroupeError,
  UnknownAgentError,
  errorMessage,
} from './errors.js';
export type { TroupeErrorCode } from './errors.js';

// ── Views ───────────────────────────────────────────────────────────────────────────────────────────────
export { formatEvent, shortId } from './views/formatEvent.js';
export { formatMetrics } from './views/formatMetrics.js';
