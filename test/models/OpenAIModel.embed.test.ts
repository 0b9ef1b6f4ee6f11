// OpenAIModel.embed through the real openai SDK against the loopback OpenAI-compatible server's /v1/embeddings.
import { afterEach, describe, expect, it } from 'vitest';
import { AbortedError, ModelError } from '../../src/errors.js';
import { DEFAULT_EMBEDDING_MODEL, OpenAIModel } from '../../src/models/OpenAIModel.js';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';

let server: OpenAIServer | undefined;

afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A vector a test can read back: the text's length and its count of the letter e. */
const lengthAndEs = (text: string) => [text.length, [...text].filter((letter) => letter === 'e').length];

describe('OpenAIModel.embed', () => {
  it('asks the embeddings endpoint for the embedding model and gives one vector per text, in order', async () => {
    server = await startOpenAIServer([], { embeddings: lengthAndEs });
    const model = new OpenAIModel({ model: 'chat-model', apiKey: 'sk-test', baseURL: server.baseURL, embeddingModel: 'nomic-embed-text' });

    const vectors = await model.embed(['tree', 'be', 'sky']);

    expect(vectors).toEqual([[4, 2], [2, 1], [3, 0]]);
    expect(model.embeddingModel).toBe('nomic-embed-text');
    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]).toMatchObject({ method: 'POST', url: '/v1/embeddings', body: { model: 'nomic-embed-text', input: ['tree', 'be', 'sky'] } });
  });

  it('uses text-embedding-3-small when no embedding model is named, and sends nothing for no texts', async () => {
    server = await startOpenAIServer([], { embeddings: lengthAndEs });
    const model = new OpenAIModel({ model: 'chat-model', apiKey: 'sk-test', baseURL: server.baseURL });

    expect(await model.embed([])).toEqual([]);
    await model.embed(['one']);

    expect(model.embeddingModel).toBe(DEFAULT_EMBEDDING_MODEL);
    expect(server.requests.map((request) => (request.body as { model: string }).model)).toEqual(['text-embedding-3-small']);
  });

  it('fails with a ModelError carrying the status when the server has no embeddings, and with the key redacted', async () => {
    const key = 'sk-embed-secret-0123456789abcdef';
    server = await startOpenAIServer([{ kind: 'error', status: 404, message: `No embeddings for key ${key}.` }]);
    const model = new OpenAIModel({ model: 'chat-model', apiKey: key, baseURL: server.baseURL });

    const failure = await model.embed(['text']).catch((error: unknown) => error);

    expect(failure).toBeInstanceOf(ModelError);
    expect(failure).toMatchObject({ status: 404, retryable: false });
    expect((failure as Error).message).not.toContain(key);
  });

  it('fails with a ModelError when an answer lacks a vector', async () => {
    server = await startOpenAIServer([{ kind: 'json', body: { object: 'list', model: 'm', data: [{ object: 'embedding', index: 0, embedding: [1, 2] }] } }]);
    const model = new OpenAIModel({ model: 'chat-model', apiKey: 'sk-test', baseURL: server.baseURL });

    await expect(model.embed(['a', 'b'])).rejects.toThrow(/gave no vector for text 2 of 2/);
  });

  it('rejects with an AbortedError when its signal is aborted', async () => {
    server = await startOpenAIServer([{ kind: 'hang' }]);
    const model = new OpenAIModel({ model: 'chat-model', apiKey: 'sk-test', baseURL: server.baseURL });
    const controller = new AbortController();

    const pending = model.embed(['a'], controller.signal);
    await server.waitForRequests(1);
    controller.abort();

    await expect(pending).rejects.toBeInstanceOf(AbortedError);
  });
});
