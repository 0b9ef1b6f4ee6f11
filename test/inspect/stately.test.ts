// The Stately inspector as its page sees it: the real relay (`inspect: 'stately'`), and a WebSocket client connected
// to it as the relay's page connects, before the run or after it began. Offline: scripted models on simulated time.
import WebSocket from 'ws';
import { afterEach, describe, expect, it } from 'vitest';
import { createInspector } from '@statelyai/inspect';
import { ConfigurationError, createRuntime, createStatelyInspector, STATELY_PROTOCOL_VERSION, type Runtime } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { resident, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

/** A message of the Stately protocol, as the page gets it. */
interface Seen {
  type: '@xstate.actor' | '@xstate.event' | '@xstate.snapshot';
  sessionId: string;
  name?: string;
  parentId?: string;
  sourceId?: string;
  definition?: string;
  event?: { type: string; message?: { id: string } };
  snapshot?: { status?: string; value?: unknown; context?: unknown };
  _version: string;
}

/** A client of the relay, as the page connects: every message it gets, until the relay closes it. */
function connect(url: string): { socket: WebSocket; seen: Seen[]; texts: string[]; opened: Promise<unknown>; closed: Promise<unknown> } {
  const socket = new WebSocket(url);
  const seen: Seen[] = [];
  const texts: string[] = [];
  socket.on('message', (data: unknown) => {
    texts.push(String(data));
    seen.push(JSON.parse(String(data)) as Seen);
  });
  const opened = new Promise((resolve, reject) => {
    socket.once('open', resolve);
    socket.once('error', reject);
  });
  const closed = new Promise((resolve) => socket.once('close', resolve));
  return { socket, seen, texts, opened, closed };
}

const runtimes: Runtime[] = [];
afterEach(async () => {
  for (const runtime of runtimes.splice(0)) await runtime.shutdown();
});

/**
 * A run with delegation and a message between agents, watched by a client that connects before it starts or after 40
 * agents have come and gone (some 400 messages, twice what a relay that only buffers would replay) and the lead is
 * thinking. A lead delegates to a researcher and a writer at once; the researcher sends a message to a resident
 * listener, which wakes and answers.
 */
async function watchedRun(connectAt: 'start' | 'late') {
  const clock = simulatedClock();
  const model = scriptedPerAgent(
    {
      lead: [callTools(assignCall('researcher', 'Find the facts.', { id: 'find' }), assignCall('writer', 'Write it up.', { id: 'write' })), 'Both done.'],
      researcher: [callTools(toolCall('send_message', { to: 'listener', content: 'The facts are in.' }, 'tell')), 'Found them.'],
      writer: ['Written.'],
      listener: ['Listening.', 'Noted.'],
      early: ['Done early.'],
    },
    { latencyMs: 1_000 },
  );
  const agents = [
    worker('lead', ['assign_task']),
    worker('researcher', ['send_message']),
    worker('writer'),
    worker('early'),
    resident('listener'),
  ];
  const runtime = createRuntime({ model, agents, clock, seed: 3, inspect: 'stately', projectAgentDir: false, maxParallel: 8 });
  runtimes.push(runtime);
  const socketUrl = await runtime.inspector!.socketUrl;
  let client = connectAt === 'start' ? connect(socketUrl) : undefined;
  await client?.opened;
  const early = Array.from({ length: 40 }, (_, index) => runtime.spawn('early', `Early task ${index}.`));
  await runtime.runUntilIdle();
  const listener = runtime.spawn('listener', 'Listen for news.');
  const lead = runtime.spawn('lead', 'Research and write.');
  await Promise.resolve();
  if (!client) {
    client = connect(socketUrl);
    await client.opened;
  }
  await runtime.runUntilIdle();
  runtime.stop(listener.id);
  const results = await Promise.all([lead.result, listener.result, ...early.map((handle) => handle.result)]);
  expect(results.every((result) => result.status === 'completed')).toBe(true);
  await runtime.shutdown();
  await client.closed;
  const ids = { lead: lead.id, listener: listener.id, early: early.map((handle) => handle.id) };
  return { seen: client.seen, ids, runtime };
}

/** The top-level state of an agent's snapshot (`pending`, `running`, `completed`, `failed`). */
function phase(snapshot: Seen['snapshot']): string {
  const value = snapshot?.value;
  return typeof value === 'string' ? value : Object.keys(value as object)[0]!;
}

/** Each agent's lifecycle as the page saw it: its registration's state, then every state change. */
function lifecycles(seen: Seen[]): Map<string, string[]> {
  const names = new Map<string, string>();
  const phases = new Map<string, string[]>();
  for (const message of seen) {
    if (message.type === '@xstate.actor' && message.name!.startsWith('agent:')) names.set(message.sessionId, message.name!);
    const name = names.get(message.sessionId);
    if (!name || message.type === '@xstate.event') continue;
    const list = phases.get(name) ?? [];
    const next = phase(message.snapshot);
    if (list[list.length - 1] !== next) list.push(next);
    phases.set(name, list);
  }
  return phases;
}

/** Checks no message is about an actor the page was not told of first, and returns the registrations by name. */
function registrationsFirst(seen: Seen[]): Map<string, Seen> {
  const told = new Set<string>();
  const byName = new Map<string, Seen>();
  for (const message of seen) {
    expect(message._version).toBe(STATELY_PROTOCOL_VERSION);
    if (message.type === '@xstate.actor') {
      if (message.parentId !== undefined) expect(told.has(message.parentId)).toBe(true);
      told.add(message.sessionId);
      byName.set(message.name!, message);
      continue;
    }
    expect(told.has(message.sessionId), `${message.type} ${message.event?.type ?? ''} to an actor never announced`).toBe(true);
    if (message.sourceId !== undefined) expect(told.has(message.sourceId), `an event from an actor never announced`).toBe(true);
  }
  return byName;
}

describe("the Stately inspector (inspect: 'stately')", () => {
  it('shows the supervisor and every agent, each announced before anything about it, with its lifecycle in order', async () => {
    const { seen, ids, runtime } = await watchedRun('start');
    const registered = registrationsFirst(seen);
    const agents = [...registered.keys()].filter((name) => name.startsWith('agent:'));
    expect(registered.has('supervisor')).toBe(true);
    expect(agents).toHaveLength(44);
    expect(agents).toEqual(expect.arrayContaining([ids.lead, ids.listener, ...ids.early]));
    for (const name of agents) expect(registered.get(name)!.parentId).toBe(registered.get('supervisor')!.sessionId);
    // Every agent, from the first message on: pending, running, completed (a machine's definition came with it).
    for (const [name, phases] of lifecycles(seen)) expect(phases, name).toEqual(['pending', 'running', 'completed']);
    expect(JSON.parse(registered.get(ids.lead)!.definition!)).toMatchObject({ id: 'agent', initial: 'pending' });
    expect(runtime.inspector).toBeDefined();
  });

  it("names an agent's worker after its agent, as its child, and shows the turn pass between them as events", async () => {
    const { seen, ids } = await watchedRun('start');
    const registered = registrationsFirst(seen);
    const lead = registered.get(ids.lead)!;
    const children = [...registered.values()].filter((message) => message.parentId === lead.sessionId).map((message) => message.name);
    expect(children).toEqual([`worker:${ids.lead}`]);
    const worker = registered.get(`worker:${ids.lead}`)!;
    // The agent asks for its model call, and the answer comes back, as events between the two actors.
    const call = seen.find((message) => message.type === '@xstate.event' && message.event?.type === 'MODEL.CALL' && message.sessionId === worker.sessionId);
    expect(call?.sourceId).toBe(lead.sessionId);
    const done = seen.find((message) => message.type === '@xstate.event' && message.event?.type === 'MODEL.DONE' && message.sessionId === lead.sessionId);
    expect(done?.sourceId).toBe(worker.sessionId);
  });

  it('shows a message between agents pass as events: sender to supervisor, supervisor to receiver', async () => {
    const { seen, ids } = await watchedRun('start');
    const registered = registrationsFirst(seen);
    const researcher = [...registered.keys()].find((name) => name.startsWith('agent:researcher:'))!;
    const sent = seen.find((message) => message.type === '@xstate.event' && message.event?.type === 'MESSAGE.SEND');
    expect(sent).toMatchObject({ sessionId: registered.get('supervisor')!.sessionId, sourceId: registered.get(researcher)!.sessionId });
    const delivered = seen.find((message) => message.type === '@xstate.event' && message.event?.type === 'MESSAGE');
    expect(delivered).toMatchObject({ sessionId: registered.get(ids.listener)!.sessionId, sourceId: registered.get('supervisor')!.sessionId });
    expect(delivered!.event!.message!.id).toBe(sent!.event!.message!.id);
  });

  it('tells a client that connects after the run began every actor first: no event from an actor it never saw', async () => {
    const { seen, ids } = await watchedRun('late');
    const registered = registrationsFirst(seen);
    const agents = [...registered.keys()].filter((name) => name.startsWith('agent:'));
    expect(registered.has('supervisor')).toBe(true);
    // The 40 agents that ended before it connected are there too, in their last state.
    expect(agents).toEqual(expect.arrayContaining([ids.lead, ids.listener, ...ids.early]));
    expect(agents).toHaveLength(44);
    for (const id of ids.early) expect(phase(registered.get(id)!.snapshot)).toBe('completed');
    // The first messages are the registrations of what was there: the supervisor, the agents that ended, the live ones
    // with their latest state.
    const replayed = seen.slice(0, seen.findIndex((message) => message.type !== '@xstate.actor')).map((message) => message.name);
    expect(replayed).toEqual(expect.arrayContaining(['supervisor', ids.lead, ids.listener, ...ids.early]));
    expect(phase(registered.get(ids.lead)!.snapshot)).toBe('running');
    // Each agent's states, from where the client came in, still go forward in order.
    const order = ['pending', 'running', 'completed'];
    for (const [name, phases] of lifecycles(seen)) {
      const indexes = phases.map((value) => order.indexOf(value));
      expect(indexes.every((index, at) => index >= 0 && (at === 0 || index > indexes[at - 1]!)), `${name}: ${phases.join(' → ')}`).toBe(true);
      expect(phases[phases.length - 1]).toBe('completed');
    }
  });

  it('keeps showing a run after it ended, to a page opened then, until the inspector is closed', async () => {
    const inspector = createStatelyInspector();
    const model = scriptedPerAgent({ lead: [callTools(assignCall('writer', 'Write.')), 'Done.'], writer: ['Written.'] });
    const runtime = createRuntime({ model, agents: [worker('lead', ['assign_task']), worker('writer')], inspect: inspector, projectAgentDir: false });
    expect(runtime.inspector).toBe(inspector);
    const result = await runtime.run('lead', 'Write it.');
    await runtime.shutdown(); // the inspector is the caller's: it stays open

    const client = connect(await inspector.socketUrl);
    await client.opened;
    await inspector.close();
    await client.closed;
    const registered = registrationsFirst(client.seen);
    expect(client.seen.every((message) => message.type === '@xstate.actor')).toBe(true);
    expect(phase(registered.get('supervisor')!.snapshot)).toBe('closed');
    expect(phase(registered.get(result.id)!.snapshot)).toBe('completed');
    expect([...registered.keys()].filter((name) => name.startsWith('agent:writer:'))).toHaveLength(1);
    // A turn's model call or tool batch is not kept once it ended.
    expect([...registered.keys()].some((name) => name.startsWith('model:') || name.startsWith('tools:'))).toBe(false);
  });

  it('gives a page that is slow to take the end of a large run all of it before it closes the connection', async () => {
    const inspector = createStatelyInspector();
    // Each agent's snapshots carry its task: some 20 MB in all, more than the network's buffers hold for a page that
    // does not read.
    const task = `Summarise this: ${'word '.repeat(12_000)}`;
    const runtime = createRuntime({ model: new ScriptedModel(() => 'Summarised.'), agents: [worker('writer')], inspect: inspector, projectAgentDir: false });
    runtimes.push(runtime);
    const socketUrl = await inspector.socketUrl;
    const [slow, fast] = [connect(socketUrl), connect(socketUrl)];
    await Promise.all([slow.opened, fast.opened]);
    slow.socket.pause();
    await Promise.all(Array.from({ length: 30 }, () => runtime.run('writer', task)));
    await runtime.shutdown();
    const closing = inspector.close();
    // Longer than the fixed second the relay once waited before it cut a page off, losing what it had not taken.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    slow.socket.resume();
    await closing;
    await Promise.all([slow.closed, fast.closed]);
    expect(fast.texts.reduce((bytes, text) => bytes + text.length, 0)).toBeGreaterThan(16_000_000);
    expect(slow.texts.length).toBe(fast.texts.length);
    expect(slow.texts.at(-1)).toBe(fast.texts.at(-1));
  });

  it("never sends a secret to the page: the runtime's redactor passes over every message", async () => {
    const secret = 'hunter2-hunter2-hunter2';
    const model = scriptedPerAgent({ writer: [`The password is ${secret}.`] });
    const runtime = createRuntime({ model, agents: [worker('writer')], inspect: 'stately', secrets: [secret], projectAgentDir: false });
    runtimes.push(runtime);
    const client = connect(await runtime.inspector!.socketUrl);
    await client.opened;
    await runtime.run('writer', `Remember ${secret}.`);
    await runtime.shutdown();
    await client.closed;
    expect(client.texts.length).toBeGreaterThan(10);
    expect(client.texts.some((text) => text.includes(secret))).toBe(false);
    expect(client.texts.some((text) => text.includes('The password is [redacted].'))).toBe(true);
  });

  it("serves its page at / (the inspector's frame and the relay's socket) and nothing else", async () => {
    const runtime = createRuntime({ model: scriptedPerAgent({}), agents: [worker()], inspect: 'stately', projectAgentDir: false });
    runtimes.push(runtime);
    const url = await runtime.inspector!.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetch(url);
    expect(page.headers.get('content-type')).toContain('text/html');
    const html = await page.text();
    expect(html).toContain('<iframe id="inspector" src="https://stately.ai/inspect"');
    expect(html).toContain(JSON.stringify(await runtime.inspector!.socketUrl));
    expect((await fetch(new URL('/elsewhere', url))).status).toBe(404);
  });

  it("lets the relay's own page connect, and no page of another site", async () => {
    const runtime = createRuntime({ model: scriptedPerAgent({}), agents: [worker()], inspect: 'stately', projectAgentDir: false });
    runtimes.push(runtime);
    const socketUrl = await runtime.inspector!.socketUrl;
    const attempt = (origin: string) =>
      new Promise<string>((resolve) => {
        const socket = new WebSocket(socketUrl, { origin });
        socket.once('open', () => {
          socket.close();
          resolve('open');
        });
        socket.once('error', () => resolve('refused'));
      });
    expect(await attempt(new URL(await runtime.inspector!.url).origin)).toBe('open');
    expect(await attempt('https://elsewhere.example')).toBe('refused');
  });

  it("refuses an inspect option that is neither 'stately' nor an observer", () => {
    expect(() => createRuntime({ inspect: 'browser' as never })).toThrow(ConfigurationError);
    expect(() => createRuntime({ inspect: {} as never })).toThrow(ConfigurationError);
  });

  it("stamps the protocol version of the installed @statelyai/inspect", () => {
    let version: string | undefined;
    createInspector({ send: (event) => (version = event._version) }).snapshot('probe', { status: 'active' });
    expect(version).toBe(STATELY_PROTOCOL_VERSION);
  });
});
