import { execFile, spawn } from 'node:child_process';
import { chmodSync, existsSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { beforeEach, describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, DelegationError, InMemoryMemory, JsonFileMemory, SESSION_SCHEMA_VERSION, SESSIONS_KEY, SessionStore, UnsupportedSchemaError, type MemoryPort, type SessionRecord } from 'troupe';
import { ScriptedModel, assignCall, callTools, toolCall } from 'troupe/testing';
import { echoTool, lastToolMessage, leader, scripted, scriptedPerAgent, worker } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));

const dir = eachTestTempDir();
let file: string;

beforeEach(() => {
  file = join(dir.path, 'history.json');
});

describe('sessions in the store', () => {
  it('keeps each conversation under the agent id, its record in __agent_sessions__, and the run under main', async () => {
    const store = new InMemoryMemory();
    const model = scriptedPerAgent({ lead: [callTools(assignCall('analyst', 'Count.', { id: 'c1' })), 'Seven.'], analyst: ['7 modules.'] });
    const runtime = createRuntime({ model, agents: [leader(), worker('analyst')], store, projectAgentDir: false });

    const result = await runtime.run('lead', 'How many modules?');
    await runtime.flush();

    const sessions = (await store.get(SESSIONS_KEY)) as Record<string, SessionRecord>;
    const analyst = Object.values(sessions).find((session) => session.agentType === 'analyst')!;
    expect(sessions[result.id]).toMatchObject({
      schemaVersion: SESSION_SCHEMA_VERSION,
      id: result.id,
      agentType: 'lead',
      parentConversationId: 'main',
      state: 'completed',
      taskDescription: 'How many modules?',
      result: 'Seven.',
      error: null,
      metrics: { own: { modelCalls: 2 }, subtree: { modelCalls: 3 } },
    });
    expect(analyst).toMatchObject({ parentConversationId: result.id, state: 'completed', result: '7 modules.' });
    expect(analyst.endTime).toBeGreaterThanOrEqual(analyst.startTime);
    expect(analyst.id).toMatch(/^agent:analyst:/);
    expect(await store.get(analyst.id)).toEqual([
      { role: 'user', content: 'Count.' },
      { role: 'assistant', content: '7 modules.' },
    ]);
    expect(await store.get('main')).toEqual(await store.get(result.id));
    // The delegation's tool message carries the sub-agent's session id.
    expect(lastToolMessage(model.calls.at(-1)!)?.metadata).toMatchObject({ sessionId: analyst.id });
    await runtime.shutdown();
  });

  it('reads, right after a run ends, the session as ended and its conversation, without a flush first', async () => {
    const runtime = createRuntime({ model: scripted(['Done.']), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });

    const result = await runtime.run('worker', 'Work.');

    expect(await runtime.sessions.get(result.id)).toMatchObject({ state: 'completed', result: 'Done.' });
    expect(await runtime.sessions.conversation(result.id)).toEqual([
      { role: 'user', content: 'Work.' },
      { role: 'assistant', content: 'Done.' },
    ]);
    expect((await runtime.sessions.list()).map((session) => session.state)).toEqual(['completed']);
    await runtime.shutdown();
  });

  it('puts what changes while a write waits for the store into one next write, not one write a change', async () => {
    // A store slow to take writes (its file locked by another process): each write waits until the gate opens.
    let open: () => void = () => {};
    const gate = new Promise<void>((resolve) => (open = resolve));
    const inner = new InMemoryMemory();
    const writes: string[] = [];
    const slow: MemoryPort = {
      get: (key) => inner.get(key),
      keys: (prefix) => inner.keys(prefix),
      append: (key, item) => inner.append(key, item),
      delete: (key) => inner.delete(key),
      clear: () => inner.clear(),
      set: async (key, value) => (writes.push(`set ${key}`), await gate, inner.set(key, value)),
      update: async (key, change) => (writes.push(`update ${key}`), await gate, inner.update(key, change)),
    };
    const model = new ScriptedModel([callTools(toolCall('echo', { text: 'a' })), callTools(toolCall('echo', { text: 'b' })), callTools(toolCall('echo', { text: 'c' })), 'Done.']);
    const { tool } = echoTool();
    const runtime = createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool], store: slow, projectAgentDir: false });

    const result = await runtime.run('worker', 'Echo three times.');
    // The run's four turns changed its record and saved its conversation at each; the first write waits for the store.
    expect(writes.filter((write) => write.startsWith('update'))).toHaveLength(1);
    open();
    await runtime.flush();

    // The record's first write, then everything else in one: the last checkpoint of the conversation, not one a turn.
    expect(writes).toEqual([`update ${SESSIONS_KEY}`, `set ${result.id}`, 'set main', `update ${SESSIONS_KEY}`]);
    expect(await runtime.sessions.get(result.id)).toMatchObject({ state: 'completed', result: 'Done.' });
    expect((await runtime.sessions.conversation(result.id))?.at(-1)).toMatchObject({ role: 'assistant', content: 'Done.' });
    await runtime.shutdown();
  });

  it('flush rejects only once every write has settled, so a process that exits then leaves no write under way and no lock', async () => {
    writeFileSync(file, `${JSON.stringify({ schemaVersion: 1 })}\n`);
    chmodSync(file, 0o444); // every write fails, each after taking and giving back the lock
    const inner = new JsonFileMemory(file);
    let writing = 0;
    const counted = <T>(promise: Promise<T>): Promise<T> => {
      writing++;
      return promise.finally(() => writing--);
    };
    const store: MemoryPort = {
      get: (key) => inner.get(key),
      keys: (prefix) => inner.keys(prefix),
      set: (key, value) => counted(inner.set(key, value)),
      append: (key, item) => counted(inner.append(key, item)),
      update: (key, change) => counted(inner.update(key, change)),
      delete: (key) => counted(inner.delete(key)),
      clear: () => counted(inner.clear()),
    };
    const sessions = new SessionStore(store);
    for (const id of ['agent:a:1', 'agent:a:2', 'agent:a:3']) {
      sessions.spawned({ id, agentType: 'a', parentConversationId: 'main', taskDescription: 'Count.' });
      sessions.checkpoint(id, [{ role: 'user', content: 'Count.' }]);
    }

    await expect(sessions.flush()).rejects.toThrow(ConfigurationError);

    expect(writing).toBe(0);
    expect(existsSync(`${file}.lock`)).toBe(false);
  });

  it('cleanup refuses an age that is not a number (a text, NaN, none), with a ConfigurationError, rather than removing nothing silently', async () => {
    const model = scripted(['Done.']);
    const runtime = createRuntime({ model, agents: [worker('analyst')], store: new JsonFileMemory(file), projectAgentDir: false });
    const result = await runtime.run('analyst', 'Count.');
    await runtime.flush();
    for (const age of [Number.NaN, '7d' as unknown as number, undefined as unknown as number, null as unknown as number]) {
      await expect(runtime.sessions.cleanup(age)).rejects.toThrow(ConfigurationError);
    }
    expect((await runtime.sessions.list()).map((session) => session.id)).toEqual([result.id]);
    expect(await runtime.sessions.conversation(result.id)).toHaveLength(2);
    await runtime.shutdown();
  });

  it('refuses to write sessions over something else kept under __agent_sessions__, and leaves it as it is', async () => {
    writeFileSync(file, `${JSON.stringify({ schemaVersion: 1, [SESSIONS_KEY]: ['kept by another program'] })}\n`);
    const runtime = createRuntime({ model: scripted(['Done.']), agents: [worker('analyst')], store: new JsonFileMemory(file), projectAgentDir: false });
    const result = await runtime.run('analyst', 'Count.');
    expect(result.status).toBe('completed');
    await expect(runtime.shutdown()).rejects.toThrow(ConfigurationError);
    expect(await new JsonFileMemory(file).get(SESSIONS_KEY)).toEqual(['kept by another program']);
  });

  it('answers get, list, running, byParent and cleanup', async () => {
    const model = new ScriptedModel((request) => (request.messages.at(-1)?.content === 'Still here.' ? new Promise<string>(() => {}) : 'ok'));
    const runtime = createRuntime({ model, agents: [worker()], projectAgentDir: false });
    const top = await runtime.run('worker', 'Top.', { conversationKey: 'chat-42' });
    const child = await runtime.run('worker', 'Child.', { parentId: top.id });
    const hanging = runtime.spawn('worker', 'Still here.');
    await runtime.flush();

    expect(await runtime.sessions.get(child.id)).toMatchObject({ parentConversationId: top.id, state: 'completed' });
    expect((await runtime.sessions.byParent('chat-42')).map((session) => session.id)).toEqual([top.id]);
    expect((await runtime.sessions.byParent(top.id)).map((session) => session.id)).toEqual([child.id]);
    expect((await runtime.sessions.list()).map((session) => session.id)).toEqual([top.id, child.id, hanging.id]);
    expect((await runtime.sessions.running()).map((session) => session.id)).toEqual([hanging.id]);
    runtime.cancel(hanging.id);
    expect(await hanging.result).toMatchObject({ reason: 'cancelled' });
    await runtime.flush();
    expect(await runtime.sessions.cleanup(60_000)).toEqual([]);
    expect((await runtime.sessions.cleanup(-1)).sort()).toEqual([top.id, child.id, hanging.id].sort());
    expect(await runtime.sessions.list()).toEqual([]);
    expect(await runtime.sessions.conversation(top.id)).toBeUndefined();
    await runtime.shutdown();
  });

  it('cleanup keeps a session another live runtime on the store still runs, and removes one whose process died', async () => {
    let answer!: (text: string) => void;
    const model = new ScriptedModel(() => new Promise<string>((resolve) => (answer = resolve)));
    const first = createRuntime({ model, agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });
    const long = first.spawn('worker', 'A long task.');
    await first.flush();
    const gone = await deadPid();
    const store = new JsonFileMemory(file);
    await store.update(SESSIONS_KEY, (sessions) => ({
      ...(sessions as object),
      'agent:worker:dead': { ...storedRecord('agent:worker:dead'), state: 'running', endTime: null, owner: { pid: gone, host: hostname(), startedAt: 1 } },
    }));
    // Another runtime on the same file (this process here; another process of this host alike) cleans up everything old.
    const second = createRuntime({ model: scripted([]), agents: [worker()], store, projectAgentDir: false });
    expect(await second.sessions.cleanup(-1)).toEqual(['agent:worker:dead']);

    answer('Done at last.');
    await long.result;
    await first.flush();
    expect(await second.sessions.get(long.id)).toMatchObject({ state: 'completed', result: 'Done at last.' });
    await Promise.all([first.shutdown(), second.shutdown()]);
  });

  it('lists and resumes, in a second process, a session a first process wrote to the same file', async () => {
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/support/sessionWorker.ts', file], { cwd: root, timeout: 60_000 });
    const first = JSON.parse(stdout.trim().split('\n').at(-1)!) as { lead: string; status: string };
    expect(first.status).toBe('completed');

    const model = scriptedPerAgent({
      analyst: [(request) => `Resumed with ${request.messages.length} messages.`, 'Adopted by the new lead.'],
      lead: [
        (request) => callTools(assignCall('analyst', 'And how many tests?', { resume: String(request.messages.at(-1)?.content).split(' ')[0], id: 'r1' })),
        'done',
      ],
    });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('analyst')],
      store: new JsonFileMemory(file),
      projectAgentDir: false,
    });

    const sessions = await runtime.sessions.list();
    expect(sessions.map((session) => [session.agentType, session.state])).toEqual([
      ['lead', 'completed'],
      ['analyst', 'completed'],
    ]);
    const analystId = sessions[1]!.id;
    expect(sessions[1]!.parentConversationId).toBe(first.lead);

    const mainBefore = await new JsonFileMemory(file).get('main');
    expect(mainBefore).toEqual(await new JsonFileMemory(file).get(first.lead));
    const resumed = await (await runtime.resume(analystId, 'Which is the largest?')).result;
    await runtime.flush();
    // The sub-agent keeps its parent from the first process, and the run's `main` conversation is left alone.
    expect(await runtime.sessions.get(analystId)).toMatchObject({ parentConversationId: first.lead, state: 'completed' });
    expect(await new JsonFileMemory(file).get('main')).toEqual(mainBefore);
    expect(resumed).toMatchObject({ id: analystId, status: 'completed', output: 'Resumed with 4 messages.' });
    expect(model.calls[0]!.messages.map((message) => message.content)).toEqual([
      'You are the analyst.',
      'Count the modules.',
      'There are 7 modules: a, b, c, d, e, f, g.',
      'Which is the largest?',
    ]);

    await runtime.run('lead', `${analystId} is the analyst to ask.`);
    expect(lastToolMessage(model.calls.at(-1)!)?.content).toContain('Adopted by the new lead.');
    expect(model.calls.find((request) => request.messages.at(-1)?.content === 'And how many tests?')?.messages).toHaveLength(6);
    await expect(runtime.resume('agent:analyst:none', 'x')).rejects.toBeInstanceOf(DelegationError);
    await runtime.shutdown();
    // Its conversation grew by a task and an answer at each resume.
    expect((await new JsonFileMemory(file).get(analystId)) as unknown[]).toHaveLength(6);
  }, 60_000);

  it('refuses to resume a session another process marked running', async () => {
    const store = new JsonFileMemory(file);
    await store.set(SESSIONS_KEY, {
      'agent:worker:elsewhere': {
        id: 'agent:worker:elsewhere', agentType: 'worker', parentConversationId: 'main', state: 'running',
        taskDescription: 'x', startTime: 1, endTime: null, result: null, error: null, metrics: null,
      },
    });
    await store.set('agent:worker:elsewhere', [{ role: 'user', content: 'x' }]);
    const runtime = createRuntime({ model: scripted([]), agents: [worker()], store, projectAgentDir: false });
    await expect(runtime.resume('agent:worker:elsewhere', 'y')).rejects.toThrow(/still marked running/);
    await runtime.shutdown();
  });

  it('lets one of two runtimes that resume a session at once run it, and refuses the other', async () => {
    const first = createRuntime({ model: new ScriptedModel(['First answer.']), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });
    const { id } = await first.run('worker', 'Start.');
    await first.shutdown();
    // Two runtimes on the store (as two processes would be), each resuming the session with its own task.
    const answering = (name: string) => new ScriptedModel((request) => `${name} saw ${request.messages.length} messages.`);
    const a = createRuntime({ model: answering('a'), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });
    const b = createRuntime({ model: answering('b'), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });

    const outcomes = await Promise.allSettled([a.resume(id, 'Task of a.'), b.resume(id, 'Task of b.')]);
    const started = outcomes.flatMap((outcome) => (outcome.status === 'fulfilled' ? [outcome.value] : []));
    const refused = outcomes.flatMap((outcome) => (outcome.status === 'rejected' ? [outcome.reason as DelegationError] : []));
    expect(started).toHaveLength(1);
    expect(refused).toEqual([expect.objectContaining({ reason: 'still_running' })]);
    const result = await started[0]!.result;
    await Promise.all([a.shutdown(), b.shutdown()]);

    // The one that ran finds its turn in the store, after the first run's: nothing written over.
    const conversation = (await new JsonFileMemory(file).get(id)) as { content: string }[];
    expect(conversation.map((message) => message.content)).toEqual(['Start.', 'First answer.', expect.stringMatching(/^Task of [ab]\.$/), result.output]);
    expect((await new JsonFileMemory(file).get(SESSIONS_KEY)) as Record<string, SessionRecord>).toMatchObject({ [id]: { state: 'completed', result: result.output } });
  });

  it('lets one of two processes that resume a session at once run it, and refuses the other', async () => {
    const first = createRuntime({ model: new ScriptedModel(['First answer.']), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });
    const { id } = await first.run('worker', 'Start.');
    await first.shutdown();
    const workers = ['a', 'b'].map((tag) =>
      spawn(process.execPath, ['--import', 'tsx', 'test/support/resumeWorker.ts', file, id, tag], { cwd: root, stdio: ['pipe', 'pipe', 'inherit'] }),
    );
    const outputs = workers.map((child) => {
      let out = '';
      child.stdout!.on('data', (chunk: Buffer) => (out += chunk.toString()));
      return { ready: until(() => out.includes('ready\n')), done: new Promise((resolve) => child.once('exit', resolve)).then(() => out) };
    });
    await Promise.all(outputs.map((output) => output.ready));
    for (const child of workers) child.stdin!.write('go\n'); // both at once
    const reports = (await Promise.all(outputs.map((output) => output.done))).map((out) => JSON.parse(out.trim().split('\n').at(-1)!) as { tag: string; status?: string; refused?: string });

    expect(reports.filter((report) => report.status === 'completed')).toHaveLength(1);
    expect(reports.filter((report) => report.refused === 'still_running')).toHaveLength(1);
    const winner = reports.find((report) => report.status === 'completed')!.tag;
    const conversation = (await new JsonFileMemory(file).get(id)) as { content: string }[];
    expect(conversation.map((message) => message.content)).toEqual(['Start.', 'First answer.', `Task of ${winner}.`, `Answer of ${winner}.`]);
  }, 60_000);

  it('gives a session back as it was when its resume is refused after it was taken', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(['First answer.', 'Second answer.']), agents: [worker()], store: new JsonFileMemory(file), projectAgentDir: false });
    const { id } = await runtime.run('worker', 'Start.');
    await expect(runtime.resume(id, '   ')).rejects.toBeInstanceOf(ConfigurationError);
    expect(await runtime.sessions.get(id)).toMatchObject({ state: 'completed', result: 'First answer.' });
    expect(await (await runtime.resume(id, 'Go on.')).result).toMatchObject({ status: 'completed', output: 'Second answer.' });
    await runtime.shutdown();
  });

  it('resumes, in the runtime that ran it, a session whose end could not be written while the store failed', async () => {
    const store = new FailingStore();
    let answer!: (text: string) => void;
    const model = new ScriptedModel(['First answer.', () => new Promise<string>((resolve) => (answer = resolve)), 'Third answer.']);
    const runtime = createRuntime({ model, agents: [worker()], store, projectAgentDir: false });
    const { id } = await runtime.run('worker', 'Start.');
    const resumed = await runtime.resume(id, 'Go on.');
    await runtime.flush();
    store.failing = true; // the disk is full, say: the end of this run is not written
    answer('Second answer.');
    expect(await resumed.result).toMatchObject({ status: 'completed' });
    await expect(runtime.flush()).rejects.toThrow(/disk full/);
    store.failing = false;

    // The store still says pending, in this process's name; the runtime knows it ended, and resumes it.
    expect(await (await runtime.resume(id, 'And again.')).result).toMatchObject({ status: 'completed', output: 'Third answer.' });
    await runtime.shutdown();
  });

  it('reads a record written before schemaVersion as version 1', async () => {
    const store = new InMemoryMemory();
    await store.set(SESSIONS_KEY, { 'agent:worker:old': storedRecord('agent:worker:old') });
    const runtime = createRuntime({ model: new ScriptedModel([]), agents: [worker()], store, projectAgentDir: false });
    // Read in today's shape: a record of version 1 (no field) comes back as the current version.
    expect(await runtime.sessions.get('agent:worker:old')).toMatchObject({ schemaVersion: SESSION_SCHEMA_VERSION, state: 'completed', result: 'old answer' });
    expect((await runtime.sessions.list()).map((session) => session.id)).toEqual(['agent:worker:old']);
    await runtime.shutdown();
  });

  it('leaves a record of a newer schemaVersion out of lists, refuses to resume it, and never rewrites it', async () => {
    const newer = { ...storedRecord('agent:worker:future'), schemaVersion: SESSION_SCHEMA_VERSION + 1, shape: 'of the future' };
    const store = new JsonFileMemory(file);
    await store.set(SESSIONS_KEY, { 'agent:worker:future': newer });
    await store.set('agent:worker:future', [{ role: 'user', content: 'x' }]);
    const runtime = createRuntime({ model: scripted(['ok']), agents: [worker()], store, projectAgentDir: false });

    expect(await runtime.sessions.list()).toEqual([]);
    await expect(runtime.sessions.get('agent:worker:future')).rejects.toMatchObject({
      code: 'unsupported_schema', kind: 'session', source: 'session agent:worker:future', found: SESSION_SCHEMA_VERSION + 1,
    });
    await expect(runtime.resume('agent:worker:future', 'y')).rejects.toBeInstanceOf(UnsupportedSchemaError);
    const mine = await runtime.run('worker', 'Mine.');
    expect(await runtime.sessions.cleanup(-1)).toEqual([mine.id]);
    await runtime.shutdown();

    expect(await new JsonFileMemory(file).get(SESSIONS_KEY)).toEqual({ 'agent:worker:future': newer });
  });
});

/** A store whose writes fail while `failing` is set, as a full disk does. */
class FailingStore extends InMemoryMemory {
  failing = false;

  override async set(key: string, value: unknown): Promise<void> {
    if (this.failing) throw new Error('disk full');
    return super.set(key, value);
  }

  override async update<T>(key: string, change: (current: T | undefined) => T): Promise<T> {
    if (this.failing) throw new Error('disk full');
    return super.update(key, change as (current: unknown) => unknown) as Promise<T>;
  }
}

/** Resolves once `check` holds, looking every 10 ms. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

/** The pid of a process that ran and has exited (so, on this host, one that no longer runs). */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ['-e', ''], { stdio: 'ignore' });
  await new Promise((resolve) => child.once('exit', resolve));
  return child.pid!;
}

/** A session record as troupe wrote them before schemaVersion. */
function storedRecord(id: string) {
  return {
    id, agentType: 'worker', parentConversationId: 'main', state: 'completed', taskDescription: 'x',
    startTime: 1, endTime: 2, result: 'old answer', error: null, metrics: null,
  };
}
