import { fromPromise } from 'xstate';
import { STOPPED, Stop, whenAborted } from '../abort.js';
import { sleep } from '../clock.js';
import { AbortedError, BudgetSpentError, ModelCallError, ModelError } from '../errors.js';
import { errorInfo } from '../failure.js';
import { stampEvent } from '../machines/agentContext.js';
import type { ChatMessage, ModelReply, ModelRequest, ToolCall } from '../models/Model.js';
import { findPrice } from '../models/prices.js';
import { DEFAULT_RETRY, isRetryable, retryDelay, type RetryPolicy } from '../retry.js';
import type { AgentEnvironment, ResolvedAgent } from './agentEnvironment.js';

/** What one model turn needs. */
export interface CallModelInput {
  agentId: string;
  agentName: string;
  /** The agent's depth: an agent at the delegation limit is not offered delegation tools. */
  depth: number;
  messages: readonly ChatMessage[];
  /** The header of the agent's events (its run, its parent and the parent's tool call), for `model.retry`. */
  header: { runId: string; id: string; parentId: string | null; toolCallId: string | null };
  /** How a failed call is tried again (default {@link DEFAULT_RETRY}). */
  retry?: RetryPolicy;
}

/** One model turn's outcome: the reply (tool calls and usage filled in), the model name, cost and duration. */
export interface ModelTurn {
  content: string;
  toolCalls: ToolCall[];
  inputTokens: number;
  outputTokens: number;
  model: string;
  costUsd: number;
  /** From the first try to the reply, on the runtime's clock: retries and their waits included. */
  durationMs: number;
  /**
   * The model's name when the reply counted tokens and the price table has no price for it (under the name the server
   * answered with, nor the name it was asked for): their cost counts as 0, so a `maxCostUsd` budget cannot be kept.
   * Undefined when priced, and for a reply without usage (it costs nothing whatever the price).
   */
  unpricedModel?: string;
}

/**
 * Makes the `callModel` actor logic: one model turn as a promise actor. It asks the agent's model, honours the
 * actor's AbortSignal (stopping the actor aborts the request, and a wait between tries), checks the reply's shape and
 * prices it.
 *
 * A call that fails with a retryable `ModelError` is tried again, up to `retry.attempts` tries in all, after a wait on
 * the runtime's clock (see `retryDelay`: full jitter from the agent's seeded random stream, or the server's
 * `retry-after`, at most `retry.maxMs`); each retry is announced (`model.retry`) and tells the agent (`MODEL.RETRY`) so
 * its idle timer starts over. The turn was counted against the budgets once (`reserveTurn`), before the first try: a
 * retry is the same turn, and a failed try spent no tokens. What fails for good is a `ModelCallError` with the last
 * try's number and cause.
 */
export function createCallModel(environment: AgentEnvironment) {
  return fromPromise<ModelTurn, CallModelInput>(({ input, signal, system }) =>
    // The agent (an actor of the same system, under its id) hears of each retry: its idle timer starts over.
    callModel(environment, input, { signal }, () => system.get(input.agentId)?.send({ type: 'MODEL.RETRY' })),
  );
}

/**
 * One model turn (see {@link createCallModel}): what the agent's worker runs for `MODEL.CALL`. `retrying` is told of
 * each retry before its wait. The call's AbortSignal is read from `stop` only when something needs it (the model's
 * request, a retry's wait, an MCP server's start): a `Stop` makes none for a model that never looks.
 *
 * Promise chains rather than async functions: every agent waiting for its model kept two suspended (about 0.6 KB alive
 * each while it waited, and their awaits' reactions made per call). It never throws: what fails is a rejection.
 */
export function callModel(
  environment: AgentEnvironment,
  input: CallModelInput,
  stop: { readonly signal: AbortSignal },
  retrying: () => void,
): Promise<ModelTurn> {
  try {
    const agent = environment.resolve(input.agentName, input.agentId);
    const starting = environment.toolsReady?.(agent);
    // An MCP server's first start, at most its timeoutMs.
    if (starting) return Promise.race([starting, whenAborted(stop.signal)]).then(() => askModel(environment, agent, input, stop, retrying));
    return askModel(environment, agent, input, stop, retrying);
  } catch (error) {
    return Promise.reject(error);
  }
}

/** The turn once the agent's tools are ready: counted against the budgets, then asked of the model, its reply read. */
function askModel(
  environment: AgentEnvironment,
  agent: ResolvedAgent,
  input: CallModelInput,
  stop: { readonly signal: AbortSignal },
  retrying: () => void,
): Promise<ModelTurn> {
  const spent = environment.reserveTurn(input.agentId);
  if (spent !== undefined) throw new BudgetSpentError(spent.owner, spent.limit); // the model is not called
  const { clock } = environment;
  const startedAt = clock.now();
  const request = new TurnRequest(environment, agent, input, stop) as unknown as ModelRequest;
  return completeWithRetries({ environment, agent, request, input, retrying, startedAt }, 1);
}

/**
 * One turn's {@link ModelRequest}. Its `signal` is made on first read (most models never read it), by a getter that is
 * the instance's own and enumerable, as an object literal's would be (a model may pass on a copy, `{ ...request }`),
 * but the same function for every request: an object literal with a getter is made in dictionary mode, about 1.4 KB a
 * turn, where this is an ordinary object.
 */
class TurnRequest {
  readonly agentId: string;
  readonly agentName: string;
  readonly model: string | undefined;
  readonly temperature: number | undefined;
  readonly messages: readonly ChatMessage[];
  readonly tools: ModelRequest['tools'];
  // Declared only: made in the constructor, in order, after the fields above.
  declare readonly signal: AbortSignal;
  declare readonly clock: AgentEnvironment['clock'];
  declare readonly random: () => number;
  readonly #stop: { readonly signal: AbortSignal };

  static readonly #signal: PropertyDescriptor = {
    get(this: TurnRequest) {
      return this.#stop.signal;
    },
    enumerable: true,
    configurable: true,
  };

  /** The call's stop as a promise (see `whenRequestStopped`): a scripted model's latency waits on it without a signal. */
  get [STOPPED](): Promise<never> {
    const stop = this.#stop;
    return stop instanceof Stop ? stop.promise : whenAborted(stop.signal);
  }

  constructor(environment: AgentEnvironment, agent: ResolvedAgent, input: CallModelInput, stop: { readonly signal: AbortSignal }) {
    this.#stop = stop;
    // In the order an object literal of them had: recorded requests keep their shape.
    this.agentId = input.agentId;
    this.agentName = input.agentName;
    this.model = agent.modelName;
    this.temperature = agent.temperature;
    this.messages = input.messages;
    this.tools = environment.toolSchemas(agent, input.depth, input.agentId);
    Object.defineProperty(this, 'signal', TurnRequest.#signal);
    (this as { clock: AgentEnvironment['clock'] }).clock = environment.clock;
    (this as { random: () => number }).random = () => environment.random(input.agentId).next();
  }
}

/** What each try of one model turn needs. */
interface TurnTries {
  environment: AgentEnvironment;
  agent: ResolvedAgent;
  request: ModelRequest;
  input: CallModelInput;
  retrying: () => void;
  /** When the first try began: the turn's duration runs from it. */
  startedAt: number;
}

/**
 * Asks the model, trying again after a wait while the failure is retryable and tries are left; the answering try's
 * reply read. Read and retry hang on the one promise of the model's reply (a `catch`, then a `then` after it, made two).
 */
function completeWithRetries(turn: TurnTries, attempt: number): Promise<ModelTurn> {
  let reply: Promise<ModelReply>;
  try {
    reply = Promise.resolve(turn.agent.model.complete(turn.request));
  } catch (error) {
    reply = Promise.reject(error); // a model that throws rather than rejects fails (or is retried) the same way
  }
  // The answering try's reply is read (a reply it refuses is a failure, never tried again), for the name asked for: the
  // definition's (`model: 'my-model'`, sent as `request.model`), else the model's own.
  return reply.then(
    (answer) => readReply(answer, turn.agent.modelName ?? turn.agent.model.name, turn.environment, turn.environment.clock.now() - turn.startedAt),
    (error: unknown) => retryAfter(turn, attempt, error),
  );
}

/** A try failed with `error`: the turn fails, or the next try comes after its wait. */
function retryAfter(turn: TurnTries, attempt: number, error: unknown): Promise<ModelTurn> {
  const { environment, agent, request, input } = turn;
  if (request.signal.aborted) throw new AbortedError('The model call was aborted.');
  // Whatever the model threw (an Error, a string, undefined) fails the agent with a message that names the model, the
  // agent and the cause; the cause's code, side, status and retryable are kept (see errorInfo).
  const model = agent.modelName ?? agent.model.name;
  const failure = new ModelCallError({ model, agentName: input.agentName, agentId: input.agentId, attempt, cause: error });
  const policy = input.retry ?? DEFAULT_RETRY;
  if (attempt >= policy.attempts || !isRetryable(error)) throw failure;
  const delayMs = retryDelay(policy, attempt, () => environment.random(input.agentId).next(), error.retryAfterMs);
  const { clock } = environment;
  environment.announce(stampEvent(input.header, clock.now(), { type: 'model.retry', attempt, delayMs, error: errorInfo(failure, 'model') }));
  turn.retrying();
  return sleep(clock, delayMs, request.signal).then(
    () => completeWithRetries(turn, attempt + 1),
    () => {
      throw new AbortedError('The model call was aborted.');
    },
  );
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
  // Ids already given, kept only when there are two calls or more (most replies have none or one).
  const seen = toolCalls.length > 1 ? new Set<string>() : undefined;
  const calls: ToolCall[] = toolCalls.map((call, index) => {
    // A call without a usable id still deserves a result the model can match: give it one.
    let id = typeof call?.id === 'string' && call.id !== '' ? call.id : `call_${index + 1}`;
    if (seen !== undefined) {
      while (seen.has(id)) id = `${id}_${index + 1}`;
      seen.add(id);
    }
    return {
      id,
      name: typeof call?.name === 'string' ? call.name : '',
      arguments: typeof call?.arguments === 'string' ? call.arguments : JSON.stringify(call?.arguments ?? null),
    };
  });
  const inputTokens = count(reply.usage?.inputTokens);
  const outputTokens = count(reply.usage?.outputTokens);
  const model = reply.model || modelName; // a server that names no model (an empty name) answered as the one asked for
  // Priced as the server names the model that answered (`gpt-4o-2024-08-06`), else as it was asked for: a server may
  // answer with a name of its own (`my-model:latest`, a deployment's name) that the table does not know.
  // One look-up per name (a turn is a hot path), as `costOf` would price it.
  const price = findPrice(environment.prices, model) ?? (model === modelName ? undefined : findPrice(environment.prices, modelName));
  // Set on every turn (undefined when priced), so every turn has one shape. A reply without usage costs nothing
  // whatever its price (a budget does not see it, as README says), so a missing price changes nothing for it.
  const unpricedModel = price === undefined && inputTokens + outputTokens > 0 ? modelName : undefined;
  return {
    content,
    toolCalls: calls,
    inputTokens,
    outputTokens,
    model,
    costUsd: price === undefined ? 0 : (inputTokens * price.input + outputTokens * price.output) / 1_000_000,
    durationMs: Math.max(0, durationMs),
    unpricedModel,
  };
}

function count(value: number | undefined): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}
