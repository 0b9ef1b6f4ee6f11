import { realClock, type TroupeClock } from '../clock.js';
import { ConfigurationError } from '../errors.js';
import type { Agent } from '../catalog/defineAgent.js';
import type { ChatMessage, Model, ToolSchema } from '../models/Model.js';
import type { PriceTable } from '../models/prices.js';
import type { Blackboard } from '../messaging/Blackboard.js';
import type { NoteStore } from '../memory/NoteStore.js';
import type { Message } from '../messaging/Message.js';
import type { Messaging } from '../messaging/Messaging.js';
import type { Risk, TroupeEvent } from '../events/events.js';
import type { RandomSource } from '../random.js';
import type { Delegation } from '../tools/Delegation.js';
import type { SpentBudget } from '../machines/agentBudget.js';
import type { Tool } from '../tools/defineTool.js';
import type { McpSelection } from '../tools/mcp/mcpSelection.js';
import type { PlannedCall } from '../tools/schedule.js';
import type { PersonAnswer, ToolCategory, ToolPolicy } from '../tools/toolApproval.js';

/** An agent definition with its model and tools looked up: what the agent's actors need to run a turn. */
export interface ResolvedAgent {
  /** The agent's name. */
  readonly name: string;
  /** The definition it was made from. */
  readonly definition: Agent;
  /** The model that answers this agent. */
  readonly model: Model;
  /** A model name to ask the model for, if the definition names one. */
  readonly modelName?: string;
  /** Sampling temperature, if the definition sets one. */
  readonly temperature?: number;
  /** The tools this agent lists, by name (delegation tools included; the depth limit may still refuse them). */
  readonly tools: ReadonlyMap<string, Tool>;
  /**
   * The MCP servers' tools it may call (`files:*`, `files:read_file`, and its own `mcpServers`), known once their
   * servers have started: see `toolsReady`.
   */
  readonly mcp?: McpSelection;
  /** At most this many tool calls of one turn run at once. */
  readonly maxToolConcurrency: number;
}

/** Why a tool call may not run, before it runs. */
export interface ToolRefusal {
  reason: 'not_allowed' | 'unknown' | 'depth_limit' | 'denied';
  error: string;
}

/** A tool call that waits for a person, as `askPerson` is given it. */
export interface PersonAsk {
  /** The header of the calling agent's events. */
  header: { runId: string; id: string; parentId: string | null; toolCallId: string | null };
  agentName: string;
  tool: string;
  category: ToolCategory;
  callId: string;
  /** The call as a person reads it: the tool's name and its arguments. */
  task: string;
  risk: Risk;
  reason?: string;
}

/** The agent on whose behalf a tool runs. */
export interface Caller {
  agentId: string;
  agentName: string;
  depth: number;
  toolCallId: string;
  /** The caller's conversation, up to the assistant message that made this call. */
  messages: readonly ChatMessage[];
  /** Aborted when the caller stops. */
  signal: AbortSignal;
  /**
   * The caller's stop, read without making a signal of its own for the call (a tool call's signal is made on first
   * read): whether it has stopped, and a promise that rejects when it does. Absent where `signal` is all there is.
   * `withAgent` is true when it can stop only as the calling agent ends (a tool call without a time limit): the call's
   * batch then ends at once and the runtime ends the agent's waits, so a wait need not race it.
   */
  stop?: { readonly aborted: boolean; readonly promise: Promise<never>; readonly withAgent?: boolean };
  /**
   * Sends a message out through the calling agent's actor (which passes it to the supervisor), so an inspector sees it
   * leave the sender; absent where a caller has no actor.
   */
  relay?: (message: Message) => boolean;
}

/**
 * What the agent's actors (`callModel`, `runTools`) are given by the runtime: agents and tools by name, what each
 * agent may call at its depth, delegation, and prices. It stays outside the agent's input, which is plain JSON.
 */
export interface AgentEnvironment {
  /** The definition agent `agentId` runs with (looked up by name for an agent the runtime does not know). */
  resolve(name: string, agentId: string): ResolvedAgent;
  /**
   * Starts what an agent's tools need before its model turn (the MCP servers it uses, on their first use) and
   * resolves once they are ready or have failed (it never rejects); undefined when nothing needs starting.
   */
  toolsReady?(agent: ResolvedAgent): Promise<void> | undefined;
  /** The tools an agent (of this id, at this depth) may call, as the model sees them. */
  toolSchemas(agent: ResolvedAgent, depth: number, agentId: string): readonly ToolSchema[];
  /** The tool a call names, or why this agent may not call it. Enforced where tools run. */
  toolFor(agent: ResolvedAgent, depth: number, toolName: string): Tool | ToolRefusal;
  /** How the planner should see one valid call (its kind and targets). */
  plan(tool: Tool, args: unknown): PlannedCall;
  /**
   * What a tool may do with other agents on the caller's behalf. Asked for as each tool call starts (its context holds
   * it), so it should be cheap and do its work only when a method is called.
   */
  delegation(caller: Caller): Delegation;
  /** What a tool may do with messages on the caller's behalf; asked for as each call starts, as `delegation` is. */
  messaging(caller: Caller): Messaging;
  /** The run's shared key-value store. */
  readonly blackboard: Blackboard;
  /** The long-term notes in the runtime's store (`memory_save`, `memory_search`). */
  readonly notes: NoteStore;
  /** The seeded random source of an agent (its own stream, drawn from the runtime's seed). */
  random(agentId: string): RandomSource;
  /** The price table for costs. */
  readonly prices: PriceTable;
  /** The runtime's clock: model and tool durations, tool timeouts and event times are read and set on it. */
  readonly clock: TroupeClock;
  /**
   * Runs a `realTime` tool's call: on a simulated clock, time stands still until it is given back, in the order such
   * calls started (see `RuntimeClock.inRealTime`). Without it the call just runs.
   */
  inRealTime?<T>(work: () => T | Promise<T>): Promise<T>;
  /** Puts an event into the runtime's stream (what `runTools` announces of each tool call). */
  announce(event: TroupeEvent): void;
  /**
   * True when an event announced now would reach someone outside the runtime (see `EventInput.watched`): an event
   * only people read (`tool.plan`) is made only then.
   */
  watched(): boolean;
  /** The runtime's `toolPolicy`, when it has one. */
  readonly toolPolicy?: ToolPolicy;
  /**
   * Asks a person about a tool call (`runtime.approve` / `runtime.deny`): announces `approval.requested` and resolves
   * with the answer and the request's id; when `stop` rejects first, the request is withdrawn and this rejects too.
   */
  askPerson?(ask: PersonAsk, stop: Promise<never>): Promise<PersonAnswer & { requestId: string }>;
  /** A call ended without waiting for messages: a wait it registered anyway is dropped (it would never be answered). */
  dropWait(agentId: string, callId: string): void;
  /**
   * One of an agent's tool calls ended while others of its batch still run: that is progress, so the agent's idle
   * timer starts over (`idleTimeoutMs` is the longest time without any).
   */
  progressed?(agentId: string): void;
  /**
   * Asks to start a model turn: counts it under every budget above the agent, or refuses it with the agent (this one,
   * an ancestor, or its run's top agent) whose budget is spent and the limit used up.
   */
  reserveTurn(agentId: string): SpentBudget | undefined;
}

const notProvided = (): never => {
  throw new ConfigurationError(
    'agentMachine has no model or tools: run agents through createRuntime(), or provide its worker with ' +
      'agentMachine.provide({ actors: { worker: agentWorker({ callModel, runTools }) } }).',
  );
};

/** The environment of an agent machine that was not given one: every turn fails with a clear error. */
export const missingEnvironment: AgentEnvironment = {
  resolve: notProvided,
  toolSchemas: notProvided,
  toolFor: notProvided,
  plan: notProvided,
  delegation: notProvided,
  messaging: notProvided,
  get blackboard(): never {
    return notProvided();
  },
  get notes(): never {
    return notProvided();
  },
  random: notProvided,
  announce: () => {},
  watched: () => false,
  dropWait: () => {},
  reserveTurn: () => undefined,
  prices: {},
  clock: realClock,
};
