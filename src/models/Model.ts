import { z } from 'zod';
import type { Clock } from '../clock.js';

/** One tool call as the model sent it: `arguments` is the JSON text, unparsed. */
export const ToolCall = z.object({
  id: z.string().min(1),
  name: z.string(),
  arguments: z.string(),
});
/** One tool call as the model sent it: `arguments` is the JSON text, unparsed. */
export type ToolCall = z.infer<typeof ToolCall>;

/** One message of a conversation, in the OpenAI chat shape. */
export const ChatMessage = z.discriminatedUnion('role', [
  z.object({ role: z.literal('system'), content: z.string() }),
  z.object({ role: z.literal('user'), content: z.string() }),
  z.object({
    role: z.literal('assistant'),
    content: z.string(),
    toolCalls: z.array(ToolCall).optional(),
  }),
  z.object({
    role: z.literal('tool'),
    toolCallId: z.string(),
    content: z.string(),
    /** True when the tool call failed and `content` is the error the model should see. */
    isError: z.boolean().optional(),
    /** Data for programs and sessions (such as a sub-agent's id); never sent to the model. */
    metadata: z.record(z.string(), z.unknown()).optional(),
  }),
]);
/** One message of a conversation, in the OpenAI chat shape. */
export type ChatMessage = z.infer<typeof ChatMessage>;

/** Token counts of one model reply. */
export const Usage = z.object({
  inputTokens: z.number().int().nonnegative(),
  outputTokens: z.number().int().nonnegative(),
});
/** Token counts of one model reply. */
export type Usage = z.infer<typeof Usage>;

/** A tool as the model sees it: a name, a description and the JSON schema of its parameters. */
export interface ToolSchema {
  name: string;
  description: string;
  /** JSON schema of the arguments object. */
  parameters: Record<string, unknown>;
}

/** Everything a model needs for one turn. */
export interface ModelRequest {
  /** The id of the calling agent, such as `agent:researcher:V1StGXR8`. */
  agentId: string;
  /** The name of the calling agent's definition. */
  agentName: string;
  /** A model name the agent's definition asks for; a model may use it instead of its default. */
  model?: string;
  /** Sampling temperature the agent's definition asks for. */
  temperature?: number;
  /** The conversation so far, system prompt first. */
  messages: readonly ChatMessage[];
  /** The tools this agent may call. */
  tools: readonly ToolSchema[];
  /** Aborted when the agent is cancelled or the runtime shuts down. */
  signal: AbortSignal;
  /** The actor system's clock: a model that waits (latency, backoff) waits on it, so simulated time applies. */
  clock: Clock;
  /**
   * A number in [0, 1) from the agent's own seeded random stream (`createRuntime({ seed })`): a scripted model that
   * draws from it gives the same replies on every run with the same seed.
   */
  random?: () => number;
}

/** What a model answers for one turn. */
export interface ModelReply {
  /**
   * The text of the answer. It may be empty, missing or `null` when the model only calls tools (OpenAI models send
   * `content: null` beside tool calls); a reply with neither text nor tool calls is an empty answer, and fails the agent.
   */
  content?: string | null;
  /** Tool calls the model wants to make; none means the answer is final. */
  toolCalls?: ToolCall[];
  /** Token counts; missing counts are taken as zero. */
  usage?: Usage;
  /** The model that answered, used to look up its price. */
  model?: string;
}

/**
 * The one interface between troupe and a language model: one turn in, one assistant message and its usage out.
 * Implementations must honour `request.signal` and reject when it is aborted.
 */
export interface Model {
  /** A readable name, used in events and for the price table when a reply names no model. */
  readonly name: string;
  /** Answers one turn of the conversation. */
  complete(request: ModelRequest): Promise<ModelReply>;
  /**
   * Embeds texts as vectors, one per text in order, for ranking by meaning (what `memory_search` uses). Optional: a
   * model without it (or one whose call fails) leaves `memory_search` to its lexical ranking. Must honour `signal`.
   */
  embed?(texts: readonly string[], signal?: AbortSignal): Promise<number[][]>;
  /**
   * The name of the space `embed`'s vectors live in (such as `text-embedding-3-small`); vectors of different names are
   * never compared. Default: the model's `name`.
   */
  readonly embeddingModel?: string;
}
