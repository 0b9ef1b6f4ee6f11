import { ConfigurationError } from '../errors.js';
import type { Model, ToolSchema } from '../models/Model.js';
import type { PriceTable } from '../models/prices.js';
import type { Tool } from '../tools/defineTool.js';

/** An agent definition with its model and tools looked up: what the agent's actors need to run a turn. */
export interface ResolvedAgent {
  /** The agent's name. */
  readonly name: string;
  /** The system prompt. */
  readonly systemPrompt: string;
  /** The model that answers this agent. */
  readonly model: Model;
  /** A model name to ask the model for, if the definition names one. */
  readonly modelName?: string;
  /** Sampling temperature, if the definition sets one. */
  readonly temperature?: number;
  /** The tools this agent may call, by name. */
  readonly tools: ReadonlyMap<string, Tool>;
  /** The same tools as the model sees them. */
  readonly toolSchemas: readonly ToolSchema[];
  /** At most this many tool calls of one turn run at once. */
  readonly maxToolConcurrency: number;
}

/**
 * What the agent's actors (`callModel`, `runTools`) are given by the runtime: the agents by name and the
 * prices. It stays outside the agent's input, which is plain JSON.
 */
export interface AgentEnvironment {
  /** Looks up an agent by name; throws for an unknown name. */
  resolve(name: string): ResolvedAgent;
  /** The price table for costs. */
  readonly prices: PriceTable;
}

/** The environment of an agent machine that was not given one: every turn fails with a clear error. */
export const missingEnvironment: AgentEnvironment = {
  resolve() {
    throw new ConfigurationError(
      'agentMachine has no model or tools: run agents through createRuntime(), or provide the callModel and ' +
        'runTools actors with agentMachine.provide({ actors }).',
    );
  },
  prices: {},
};
