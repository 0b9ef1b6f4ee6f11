import OpenAI, { APIConnectionError, APIConnectionTimeoutError, APIError, APIUserAbortError } from 'openai';
import type {
  ChatCompletion,
  ChatCompletionChunk,
  ChatCompletionCreateParamsNonStreaming,
  ChatCompletionMessageParam,
  ChatCompletionTool,
} from 'openai/resources/chat/completions';
import type { CompletionUsage } from 'openai/resources/completions';
import { AbortedError, ConfigurationError, ModelError, causeChain, errorMessage } from '../errors.js';
import { MIN_SECRET_LENGTH, Redactor } from '../redaction.js';
import type { ChatMessage, Model, ModelReply, ModelRequest, ToolCall, ToolSchema, Usage } from './Model.js';
import { parseXmlToolCalls, toXmlConversation } from './xmlToolCalls.js';
import { wireToolNames, type WireToolNames } from './wireToolNames.js';

/** Options of {@link OpenAIModel}. */
export interface OpenAIModelOptions {
  /** The model to ask, such as `gpt-4.1-mini` or `llama3.1` (an agent's `model` overrides it per request). */
  model: string;
  /**
   * The API key. Default `process.env.OPENAI_API_KEY`; when neither is set but a `baseURL` is (a local server
   * such as Ollama or vLLM), the placeholder `not-needed` is sent.
   */
  apiKey?: string;
  /**
   * The base URL of an OpenAI-compatible server, such as `http://localhost:11434/v1` for Ollama. Default
   * `process.env.OPENAI_BASE_URL`, else the OpenAI API.
   */
  baseURL?: string;
  /**
   * Use streamed Chat Completions (default false). The reply is still returned whole; streaming keeps long
   * answers from hitting proxy timeouts and lets an abort stop generation mid-answer.
   */
  stream?: boolean;
  /**
   * How many times the `openai` SDK itself retries a failed request (connection errors, 408, 409, 429, 5xx), inside
   * one model call. Default 0: troupe retries model calls itself (`retry` on the runtime, an agent or a spawn), on the
   * runtime's clock, with the agent's seeded jitter, a `model.retry` event per retry, and an abort that stops the wait
   * at once; the SDK's retries would wait in real time, unseen, and multiply troupe's tries. Set it for an
   * `OpenAIModel` used outside a runtime.
   */
  maxRetries?: number;
  /** The SDK's time limit for one request, in milliseconds (default: the SDK's, 10 minutes). */
  timeoutMs?: number;
  /** Sampling temperature, used when the request names none (default: the server's). */
  temperature?: number;
  /**
   * How tools reach the model. `native` (default) uses the API's `tools` and `tool_calls`. `xml` is for models
   * without native tool calling: the tools are described in the system prompt and calls are read from
   * `<tool_call name="…">{…}</tool_call>` blocks in the reply text (see `xmlToolCalls.ts`).
   */
  toolCallFormat?: 'native' | 'xml';
  /**
   * The model `embed` asks the embeddings endpoint (`/embeddings`) for, such as `nomic-embed-text` on Ollama
   * (default `text-embedding-3-small`).
   */
  embeddingModel?: string;
}

/** The embedding model {@link OpenAIModel} asks for when its options name none. */
export const DEFAULT_EMBEDDING_MODEL = 'text-embedding-3-small';

/** The placeholder key sent to servers that need none (Ollama, vLLM, …). */
const PLACEHOLDER_API_KEY = 'not-needed';

/**
 * A {@link Model} backed by the OpenAI Chat Completions API, or any server that speaks it (Ollama, vLLM, LM Studio,
 * llama.cpp, OpenRouter, …). Every failure rejects with a typed error: {@link AbortedError} when
 * `request.signal` was aborted, {@link ModelError} (with the HTTP `status` when there was one) otherwise.
 *
 * @example
 * const model = new OpenAIModel({ model: 'gpt-4.1-mini' });
 * const local = new OpenAIModel({ model: 'qwen2.5', baseURL: 'http://localhost:11434/v1', toolCallFormat: 'xml' });
 */
export class OpenAIModel implements Model {
  /** The default model name. */
  readonly name: string;
  /** The model `embed` asks for (`embeddingModel`, default `text-embedding-3-small`). */
  readonly embeddingModel: string;
  // Private in the language, not only in types: `util.inspect`, `console.log` and debuggers' previews do not show
  // them, so the key the client and the redactor hold is not printed with the model.
  readonly #client: OpenAI;
  readonly #options: OpenAIModelOptions;
  /** Keeps the key (and the environment's secrets, other keys, headers) out of the errors it throws. */
  readonly #redactor: Redactor;
  /** True when no key was set and the placeholder is sent (a local server): a 401 then says to set one. */
  readonly #keyless: boolean;

  constructor(options: OpenAIModelOptions) {
    if (typeof options.model !== 'string' || options.model.trim() === '') {
      throw new ConfigurationError('OpenAIModel needs a model name, such as { model: "gpt-4.1-mini" }.');
    }
    if (options.maxRetries !== undefined && !(Number.isInteger(options.maxRetries) && options.maxRetries >= 0)) {
      throw new ConfigurationError(`OpenAIModel maxRetries must be a whole number ≥ 0, got ${options.maxRetries}.`);
    }
    if (options.timeoutMs !== undefined && !(options.timeoutMs > 0)) {
      throw new ConfigurationError(`OpenAIModel timeoutMs must be a positive number, got ${options.timeoutMs}.`);
    }
    const baseURL = options.baseURL ?? nonEmpty(process.env.OPENAI_BASE_URL);
    if (baseURL !== undefined && withoutCredentials(baseURL) !== baseURL) {
      // fetch refuses such a URL on every call, and its message quotes the password.
      throw new ConfigurationError(
        `OpenAIModel baseURL must not hold a user name or password (${withoutCredentials(baseURL)} had them): ` +
          'give the key as apiKey (or OPENAI_API_KEY) instead.',
      );
    }
    const apiKey = options.apiKey ?? nonEmpty(process.env.OPENAI_API_KEY) ?? (baseURL ? PLACEHOLDER_API_KEY : undefined);
    if (apiKey === undefined) {
      throw new ConfigurationError(
        'OpenAIModel needs an API key: pass { apiKey }, set OPENAI_API_KEY, or give a baseURL for a local server.',
      );
    }
    this.#options = options;
    this.#keyless = apiKey === PLACEHOLDER_API_KEY && options.apiKey === undefined;
    this.name = options.model;
    this.embeddingModel = nonEmpty(options.embeddingModel) ?? DEFAULT_EMBEDDING_MODEL;
    // The placeholder is no secret: a message that quotes it keeps it.
    const secret = apiKey.length >= MIN_SECRET_LENGTH && apiKey !== PLACEHOLDER_API_KEY;
    this.#redactor = new Redactor({ secrets: secret ? [apiKey] : [] });
    this.#client = new OpenAI({
      apiKey,
      baseURL,
      maxRetries: options.maxRetries ?? 0,
      ...(options.timeoutMs !== undefined && { timeout: options.timeoutMs }),
    });
  }

  /** Answers one turn through the Chat Completions API. */
  async complete(request: ModelRequest): Promise<ModelReply> {
    const model = request.model ?? this.#options.model;
    const xml = this.#options.toolCallFormat === 'xml';
    const temperature = request.temperature ?? this.#options.temperature;
    // Names the API refuses (an MCP tool's `server:tool`) go out encoded and come back as they were.
    const names = xml ? undefined : wireToolNames(request.tools);
    const body: ChatCompletionCreateParamsNonStreaming = {
      model,
      messages: toChatMessages(xml ? toXmlConversation(request.messages, request.tools) : request.messages, names),
      ...(!xml && request.tools.length > 0 && { tools: request.tools.map((tool) => toChatTool(tool, names)) }),
      ...(temperature !== undefined && { temperature }),
    };
    const { signal } = request;
    if (signal.aborted) throw aborted(model);
    let reply: TextReply;
    try {
      reply = this.#options.stream === true ? await this.streamed(body, signal) : await this.whole(body, signal);
    } catch (error) {
      throw redacted(toTroupeError(error, model, signal, this.#failureContext()), this.#redactor);
    }
    // A stream cut short by the signal ends quietly in the SDK: the partial answer must not pass as a reply.
    if (signal.aborted) throw aborted(model);
    reply.model ||= model;
    if (names && reply.toolCalls) reply.toolCalls = reply.toolCalls.map((call) => ({ ...call, name: names.fromWire(call.name) }));
    const answer = xml ? withXmlToolCalls(reply) : reply;
    if (answer.toolCalls) answer.toolCalls = withFreshIds(answer.toolCalls, request.messages);
    return answer;
  }

  /**
   * Embeds texts through the embeddings endpoint (`embeddingModel`), one vector per text in order. Fails as `complete`
   * does: {@link AbortedError} when `signal` was aborted, {@link ModelError} otherwise (an answer with a missing or
   * malformed vector too).
   */
  async embed(texts: readonly string[], signal?: AbortSignal): Promise<number[][]> {
    const model = this.embeddingModel;
    if (texts.length === 0) return [];
    const stop = signal ?? new AbortController().signal;
    if (stop.aborted) throw aborted(model);
    try {
      const answer = await this.#client.embeddings.create({ model, input: [...texts], encoding_format: 'float' }, { signal: stop });
      return vectorsOf(answer.data, texts.length, model);
    } catch (error) {
      throw redacted(toTroupeError(error, model, stop, this.#failureContext()), this.#redactor);
    }
  }

  /** What a failure's message may say of this model's setup. */
  #failureContext(): FailureContext {
    return { keyless: this.#keyless, redactor: this.#redactor, baseURL: this.#client.baseURL };
  }

  private async whole(body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal): Promise<TextReply> {
    const completion: ChatCompletion = await this.#client.chat.completions.create(body, { signal });
    const message = completion?.choices?.[0]?.message;
    if (message === undefined || message === null) throw new ModelError(`Model "${body.model}" answered without a choice: ${notACompletion(completion)}`);
    const toolCalls: ToolCall[] = [];
    for (const call of message.tool_calls ?? []) {
      // Some compatible servers leave `type` out of a function call; a call of another type (`custom`) is not one.
      if (call.type !== undefined && call.type !== 'function') continue;
      if (call.function === undefined) continue;
      toolCalls.push({
        id: call.id || `call_${toolCalls.length + 1}`,
        name: call.function.name ?? '',
        arguments: argumentsText(call.function.arguments),
      });
    }
    const reply = makeReply(textOf(message.content ?? message.refusal), toolCalls, completion.usage, completion.model);
    return unfinished(reply, completion.choices[0]?.finish_reason, body.model);
  }

  private async streamed(body: ChatCompletionCreateParamsNonStreaming, signal: AbortSignal): Promise<TextReply> {
    const stream = await this.#client.chat.completions.create(
      { ...body, stream: true, stream_options: { include_usage: true } },
      { signal },
    );
    const assembled = new StreamedReply();
    for await (const chunk of stream) assembled.add(chunk);
    // An abort ends the stream quietly too: that is the caller's to report (an AbortedError), not a cut reply.
    if (signal.aborted) throw aborted(body.model);
    return assembled.reply(body.model);
  }
}

/**
 * What a 200 answer without a choice held, for its error: the server's own error (some servers answer an error with
 * status 200, `{ "error": { "message": … } }`), else the start of what came (an HTML page from a proxy, an empty list).
 */
function notACompletion(answer: unknown): string {
  const error = (answer as { error?: unknown } | null)?.error;
  const message = typeof error === 'string' ? error : (error as { message?: unknown } | undefined)?.message;
  if (typeof message === 'string' && message.trim() !== '') return `the server said "${message.trim()}"`;
  const text = typeof answer === 'string' ? answer : JSON.stringify(answer);
  if (text === undefined || text.trim() === '') return 'the answer was empty';
  const start = text.replace(/\s+/g, ' ').trim();
  return `it answered ${start.length > 200 ? `${start.slice(0, 200)}…` : start}`;
}

/** The vectors of an embeddings answer, by the index of their text; a missing or malformed one is a {@link ModelError}. */
function vectorsOf(data: readonly { index: number; embedding: unknown }[] | undefined, count: number, model: string): number[][] {
  const vectors: number[][] = new Array(count);
  for (const item of data ?? []) {
    const { embedding } = item;
    if (Array.isArray(embedding) && embedding.every((value) => typeof value === 'number' && Number.isFinite(value))) {
      vectors[item.index] = embedding as number[];
    }
  }
  for (let index = 0; index < count; index++) {
    if (vectors[index] === undefined) throw new ModelError(`Embedding model "${model}" gave no vector for text ${index + 1} of ${count}.`);
  }
  return vectors;
}

/** A reply as this model makes it: always with text (`''` when the server sent none). */
type TextReply = ModelReply & { content: string };

/** Assembles the chunks of a streamed completion: text, tool calls by index, usage from the final chunk. */
class StreamedReply {
  private content = '';
  private readonly calls = new Map<number, ToolCall>();
  /** The index of the call the last tool-call part went to. */
  private last: number | undefined;
  private usage: CompletionUsage | null | undefined;
  private model = '';
  /** Set by the chunk that says why the answer ended (`stop`, `tool_calls`, `length`, …). */
  private finished = false;
  private finishReason: string | undefined;

  add(chunk: ChatCompletionChunk): void {
    if (chunk.model) this.model = chunk.model;
    if (chunk.usage) this.usage = chunk.usage;
    const choice = chunk.choices?.find((candidate) => candidate.index === 0) ?? chunk.choices?.[0];
    if (choice?.finish_reason) {
      this.finished = true;
      this.finishReason = choice.finish_reason;
    }
    const delta = choice?.delta;
    if (delta === undefined || delta === null) return;
    if (delta.content !== undefined && delta.content !== null) this.content += textOf(delta.content);
    for (const part of delta.tool_calls ?? []) {
      const index = this.indexOf(part);
      const call = this.calls.get(index) ?? { id: '', name: '', arguments: '' };
      if (part.id) call.id = part.id;
      if (part.function?.name) call.name = part.function.name;
      const args: unknown = part.function?.arguments;
      if (typeof args === 'string') call.arguments += args;
      else if (typeof args === 'object' && args !== null) call.arguments = argumentsText(args);
      this.calls.set(index, call);
      this.last = index;
    }
  }

  /**
   * The index of the call a part belongs to: its `index`, else (a server that leaves it out) the last call's when the
   * part goes on with it (no id of its own, no name to start another), else the next free one.
   */
  private indexOf(part: ChatCompletionChunk.Choice.Delta.ToolCall): number {
    if (typeof part.index === 'number') return part.index;
    const current = this.last === undefined ? undefined : this.calls.get(this.last);
    const goesOn = current !== undefined && (part.id ? part.id === current.id : !(part.function?.name && current.name));
    if (goesOn) return this.last!;
    return this.calls.size === 0 ? 0 : Math.max(...this.calls.keys()) + 1;
  }

  /**
   * The answer the chunks make. A stream that ended without saying why its answer ended (no `finish_reason`, which every
   * OpenAI-compatible server sends in its last chunk of a choice) was cut short, however cleanly: a proxy or the server
   * closed it. Half an answer, or tool-call arguments cut where they still parse, must not pass for the reply, so it is a
   * retryable {@link ModelError}.
   */
  reply(requested: string): TextReply {
    if (!this.finished) {
      throw new ModelError(
        `The stream of model "${this.model || requested}" ended before its answer did (no finish_reason): the reply was cut short.`,
        { retryable: true },
      );
    }
    const toolCalls = [...this.calls.entries()]
      .sort(([a], [b]) => a - b)
      .map(([, call], position) => ({ ...call, id: call.id || `call_${position + 1}` }));
    return unfinished(makeReply(this.content, toolCalls, this.usage, this.model), this.finishReason, requested);
  }
}

/**
 * The reply, unless the server stopped it before the answer was done and it holds no tool calls: `length` (the output
 * token limit or the end of the context window) or `content_filter`. Such text is a fragment; passed on, it would be
 * the agent's final answer, a success. It is a {@link ModelError} that another try of the same request would not mend.
 * A reply with tool calls is kept: a call whose arguments were cut reaches the model as an error result it can act on.
 */
function unfinished(reply: TextReply, finishReason: string | null | undefined, requested: string): TextReply {
  if ((finishReason !== 'length' && finishReason !== 'content_filter') || reply.toolCalls !== undefined) return reply;
  const model = reply.model || requested;
  throw new ModelError(
    finishReason === 'length'
      ? `Model "${model}" stopped before its answer was done (finish_reason: length): it reached its output token limit or ` +
          `the end of its context window, so the answer was cut short. Raise the server's limit (max_tokens; on Ollama ` +
          `num_predict and num_ctx, on vLLM --max-model-len), shorten the conversation, or ask for a shorter answer.`
      : `Model "${model}" stopped before its answer was done (finish_reason: content_filter): the server's content ` +
          `filter withheld the rest of the answer.`,
    { retryable: false },
  );
}

/**
 * The text of a message's content: a string as it is; a list of parts (Mistral's reasoning models answer
 * `[{ type: 'thinking', … }, { type: 'text', text }]`) as the text of its `text` parts, the thinking left out; nothing
 * else is text (`''`).
 */
function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((part: unknown) => {
      const { type, text } = (part ?? {}) as { type?: unknown; text?: unknown };
      return type === 'text' && typeof text === 'string' ? text : '';
    })
    .join('');
}

/**
 * The calls, each with an id no earlier call of the conversation has: a server that sends no ids (they are made here,
 * `call_1`, … each turn) or the same ones every turn would otherwise give two calls one id, and a result, an event or a
 * view would be matched with the wrong call. A call whose id is taken gets the first free `call_<n>`, n counted on
 * from the conversation's calls.
 */
function withFreshIds(calls: ToolCall[], messages: readonly ChatMessage[]): ToolCall[] {
  const taken = new Set<string>();
  for (const message of messages) {
    if (message.role === 'assistant') for (const call of message.toolCalls ?? []) taken.add(call.id);
  }
  if (taken.size === 0 || calls.every((call) => !taken.has(call.id))) return calls;
  let next = taken.size + 1;
  const ids = new Set(calls.map((call) => call.id));
  return calls.map((call) => {
    if (!taken.has(call.id)) return call;
    while (taken.has(`call_${next}`) || ids.has(`call_${next}`)) next += 1;
    const id = `call_${next}`;
    taken.add(id);
    return { ...call, id };
  });
}

/** A call's arguments as JSON text: some servers send them as an object, whole (its JSON then); none is `''`. */
function argumentsText(args: unknown): string {
  if (typeof args === 'string') return args;
  return typeof args === 'object' && args !== null ? JSON.stringify(args) : '';
}

function makeReply(content: string, toolCalls: ToolCall[], usage: CompletionUsage | null | undefined, model: string): TextReply {
  const result: TextReply = { content, model };
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  if (usage) result.usage = toUsage(usage);
  return result;
}

function toUsage(usage: CompletionUsage): Usage {
  return { inputTokens: tokens(usage.prompt_tokens), outputTokens: tokens(usage.completion_tokens) };
}

function tokens(value: unknown): number {
  return typeof value === 'number' && Number.isFinite(value) && value > 0 ? Math.round(value) : 0;
}

/** Reads the XML tool call blocks out of the reply text (keeping any native calls a server sent anyway). */
function withXmlToolCalls(reply: TextReply): ModelReply {
  const native = reply.toolCalls ?? [];
  const parsed = parseXmlToolCalls(reply.content, { makeId: (index) => `call_${native.length + index + 1}` });
  const toolCalls = [...native, ...parsed.toolCalls];
  const result: ModelReply = { ...reply, content: parsed.content };
  if (toolCalls.length > 0) result.toolCalls = toolCalls;
  else delete result.toolCalls;
  return result;
}

/** troupe's messages in the Chat Completions shape. */
function toChatMessages(messages: readonly ChatMessage[], names?: WireToolNames): ChatCompletionMessageParam[] {
  return messages.map((message): ChatCompletionMessageParam => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'assistant':
        if (message.toolCalls === undefined || message.toolCalls.length === 0) {
          return { role: 'assistant', content: message.content };
        }
        return {
          role: 'assistant',
          // Some servers reject an empty string next to tool calls; null is what the API itself sends.
          content: message.content === '' ? null : message.content,
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function' as const,
            function: { name: names ? names.toWire(call.name) : call.name, arguments: call.arguments },
          })),
        };
      case 'tool':
        return { role: 'tool', tool_call_id: message.toolCallId, content: message.content };
    }
  });
}

function toChatTool(tool: ToolSchema, names?: WireToolNames): ChatCompletionTool {
  const name = names ? names.toWire(tool.name) : tool.name;
  return { type: 'function', function: { name, description: tool.description, parameters: tool.parameters } };
}

function aborted(model: string): AbortedError {
  return new AbortedError(`The call to model "${model}" was aborted.`);
}

/** What a failure's message may say of the model's setup. */
interface FailureContext {
  /** True when the placeholder key was sent (no key was set). */
  keyless: boolean;
  /** Redacts what the server said before it is shortened, so no part of a secret is left where it was cut. */
  redactor: Redactor;
  /** The server's base URL, named when it cannot be reached. */
  baseURL: string;
}

/** Any failure of a call as a troupe error. */
function toTroupeError(error: unknown, model: string, signal: AbortSignal, context: FailureContext): Error {
  const { keyless, redactor } = context;
  if (signal.aborted || error instanceof APIUserAbortError) return aborted(model);
  if (error instanceof ModelError) return error;
  if (error instanceof APIConnectionTimeoutError) {
    return new ModelError(`The call to model "${model}" timed out (raise OpenAIModel's timeoutMs for a slower server).`, {
      cause: error,
      retryable: true,
    });
  }
  if (error instanceof APIConnectionError) {
    const where = withoutCredentials(context.baseURL);
    return new ModelError(
      `Could not reach the server for model "${model}" at ${where}: ${causeChain(error)}. Check that the server is running ` +
        'and that baseURL (or OPENAI_BASE_URL) points at it.',
      { cause: error, retryable: true },
    );
  }
  if (error instanceof APIError) {
    const status = typeof error.status === 'number' ? error.status : undefined;
    const what = status === undefined ? 'failed' : `failed with HTTP ${status}`;
    const retryAfterMs = retryAfterOf(error.headers);
    const said = serverSaid(error, status, redactor);
    const quota = status === 429 && (error.code === 'insufficient_quota' || error.type === 'insufficient_quota');
    const hint = quota ? QUOTA_HINT : statusHint(status, model, keyless);
    // A spent quota is a 429 that no wait mends; an error sent in a stream (no status) says in its body what it was.
    const retryable = quota ? false : status === undefined ? streamedErrorRetryable(error) : undefined;
    return new ModelError(`The call to model "${model}" ${what}: ${said}${hint === undefined ? '' : ` ${hint}`}`, {
      status,
      cause: error,
      ...(retryable !== undefined && { retryable }),
      ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
    });
  }
  if (lostConnection(error)) {
    return new ModelError(`The connection to the server for model "${model}" broke while its reply was read: ${causeChain(error)}`, {
      cause: error,
      retryable: true,
    });
  }
  return new ModelError(`The reply of model "${model}" could not be read: ${errorMessage(error)}`, { cause: error });
}

/** The longest part of a server's error text an error message quotes. */
const MAX_QUOTED = 300;

/**
 * What the server said in an HTTP error, for a message: an error given as a plain string unquoted (Ollama's
 * `{ "error": "…" }`), the SDK's message without the status it begins with, on one line and at most
 * {@link MAX_QUOTED} characters (a proxy's HTML error page is kilobytes).
 */
function serverSaid(error: APIError, status: number | undefined, redactor: Redactor): string {
  const body: unknown = error.error;
  let text = typeof body === 'string' && body.trim() !== '' ? body : error.message;
  // The SDK's message begins with the status, which the message says already.
  if (status !== undefined && text.startsWith(`${status} `)) text = text.slice(`${status} `.length);
  if (text === 'status code (no body)') return 'the server gave no error message';
  text = redactor.redactText(text).replace(/\s+/g, ' ').trim();
  return text.length > MAX_QUOTED ? `${text.slice(0, MAX_QUOTED)}…` : text;
}

/**
 * Whether an error a server sent inside a stream (HTTP 200, `data: {"error": …}`) may pass on another try: its `code`
 * read as a status (vLLM sends `500`), else its `type` (OpenAI's `server_error`). Undefined when neither says.
 */
function streamedErrorRetryable(error: APIError): boolean | undefined {
  const code = typeof error.code === 'string' && /^\d{3}$/.test(error.code) ? Number(error.code) : (error.code as unknown);
  if (typeof code === 'number' && code >= 400 && code < 600) return code === 408 || code === 409 || code === 429 || code >= 500;
  return error.type === 'server_error' ? true : undefined;
}

/** What a 429 for a spent quota (OpenAI's `insufficient_quota`) tells the user to do. */
const QUOTA_HINT = '(The account is out of quota: check its plan and billing; trying again will not help.)';

/** What to do about an HTTP status that a setting of the user's causes, in words, or undefined for the others. */
function statusHint(status: number | undefined, model: string, keyless: boolean): string | undefined {
  switch (status) {
    case 401:
      return keyless
        ? '(No API key was set, so the placeholder "not-needed" was sent: pass { apiKey } or set OPENAI_API_KEY.)'
        : '(The server refused the API key: check { apiKey } or OPENAI_API_KEY, and that the key is for this server.)';
    case 403:
      return `(The API key may not use model "${model}" or this endpoint: check the key's project and permissions.)`;
    case 404:
      return `(Check the model name "${model}" (on Ollama, pull it first) and that baseURL is the API's root, such as http://localhost:11434/v1.)`;
    default:
      return undefined;
  }
}

/** Socket errors that mean the connection broke, not that the server answered something unreadable. */
const BROKEN_CONNECTION = new Set(['ECONNRESET', 'EPIPE', 'ECONNABORTED', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);

/**
 * True when the reply was cut off by its connection breaking after the server had begun to answer: fetch's
 * `TypeError: terminated` (undici's), or a reset or closed socket anywhere in the error's causes. No answer came whole,
 * so another try may get one, as when the server could not be reached at all.
 */
function lostConnection(error: unknown): boolean {
  let current: unknown = error;
  for (let depth = 0; current instanceof Error && depth < 5; depth++) {
    const { code } = current as { code?: unknown };
    if ((current instanceof TypeError && current.message === 'terminated') || (typeof code === 'string' && BROKEN_CONNECTION.has(code))) return true;
    current = current.cause;
  }
  return false;
}


/**
 * A model error whose message or cause's message quotes a secret (a server that echoes the key it refused, a header in
 * a proxy's message) made again with the secret replaced. The SDK's error is then not kept as its cause: it quotes it.
 */
function redacted(error: Error, redactor: Redactor): Error {
  if (!(error instanceof ModelError)) return error;
  const message = redactor.redactText(error.message);
  const { cause } = error;
  const causeQuotes = cause instanceof Error && redactor.redactText(cause.message) !== cause.message;
  if (message === error.message && !causeQuotes) return error;
  return new ModelError(message, {
    ...(error.status === undefined ? {} : { status: error.status }),
    retryable: error.retryable,
    ...(error.retryAfterMs === undefined ? {} : { retryAfterMs: error.retryAfterMs }),
  });
}

/**
 * How long a server asked to wait, in ms: `retry-after-ms` (OpenAI's own, in ms), else `retry-after` in seconds or as
 * an HTTP date (read against the wall clock, as the server meant it). Undefined when neither is there or readable.
 */
function retryAfterOf(headers: Headers | undefined): number | undefined {
  const ms = Number.parseFloat(headers?.get('retry-after-ms') ?? '');
  if (Number.isFinite(ms) && ms >= 0) return ms;
  const value = headers?.get('retry-after')?.trim();
  if (value === undefined || value === '') return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number.parseFloat(value) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}

/** A URL without the user name and password it may hold. */
function withoutCredentials(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.username === '' && parsed.password === '') return url;
    parsed.username = '';
    parsed.password = '';
    return parsed.toString();
  } catch {
    return url;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}
