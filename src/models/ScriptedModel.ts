import { whenRequestStopped } from '../abort.js';
import { sleepUnlessStopped } from '../clock.js';
import { ConfigurationError, InvalidScriptStepError, ScriptExhaustedError, UnusedStepsError } from '../errors.js';
import { isPromiseLike } from '../promiseLike.js';
import { RandomSource } from '../random.js';
import { describeUnknownKeys, unknownKeys } from '../unknownKeys.js';
import type { Model, ModelReply, ModelRequest } from './Model.js';

/**
 * The request a script's function is given: a {@link ModelRequest} whose `random` is always there (the agent's seeded
 * stream, from the runtime; a request made by hand gets a stream of the model's own, seeded 0), so a script draws
 * with `request.random()`.
 */
export type ScriptRequest = ModelRequest & { random: () => number };

/** A reply a script can give: a full reply, a plain answer, an error to throw, or a function of the request. */
export type ScriptStep =
  | ModelReply
  | string
  | Error
  | ((request: ScriptRequest) => ModelReply | string | Promise<ModelReply | string>);

/** A function that answers every request. */
export type ScriptFunction = (request: ScriptRequest, callIndex: number) => ModelReply | string | Promise<ModelReply | string>;

/** Options of {@link ScriptedModel}. */
export interface ScriptedModelOptions {
  /** A readable name (default `scripted`). */
  name?: string;
  /**
   * The model name replies report, for the price table (default: none, so a reply is priced under the model its agent's
   * definition names, if any: replies of an agent without a `model` of its own cost nothing).
   */
  model?: string;
  /** Time each reply takes, on the actor system's clock: a number, or a function of the request and call index. */
  latencyMs?: number | ((request: ScriptRequest, callIndex: number) => number);
  /** Keep every request in `calls` (default true; turn off for very large simulations). */
  record?: boolean;
}

/** Every option of a {@link ScriptedModel} (the compiler keeps this list and the interface the same). */
const SCRIPTED_OPTIONS = Object.keys({ name: true, model: true, latencyMs: true, record: true } satisfies Record<keyof ScriptedModelOptions, true>);

/**
 * A deterministic model for tests and simulations. Give it a list of steps, replayed in order across all calls,
 * or a function that answers each request; {@link ScriptedModel.perAgent} gives every agent its own script.
 * It records every request in `calls`, waits `latencyMs` on the actor system's clock (so `SimulatedClock`
 * controls it), and rejects with {@link ScriptExhaustedError} on a call it has no step for and with
 * {@link InvalidScriptStepError} for a step that gives no reply (`null`, a tool call that is `null`, …). At the end of a test,
 * {@link ScriptedModel.assertDone} throws an {@link UnusedStepsError} if steps of its script were never used.
 *
 * Replies without `usage` get an estimate of about four characters per token, so metrics stay meaningful.
 *
 * @example
 * const model = new ScriptedModel([
 *   { content: '', toolCalls: [{ id: 'c1', name: 'read_file', arguments: '{"path":"a.txt"}' }] },
 *   'The file says hello.',
 * ]);
 */
export class ScriptedModel implements Model {
  /** A readable name. */
  readonly name: string;
  /** Every request received, in order. */
  readonly calls: ModelRequest[] = [];
  private readonly steps: readonly ScriptStep[] | ScriptFunction;
  private readonly options: ScriptedModelOptions;
  private cursor = 0;
  private callCount = 0;
  /** For a {@link ScriptedModel.perAgent} model: the unused steps of each agent (by id, or by name if none ran). */
  private unusedByAgent: (() => Record<string, number>) | undefined;
  /** The stream of requests that come without the runtime's `random` (see `withRandom`). */
  private ownRandom: RandomSource | undefined;

  constructor(steps: readonly ScriptStep[] | ScriptFunction, options: ScriptedModelOptions = {}) {
    const unknown = unknownKeys(options, SCRIPTED_OPTIONS);
    if (unknown.length > 0) throw new ConfigurationError(`ScriptedModel: ${describeUnknownKeys(unknown, 'option')}.`);
    this.steps = typeof steps === 'function' ? steps : [...steps];
    this.options = options;
    this.name = options.name ?? 'scripted';
  }

  /**
   * A model where every agent replays its own list of steps, chosen by the agent's name: two agents of the same
   * name each get the whole list. An agent with no script, or one that runs past its script, gets a
   * {@link ScriptExhaustedError}; {@link ScriptedModel.assertDone} checks that every agent used its whole list
   * and that every scripted name was run.
   */
  static perAgent(scripts: Readonly<Record<string, readonly ScriptStep[]>>, options: ScriptedModelOptions = {}): ScriptedModel {
    const cursors = new Map<string, { name: string; index: number }>();
    const model = new ScriptedModel(async (request) => {
      const index = cursors.get(request.agentId)?.index ?? 0;
      const script = Object.hasOwn(scripts, request.agentName) ? scripts[request.agentName]! : undefined;
      if (script === undefined) {
        const names = Object.keys(scripts).join(', ') || 'none';
        throw new ScriptExhaustedError(index, request.agentId, `ScriptedModel.perAgent has no script for agent "${request.agentName}" (${request.agentId}); it has scripts for: ${names}.`);
      }
      if (index >= script.length) {
        throw new ScriptExhaustedError(
          index,
          request.agentId,
          `The script of agent "${request.agentName}" has ${script.length} step${script.length === 1 ? '' : 's'}; call #${index + 1} (from agent ${request.agentId}) has none.`,
        );
      }
      cursors.set(request.agentId, { name: request.agentName, index: index + 1 });
      const answer = await resolveStep(script[index], request);
      return checkAnswer(answer, model.name, () => `step ${index + 1} of the script of agent "${request.agentName}"`, request.agentId);
    }, options);
    model.unusedByAgent = () => {
      const unused: Record<string, number> = {};
      const ran = new Set<string>();
      for (const [id, { name, index }] of cursors) {
        ran.add(name);
        const left = (scripts[name]?.length ?? 0) - index;
        if (left > 0) unused[id] = left;
      }
      for (const [name, steps] of Object.entries(scripts)) if (!ran.has(name) && steps.length > 0) unused[name] = steps.length;
      return unused;
    };
    return model;
  }

  /** How many steps of a list script (or of a per-agent script, all agents together) are still unused; 0 for a function. */
  get remaining(): number {
    if (this.unusedByAgent) return Object.values(this.unusedByAgent()).reduce((sum, left) => sum + left, 0);
    return typeof this.steps === 'function' ? 0 : this.steps.length - this.cursor;
  }

  /**
   * Throws an {@link UnusedStepsError} when the script has unused steps: a run that asked the model fewer times than
   * scripted ended early or skipped a turn, and a test that does not notice has missed something. Call it when the
   * run is over (a function script has no steps to leave, so it always passes). A step is used when its reply is
   * given: a call aborted while it waits out `latencyMs` uses none, so script no reply for a call that is cancelled.
   */
  assertDone(): void {
    const remaining = this.remaining;
    if (remaining > 0) throw new UnusedStepsError(this.name, remaining, this.callCount, this.unusedByAgent?.() ?? {});
  }

  /**
   * Answers one turn from the script. A promise chain rather than an async function: awaiting a step's plain answer
   * cost a promise and a microtask more every turn. (Guarded inline, as the turn's other chains are: see `promiseFrom`.)
   */
  complete(request: ModelRequest): Promise<ModelReply> {
    try {
      const callIndex = this.callCount++;
      if (this.options.record !== false) this.calls.push(request);
      const scripted = this.withRandom(request);
      const { latencyMs } = this.options;
      const delay = typeof latencyMs === 'function' ? latencyMs(scripted, callIndex) : (latencyMs ?? 0);
      if (delay > 0) return sleepUnlessStopped(request.clock, delay, whenRequestStopped(request)).then(() => this.answer(scripted, callIndex));
      return this.answer(scripted, callIndex);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The script's answer to one call, once its latency has passed (its step taken then); what goes wrong rejects. */
  private answer(request: ScriptRequest, callIndex: number): Promise<ModelReply> {
    try {
      let answer: unknown;
      let step: number | undefined;
      if (typeof this.steps === 'function') {
        answer = this.steps(request, callIndex);
      } else {
        if (this.cursor >= this.steps.length) throw new ScriptExhaustedError(callIndex, request.agentId);
        step = this.cursor;
        this.cursor += 1;
        answer = resolveStep(this.steps[step], request);
      }
      // The step is named only when its answer is wrong: a text made for every turn would be thrown away on every good one.
      const where = () => whereInScript(step, callIndex);
      if (isPromiseLike(answer)) return Promise.resolve(answer).then((resolved) => this.finish(checkAnswer(resolved, this.name, where, request.agentId), request));
      return Promise.resolve(this.finish(checkAnswer(answer, this.name, where, request.agentId), request));
    } catch (error) {
      return Promise.reject(error);
    }
  }

  /** The request with a `random` of its own when it came without one (made by hand, not by a runtime). */
  private withRandom(request: ModelRequest): ScriptRequest {
    if (typeof request.random === 'function') return request as ScriptRequest;
    const stream = (this.ownRandom ??= new RandomSource(0));
    return { ...request, random: () => stream.next() };
  }

  private finish(answer: ModelReply | string, request: ModelRequest): ModelReply {
    // A copy by `Object.assign`: a spread's copy given a new key (its usage) costs a new hidden class on Node 20.
    const reply: ModelReply = typeof answer === 'string' ? { content: answer } : Object.assign({}, answer);
    reply.usage ??= estimateUsage(request, reply);
    if (reply.model === undefined && this.options.model !== undefined) reply.model = this.options.model;
    return reply;
  }
}

/** What a step gives; `unknown`, since a script built at run time (or in plain JavaScript) may hold anything. */
function resolveStep(step: ScriptStep | undefined, request: ScriptRequest): unknown {
  if (step instanceof Error) throw step;
  if (typeof step === 'function') return step(request);
  return step;
}

/** Where in a script a call's answer came from, for an error that names it: a list's step, or the function's call. */
function whereInScript(step: number | undefined, callIndex: number): string {
  return step === undefined ? `call ${callIndex + 1} of the script function` : `step ${step + 1} of the script`;
}

/**
 * The answer of a step, checked to be one: a string, or a reply object whose content is text (or missing, or null)
 * and whose tool calls (if any) are a list of objects. Anything else throws an {@link InvalidScriptStepError} naming
 * the step and what is wrong, rather than a `TypeError` from deep inside the model.
 */
function checkAnswer(answer: unknown, model: string, where: () => string, agentId: string): ModelReply | string {
  const problem = answerProblem(answer);
  if (problem !== undefined) throw new InvalidScriptStepError(model, where(), agentId, problem);
  return answer as ModelReply | string;
}

function answerProblem(answer: unknown): string | undefined {
  if (typeof answer === 'string') return undefined;
  if (answer === null || typeof answer !== 'object' || Array.isArray(answer)) return `gave ${shown(answer)} instead of a reply`;
  const { content, toolCalls } = answer as { content?: unknown; toolCalls?: unknown };
  if (content !== undefined && content !== null && typeof content !== 'string') {
    return `gave a reply whose content is ${shown(content)}, not text`;
  }
  if (toolCalls === undefined || toolCalls === null) return undefined;
  if (!Array.isArray(toolCalls)) return `gave a reply whose toolCalls is ${shown(toolCalls)}, not a list`;
  const bad = toolCalls.findIndex((call) => call === null || typeof call !== 'object');
  return bad === -1 ? undefined : `gave a reply whose tool call ${bad + 1} is ${shown(toolCalls[bad])}, not { id, name, arguments }`;
}

/** A value named in a few words, for an error message. */
function shown(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'an object';
  if (typeof value === 'function') return 'a function';
  return `the ${typeof value} ${String(value)}`;
}

/** About four characters a token: enough for simulations to show plausible figures. */
function estimateUsage(request: ModelRequest, reply: ModelReply): NonNullable<ModelReply['usage']> {
  let input = 0;
  for (const message of request.messages) input += message.content.length;
  let output = textLength(reply.content);
  for (const call of reply.toolCalls ?? []) output += textLength(call.name) + textLength(call.arguments);
  return { inputTokens: Math.ceil(input / 4), outputTokens: Math.ceil(output / 4) };
}

/** The length of a text; nothing (missing content, a malformed name) counts as none. */
function textLength(value: unknown): number {
  return typeof value === 'string' ? value.length : 0;
}
