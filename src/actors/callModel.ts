import { fromPromise } from 'xstate';
import { AbortedError, BudgetSpentError, ModelCallError, ModelError } from '../errors.js';
import type { ChatMessage, ModelReply, ToolCall } from '../models/Model.js';
import { costOf } from '../models/prices.js';
import type { AgentEnvironment } from './agentEnvironment.js';

/** What one model turn needs. */
export interface CallModelInput {
  agentId: string;
  agentName: string;
  /** The agent's depth: an agent at the delegation limit is not offered delegation tools. */
  depth: number;
  messages: readonly ChatMessage[];
}

/** One model turn's outcome: the reply (tool calls and usage filled in), the model name, cost and duration. */
export interface ModelTurn {
  content: string;
  toolCalls: ToolCall[];
  inputTokens: number;
  outputTokens: number;
  model: string;
  costUsd: number;
  durationMs: number;
}

/**
 * Makes the `callModel` actor logic: one model turn as a promise actor. It asks the agent's model, honours the
 * actor's AbortSignal (stopping the actor aborts the request), checks the reply's shape and prices it.
 */
export function createCallModel(environment: AgentEnvironment) {
  return fromPromise<ModelTurn, CallModelInput>(async ({ input, signal }) => {
    const agent = environment.resolve(input.agentName, input.agentId);
    const spent = environment.reserveTurn(input.agentId);
    if (spent !== undefined) throw new BudgetSpentError(spent); // the model is not called
    const { clock } = environment;
    const startedAt = clock.now();
    let reply: ModelReply;
    try {
      reply = await agent.model.complete({
        agentId: input.agentId,
        agentName: input.agentName,
        model: agent.modelName,
        temperature: agent.temperature,
        messages: input.messages,
        tools: environment.toolSchemas(agent, input.depth, input.agentId),
        signal,
        clock,
        random: () => environment.random(input.agentId).next(),
      });
    } catch (error) {
      if (signal.aborted) throw new AbortedError('The model call was aborted.');
      // Whatever the model threw (an Error, a string, undefined) fails the agent with a message that names the model,
      // the agent and the cause; the cause's code, side, status and retryable are kept (see errorInfo).
      const model = agent.modelName ?? agent.model.name;
      throw new ModelCallError({ model, agentName: input.agentName, agentId: input.agentId, attempt: 1, cause: error });
    }
    return readReply(reply, agent.model.name, environment, clock.now() - startedAt);
  });
}

function readReply(reply: ModelReply, modelName: string, environment: AgentEnvironment, durationMs: number): ModelTurn {
  // Missing or null content is no text: normal beside tool calls (OpenAI sends `content: null` with them); without
  // tool calls it is an empty answer, which fails the agent with `empty_answer` like `''` does.
  const content = reply === null || typeof reply !== 'object' ? undefined : (reply.content ?? '');
  if (typeof content !== 'string') {
    throw new ModelError(`Model "${modelName}" returned a reply without text content.`);
  }
  const toolCalls = reply.toolCalls ?? [];
  if (!Array.isArray(toolCalls)) throw new ModelError(`Model "${modelName}" returned tool calls that are not a list.`);
  const seen = new Set<string>();
  const calls: ToolCall[] = toolCalls.map((call, index) => {
    // A call without a usable id still deserves a result the model can match: give it one.
    let id = typeof call?.id === 'string' && call.id !== '' ? call.id : `call_${index + 1}`;
    while (seen.has(id)) id = `${id}_${index + 1}`;
    seen.add(id);
    return {
      id,
      name: typeof call?.name === 'string' ? call.name : '',
      arguments: typeof call?.arguments === 'string' ? call.arguments : JSON.stringify(call?.arguments ?? null),
    };
  });
  const inputTokens = count(reply.usage?.inputTokens);
  const outputTokens = count(reply.usage?.outputTokens);
  const model = reply.model ?? modelName;
  return {
    content,
    toolCalls: calls,
    inputTokens,
    outputTokens,
    model,
    costUsd: costOf(environment.prices, model, inputTokens, outputTokens),
    durationMs: Math.max(0, durationMs),
  };
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}
