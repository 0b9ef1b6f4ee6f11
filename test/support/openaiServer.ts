// A real OpenAI-compatible HTTP server on the loopback interface, for testing OpenAIModel through the real SDK.
// It records every request and answers each one with the next scripted response.
import { createServer, type IncomingHttpHeaders, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One answer the server gives, in order of the requests. */
export type ScriptedResponse =
  /** A JSON body (a chat completion), status 200 unless told. */
  | { kind: 'json'; body: unknown; status?: number }
  /**
   * An SSE stream: each chunk as a `data:` event, then `data: [DONE]`; or nothing more with the connection kept open
   * (`hang`), closed cleanly (`cut`), or broken (`drop`: the socket destroyed).
   */
  | { kind: 'stream'; chunks: readonly unknown[]; hang?: boolean; cut?: boolean; drop?: boolean }
  /** A 200 JSON answer whose connection breaks after the headers and the start of the body. */
  | { kind: 'drop'; partial: string }
  /** A body sent as it is (an HTML page from a proxy), with its status and content type (default text/html). */
  | { kind: 'text'; status: number; body: string; contentType?: string }
  /** An HTTP error with an OpenAI-shaped error body. */
  | { kind: 'error'; status: number; message?: string; headers?: Record<string, string> }
  /** Never answers: the connection stays open until the client gives up or the server closes. */
  | { kind: 'hang' };

/** A request as the server saw it. */
export interface RecordedRequest {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  /** The parsed JSON body (undefined when there was none). */
  body: unknown;
}

/** A running scripted server. */
export interface OpenAIServer {
  /** The base URL to give the SDK, such as `http://127.0.0.1:54321/v1`. */
  readonly baseURL: string;
  /** Every request received, in order. */
  readonly requests: RecordedRequest[];
  /** Adds responses to the end of the queue. */
  enqueue(...responses: ScriptedResponse[]): void;
  /** How many scripted responses are still unused. */
  readonly remaining: number;
  /** Resolves once the server has received `count` requests in all and written what it can to the last one. */
  waitForRequests(count: number): Promise<void>;
  /** Stops the server and drops every open connection. */
  close(): Promise<void>;
}

/** What the server computes rather than scripts. */
export interface OpenAIServerOptions {
  /**
   * Answers `POST /v1/embeddings` (the OpenAI shape: `{ data: [{ index, embedding }], model, usage }`) with this
   * vector for each input text, without taking a scripted response. Without it, an embeddings request takes the next
   * scripted response like any other.
   */
  embeddings?: (text: string) => number[];
}

/** Starts a scripted server on 127.0.0.1 on a free port. */
export async function startOpenAIServer(responses: readonly ScriptedResponse[] = [], options: OpenAIServerOptions = {}): Promise<OpenAIServer> {
  const queue: ScriptedResponse[] = [...responses];
  const requests: RecordedRequest[] = [];
  const waiters: { count: number; resolve: () => void }[] = [];
  let answered = 0;

  const notify = () => {
    answered += 1;
    for (const waiter of waiters.filter((candidate) => candidate.count <= answered)) {
      waiters.splice(waiters.indexOf(waiter), 1);
      waiter.resolve();
    }
  };

  const server = createServer((req, res) => {
    const parts: Buffer[] = [];
    req.on('data', (part: Buffer) => parts.push(part));
    req.on('end', () => {
      const text = Buffer.concat(parts).toString('utf8');
      requests.push({
        method: req.method ?? '',
        url: req.url ?? '',
        headers: req.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      });
      const computed = options.embeddings && req.url?.endsWith('/embeddings') ? embeddingsAnswer(requests.at(-1)!.body, options.embeddings) : undefined;
      const response = computed ?? queue.shift() ?? { kind: 'error', status: 418, message: 'No scripted response left.' };
      respond(res, response, notify);
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => resolve());
  });
  const { port } = server.address() as AddressInfo;

  return {
    baseURL: `http://127.0.0.1:${port}/v1`,
    requests,
    enqueue: (...more) => void queue.push(...more),
    get remaining() {
      return queue.length;
    },
    waitForRequests: (count) =>
      count <= answered ? Promise.resolve() : new Promise<void>((resolve) => waiters.push({ count, resolve })),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        server.closeAllConnections();
      }),
  };
}

/** The embeddings endpoint's answer to a request body (`{ model, input }`, input one text or a list). */
function embeddingsAnswer(body: unknown, embed: (text: string) => number[]): ScriptedResponse {
  const { model, input } = (body ?? {}) as { model?: string; input?: string | string[] };
  const texts = typeof input === 'string' ? [input] : (input ?? []);
  return {
    kind: 'json',
    body: {
      object: 'list',
      model: model ?? 'test-embedding',
      data: texts.map((text, index) => ({ object: 'embedding', index, embedding: embed(text) })),
      usage: { prompt_tokens: texts.length, total_tokens: texts.length },
    },
  };
}

function respond(res: ServerResponse, response: ScriptedResponse, done: () => void): void {
  switch (response.kind) {
    case 'json':
      res.writeHead(response.status ?? 200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(response.body), done);
      return;
    case 'text':
      res.writeHead(response.status, { 'content-type': response.contentType ?? 'text/html' });
      res.end(response.body, done);
      return;
    case 'error':
      res.writeHead(response.status, { 'content-type': 'application/json', ...response.headers });
      res.end(
        JSON.stringify({ error: { message: response.message ?? `HTTP ${response.status}`, type: 'server_error', code: null } }),
        done,
      );
      return;
    case 'stream': {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache', connection: 'keep-alive' });
      const events = response.chunks.map((chunk) => `data: ${JSON.stringify(chunk)}\n\n`).join('');
      if (response.hang === true) res.write(events, () => done());
      else if (response.cut === true) res.end(events, done);
      else if (response.drop === true) res.write(events, () => breakOff(res, done));
      else res.end(`${events}data: [DONE]\n\n`, done);
      return;
    }
    case 'drop':
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(response.partial.length + 100) });
      res.write(response.partial, () => breakOff(res, done));
      return;
    case 'hang':
      done();
      return;
  }
}

/** Breaks the connection of a response that has begun: the client reads part of it, then the socket is gone. */
function breakOff(res: ServerResponse, done: () => void): void {
  setTimeout(() => {
    res.socket?.destroy();
    done();
  }, 20);
}

/** A tool call as it appears in a chat completion message. */
export interface WireToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** A non-streamed chat completion body. */
export function chatCompletion(options: {
  content?: string | null;
  toolCalls?: readonly WireToolCall[];
  promptTokens?: number;
  completionTokens?: number;
  model?: string;
  /** The choice's `finish_reason` (default `tool_calls` when there are tool calls, else `stop`). */
  finish?: string;
}): unknown {
  const toolCalls = options.toolCalls ?? [];
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion',
    created: 1_700_000_000,
    model: options.model ?? 'test-model',
    choices: [
      {
        index: 0,
        finish_reason: options.finish ?? (toolCalls.length > 0 ? 'tool_calls' : 'stop'),
        logprobs: null,
        message: {
          role: 'assistant',
          content: options.content === undefined ? '' : options.content,
          refusal: null,
          ...(toolCalls.length > 0 && {
            tool_calls: toolCalls.map((call) => ({
              id: call.id,
              type: 'function',
              function: { name: call.name, arguments: call.arguments },
            })),
          }),
        },
      },
    ],
    usage: {
      prompt_tokens: options.promptTokens ?? 0,
      completion_tokens: options.completionTokens ?? 0,
      total_tokens: (options.promptTokens ?? 0) + (options.completionTokens ?? 0),
    },
  };
}

/** One streamed chunk carrying a delta of the first choice. */
export function deltaChunk(delta: Record<string, unknown>, options: { model?: string; finish?: string } = {}): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model: options.model ?? 'test-model',
    choices: [{ index: 0, delta, logprobs: null, finish_reason: options.finish ?? null }],
  };
}

/** The final streamed chunk that `stream_options.include_usage` asks for: no choices, only usage. */
export function usageChunk(promptTokens: number, completionTokens: number, model = 'test-model'): unknown {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_700_000_000,
    model,
    choices: [],
    usage: { prompt_tokens: promptTokens, completion_tokens: completionTokens, total_tokens: promptTokens + completionTokens },
  };
}
