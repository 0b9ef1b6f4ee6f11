// The Redactor on its own (listed secrets, environment variables, recognised keys and headers), and a runtime's
// secrets kept out of what leaves it: events, results' errors, stored sessions.
import { readFileSync } from 'node:fs';
import { inspect } from 'node:util';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, createRuntime, defineAgent, defineTool, JsonFileMemory, MIN_SECRET_LENGTH, ModelError, OpenAIModel, REDACTED, Redactor } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { collect, ofType, scripted, simulatedClock, worker } from './stubs.js';
import { modelRequest } from './support/modelRequest.js';
import { startOpenAIServer, type OpenAIServer } from './support/openaiServer.js';
import { eachTestTempDir } from './support/tempDir.js';

const KEY = 'sk-proj-0123456789abcdefABCDEF';

describe('a Redactor', () => {
  it('replaces every listed secret wherever it appears, the longest first', () => {
    const redactor = new Redactor({ secrets: ['hunter2-hunter2', 'hunter2-hunter2-and-more'], env: false });
    expect(redactor.redactText('a hunter2-hunter2-and-more b hunter2-hunter2 c')).toBe(`a ${REDACTED} b ${REDACTED} c`);
    expect(redactor.secrets).toEqual(['hunter2-hunter2-and-more', 'hunter2-hunter2']);
  });

  it('takes the values of variables named *_KEY, *_TOKEN and *_SECRET, skipping short values and other names', () => {
    const redactor = new Redactor({
      env: { MY_API_KEY: 'value-of-the-key', GH_TOKEN: 'ghp_tokentokentoken', APP_SECRET: 'shh-very-secret', DEBUG_KEY: '1', HOME: '/home/someone' },
    });
    expect([...redactor.secrets].sort()).toEqual(['ghp_tokentokentoken', 'shh-very-secret', 'value-of-the-key']);
    expect(redactor.redactText('value-of-the-key, ghp_tokentokentoken, shh-very-secret, 1, /home/someone')).toBe(
      `${REDACTED}, ${REDACTED}, ${REDACTED}, 1, /home/someone`,
    );
  });

  it('replaces a secret also as JSON writes it inside a string: escaped quotes, backslashes, line breaks, slashes, \\u', () => {
    const secrets = ['line1\nline2secret', 'pa"ss\\word-Q7', 'ghp_Zx9/secretvalue/Yq', 'clé-très-secrète'];
    const redactor = new Redactor({ secrets, env: false });
    for (const secret of secrets) {
      // How a tool call's arguments hold it, as JSON.stringify writes it and as a model may escape it.
      const json = JSON.stringify({ text: secret });
      expect(redactor.redactText(json)).toBe(`{"text":"${REDACTED}"}`);
      expect(redactor.redactText(json.replaceAll('/', '\\/'))).toBe(`{"text":"${REDACTED}"}`);
      const ascii = json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
      expect(redactor.redactText(ascii)).toBe(`{"text":"${REDACTED}"}`);
      expect(redactor.redactText(ascii.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`))).toBe(`{"text":"${REDACTED}"}`);
    }
  });

  it('replaces the value of an Authorization, Proxy-Authorization or x-api-key key of an object whole', () => {
    const redactor = new Redactor({ env: false });
    const headers = { Authorization: 'Token abcdefgh', 'proxy-authorization': 'Basic dXNlcjpwYXNz', 'X-API-Key': 'k1k2k3k4k5', accept: 'json', messageId: 'm1' };
    expect(redactor.redact({ headers })).toEqual({
      headers: { Authorization: REDACTED, 'proxy-authorization': REDACTED, 'X-API-Key': REDACTED, accept: 'json', messageId: 'm1' },
    });
  });

  it('treats characters of regular expressions in a secret as plain text', () => {
    const redactor = new Redactor({ secrets: ['a.b*c+d?(e)[f]'], env: false });
    expect(redactor.redactText('x a.b*c+d?(e)[f] y aXbbcd')).toBe(`x ${REDACTED} y aXbbcd`);
  });

  it('refuses a listed secret shorter than the minimum, or one that is not a string', () => {
    expect(() => new Redactor({ secrets: ['short'], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: [42 as unknown as string], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: 'not-a-list-at-all' as unknown as string[], env: false })).toThrow(ConfigurationError);
    expect(() => new Redactor({ secrets: ['x'.repeat(MIN_SECRET_LENGTH)], env: false })).not.toThrow();
  });

  it('recognises API keys and Authorization header values without being told', () => {
    const redactor = new Redactor({ env: false });
    expect(redactor.redactText(`key=${KEY}.`)).toBe(`key=${REDACTED}.`);
    expect(redactor.redactText(`Authorization: Bearer ${KEY}\nAccept: json`)).toBe(`Authorization: ${REDACTED}\nAccept: json`);
    expect(redactor.redactText('{"authorization":"Basic dXNlcjpwYXNz","accept":"json"}')).toBe(`{"authorization":"${REDACTED}","accept":"json"}`);
    expect(redactor.redactText('x-api-key: abcdefgh12345678')).toBe(`x-api-key: ${REDACTED}`);
    expect(redactor.redactText('sent with bearer eyJhbGciOiJIUzI1NiJ9.e30.sig')).toBe(`sent with bearer ${REDACTED}`);
  });

  it('leaves ordinary text alone: short sk- words, the word bearer, authorization in prose', () => {
    const redactor = new Redactor({ env: false });
    for (const text of ['use sk-learn', 'task-1234567890abcdefghij', 'the Bearer of news', 'authorization failed', 'ask-me']) {
      expect(redactor.redactText(text)).toBe(text);
    }
  });

  it('redacts plain JSON deeply, copying only what changes', () => {
    const redactor = new Redactor({ secrets: ['the-secret-value'], env: false });
    const clean = { type: 'tool.result', n: 1, nested: { list: ['a', { b: 'c' }] }, none: null };
    expect(redactor.redact(clean)).toBe(clean);
    const shared = { untouched: 'yes' };
    const dirty = { message: 'has the-secret-value', list: ['ok', 'the-secret-value'], shared, at: 3 };
    const redacted = redactor.redact(dirty);
    expect(redacted).toEqual({ message: `has ${REDACTED}`, list: ['ok', REDACTED], shared: { untouched: 'yes' }, at: 3 });
    expect(redacted.shared).toBe(shared);
    expect(dirty.message).toBe('has the-secret-value'); // the original is not changed
  });

  it('leaves values that are not plain JSON as they are', () => {
    const redactor = new Redactor({ secrets: ['the-secret-value'], env: false });
    const error = new Error('the-secret-value');
    expect(redactor.redact(error)).toBe(error);
    expect(redactor.redact(7)).toBe(7);
  });
});

describe('printing what holds a secret', () => {
  it('never prints the key of an OpenAIModel, a Redactor or a runtime, however deep util.inspect looks', async () => {
    const key = 'sk-inspect-canary-0123456789abcdef';
    const model = new OpenAIModel({ apiKey: key, model: 'gpt-4o' });
    const redactor = new Redactor({ secrets: [key], env: false });
    const runtime = createRuntime({ model, agents: [worker()], secrets: [key] });
    for (const value of [model, redactor, runtime, { nested: { model } }]) {
      expect(inspect(value, { depth: Infinity, showHidden: true })).not.toContain('canary');
      expect(JSON.stringify(value, (_, inner: unknown) => (typeof inner === 'bigint' ? String(inner) : inner)) ?? '').not.toContain('canary');
    }
    // A runtime writes out what names it, never its live parts.
    expect(JSON.parse(JSON.stringify(runtime))).toEqual({ runId: runtime.runId, agentNames: [...runtime.agentNames] });
    expect(inspect(redactor)).toBe('Redactor { 1 secret }');
    expect(inspect(model)).toContain('gpt-4o'); // what it is stays visible
    await runtime.shutdown();
  });
});

describe('a runtime with secrets', () => {
  const dir = eachTestTempDir();
  const SECRET = 'hunter2-correct-horse-battery';
  const HEADER = `Authorization: Bearer ${KEY}`;

  /** A tool that reads a "config" holding the secret and a request header; one that fails quoting the secret. */
  const tools = [
    defineTool({ name: 'read_config', description: 'Reads the config.', parameters: z.object({}), kind: 'read', execute: () => `password=${SECRET}\n${HEADER}` }),
    defineTool({
      name: 'login',
      description: 'Logs in.',
      parameters: z.object({}),
      kind: 'write',
      execute: () => {
        throw new Error(`login refused for password ${SECRET}`);
      },
    }),
  ];

  it('keeps listed secrets and headers out of events, the trace, tool errors and the stored session', async () => {
    const file = join(dir.path, 'store.json');
    const trace = join(dir.path, 'trace.jsonl');
    // The model repeats what the tools said, as models do.
    const model = scripted([
      callTools(toolCall('read_config', {}, 'c1'), toolCall('login', {}, 'c2')),
      (request) => `Config said: ${request.messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}`,
    ]);
    const runtime = createRuntime({ model, agents: [worker('worker', ['read_config', 'login'])], tools, secrets: [SECRET], store: new JsonFileMemory(file), trace, projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', `Log in with ${SECRET}.`);
    await runtime.shutdown();

    expect(result.status).toBe('completed');
    const seen = JSON.stringify(events);
    expect(seen).not.toContain(SECRET);
    expect(seen).not.toContain(KEY);
    expect(ofType(events, 'agent.spawned')[0]?.task).toBe(`Log in with ${REDACTED}.`);
    expect(ofType(events, 'tool.result').find((e) => e.callId === 'c2')?.error).toBe(`login refused for password ${REDACTED}`);
    expect(ofType(events, 'agent.completed')[0]?.output).toContain(`password=${REDACTED}\nAuthorization: ${REDACTED}`);
    // The model itself worked with the real values: redaction happens where data leaves the runtime.
    expect(JSON.stringify(model.calls.at(-1)?.messages)).toContain(SECRET);
    for (const written of [readFileSync(file, 'utf8'), readFileSync(trace, 'utf8')]) {
      expect(written).not.toContain(SECRET);
      expect(written).not.toContain(KEY);
      expect(written).toContain(REDACTED);
    }
    expect(await runtime.sessions.get(result.id)).toMatchObject({ taskDescription: `Log in with ${REDACTED}.` });
  });

  it('keeps secrets out of what its own in-memory sessions give: records, conversations, and a resumed history', async () => {
    const model = scripted([
      callTools(toolCall('read_config', {}, 'c1'), toolCall('login', {}, 'c2')),
      (request) => `Config said: ${request.messages.filter((m) => m.role === 'tool').map((m) => m.content).join(' | ')}`,
      (request) => `I was told: ${request.messages.map((m) => m.content).join(' | ')}`,
    ]);
    const runtime = createRuntime({ model, agents: [worker('worker', ['read_config', 'login'])], tools, secrets: [SECRET], projectAgentDir: false });

    const result = await runtime.run('worker', `Log in with ${SECRET}.`);
    expect(result.status).toBe('completed');
    const record = await runtime.sessions.get(result.id);
    expect(record).toMatchObject({ state: 'completed', taskDescription: `Log in with ${REDACTED}.` });
    expect(record?.result).toContain(`password=${REDACTED}`);
    const conversation = await runtime.sessions.conversation(result.id);
    expect(conversation?.find((m) => m.role === 'tool' && m.toolCallId === 'c1')?.content).toBe(`password=${REDACTED}\nAuthorization: ${REDACTED}`);
    const shown = JSON.stringify([record, conversation, await runtime.sessions.list()]);
    expect(shown).not.toContain(SECRET);
    expect(shown).not.toContain(KEY);

    // A resume goes on from the conversation as the store gives it: the model sees the secrets replaced.
    const resumed = await (await runtime.resume(result.id, 'What were you told?')).result;
    expect(resumed.status).toBe('completed');
    const seen = JSON.stringify(model.calls.at(-1)?.messages);
    expect(seen).not.toContain(SECRET);
    expect(seen).toContain(`password=${REDACTED}`);
    await runtime.shutdown();
  });

  it('replaces a secret in the message of a failed agent: its result, its event and its session record', async () => {
    const file = join(dir.path, 'store.json');
    const model = scripted([new Error(`upstream said: bad credentials ${SECRET}`)]);
    const runtime = createRuntime({ model, agents: [worker()], secrets: [SECRET], store: new JsonFileMemory(file), projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', 'Call upstream.');
    await runtime.shutdown();

    const message = `The model call of agent "worker" to model "scripted" failed: upstream said: bad credentials ${REDACTED}`;
    expect(result).toMatchObject({ status: 'failed', reason: 'error', error: { code: 'model_call_failed', message } });
    expect(ofType(events, 'agent.failed')[0]?.error.message).toBe(message);
    expect(JSON.stringify(events)).not.toContain(SECRET);
    const stored = readFileSync(file, 'utf8');
    expect(stored).not.toContain(SECRET);
    expect(await runtime.sessions.get(result.id)).toMatchObject({ state: 'failed', error: { code: 'model_call_failed', message } });
  });

  it('replaces a secret in what a model threw that is no Error, once it names the model and the agent', async () => {
    const model = { name: 'bare', complete: () => Promise.reject(`token ${SECRET} expired`) };
    const runtime = createRuntime({ model, agents: [worker()], secrets: [SECRET], projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', 'Call upstream.');
    await runtime.shutdown();

    expect(result.error).toEqual({
      code: 'model_call_failed',
      fault: 'model',
      message: `The model call of agent "worker" to model "bare" failed: token ${REDACTED} expired`,
    });
    expect(JSON.stringify([result, events])).not.toContain(SECRET);
  });

  it("keeps secrets out of a handle's events$: what it kept from the tick of the spawn, and what a later subscriber sees", async () => {
    // The launcher reads events as they came (a tap of the pipeline) and gives a handle's stream the redacted one.
    const resident = defineAgent({ name: 'resident', description: 'Lives on.', systemPrompt: 'Answer.', resident: true });
    const model = new ScriptedModel(() => `noted; the password is ${SECRET}`); // a model repeats what it was told
    const runtime = createRuntime({ model, agents: [resident], secrets: [SECRET], clock: simulatedClock(), projectAgentDir: false });
    const handle = runtime.spawn('resident', `Wait for mail; the password is ${SECRET}.`);
    const fromTheStart = collect(handle.events$);
    await runtime.runUntilIdle(); // past the tick of the spawn: a later subscriber gets only what comes from then on
    const later = collect(handle.events$);

    runtime.send(handle.id, `the password is ${SECRET}`);
    await runtime.runUntilIdle();
    await runtime.shutdown();

    expect(ofType(fromTheStart, 'agent.spawned')[0]?.task).toBe(`Wait for mail; the password is ${REDACTED}.`);
    expect(ofType(later, 'message.delivered').map((event) => event.agentId)).toEqual([handle.id]);
    expect(ofType(later, 'model.response').map((event) => event.content)).toEqual([`noted; the password is ${REDACTED}`]);
    expect(JSON.stringify([fromTheStart, later])).not.toContain(SECRET);
  });

  it('redacts the messages of messages$ and their events', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), secrets: [SECRET], projectAgentDir: false });
    const messages: string[] = [];
    runtime.messages$.subscribe((message) => messages.push(message.content));
    const events = collect(runtime.events$);

    await runtime.publish('news', `the password is ${SECRET}`);
    await runtime.shutdown();

    expect(messages).toEqual([`the password is ${REDACTED}`]);
    expect(ofType(events, 'message.sent')[0]?.message.content).toBe(`the password is ${REDACTED}`);
    expect(JSON.stringify(events)).not.toContain(SECRET);
  });

  it('refuses a secret too short to be told from ordinary text', () => {
    expect(() => createRuntime({ model: new ScriptedModel([]), secrets: ['ok'], projectAgentDir: false })).toThrow(ConfigurationError);
  });
});

describe('OpenAIModel errors', () => {
  let server: OpenAIServer;
  beforeEach(async () => {
    server = await startOpenAIServer();
  });
  afterEach(() => server.close());

  // Not of the sk- kind, so only the model's knowing its own key can catch it.
  const API_KEY = 'loopback-key-0123456789';
  const refusal = { kind: 'error', status: 401, message: `Incorrect API key provided: ${API_KEY}. You passed Authorization: Bearer ${API_KEY}.` } as const;

  it('never quote the key a server echoes back, in the message or a cause', async () => {
    server.enqueue(refusal);
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: API_KEY, baseURL: server.baseURL, maxRetries: 0 });
    const error = await model.complete(modelRequest()).then(
      () => undefined,
      (thrown: unknown) => thrown,
    );
    expect(error).toBeInstanceOf(ModelError);
    expect(error).toMatchObject({ status: 401, retryable: false, cause: undefined });
    expect((error as Error).message).toContain(`Incorrect API key provided: ${REDACTED}`);
    expect((error as Error).message).not.toContain(API_KEY);
    expect(server.requests[0]?.headers.authorization).toBe(`Bearer ${API_KEY}`); // the real key was sent
  });

  it("leave the agent's failure holding [redacted] where the server quoted the key", async () => {
    server.enqueue(refusal);
    const model = new OpenAIModel({ model: 'gpt-4o-mini', apiKey: API_KEY, baseURL: server.baseURL, maxRetries: 0 });
    const runtime = createRuntime({ model, agents: [worker()], projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('worker', 'Say hi.');
    await runtime.shutdown();

    expect(result).toMatchObject({ status: 'failed', error: { code: 'model_error', status: 401 } });
    expect(result.error?.message).toContain(REDACTED);
    expect(JSON.stringify([result, events])).not.toContain(API_KEY);
  });
});
