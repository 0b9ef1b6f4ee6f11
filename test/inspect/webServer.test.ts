// troupe's web inspector's server, on a real loopback port: the page and its bundle, the machines, the run's events as
// server-sent events (in batches, from where a page left off, with their end), saved runs, and who may ask.
import { request } from 'node:http';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, createWebInspector, openWebReplay, type TroupeEvent, type WebInspector } from 'troupe';
import { collect, simulatedClock } from '../stubs.js';
import { readEvents, type SentEvent } from '../support/sse.js';
import { teamAgents, teamModel } from '../support/team.js';
import { eachTestTempDir } from '../support/tempDir.js';

const scratch = eachTestTempDir();
const open: WebInspector[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((inspector) => inspector.close()));
});

function keep(inspector: WebInspector): WebInspector {
  open.push(inspector);
  return inspector;
}

/** The events every batch of a stream carried, in order. */
function batched(events: readonly SentEvent[]): TroupeEvent[] {
  return events.filter((event) => event.event === 'message').flatMap((event) => JSON.parse(event.data) as TroupeEvent[]);
}

/** Runs the team in simulated time with the inspector watching; resolves with every event of the run. */
async function runTeam(inspector: WebInspector, options: { record?: string } = {}): Promise<TroupeEvent[]> {
  const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 50 }), clock: simulatedClock(), seed: 5, ...options });
  const events = collect(runtime.events$);
  inspector.watch(runtime.events$);
  runtime.spawn('lead', 'Compare apples and pears.');
  await runtime.runUntilIdle();
  await runtime.shutdown();
  return events;
}

function fetchText(url: string, headers: Record<string, string> = {}): Promise<{ status: number; type: string; body: string }> {
  return new Promise((resolve, reject) => {
    request(url, { headers, agent: false }, (response) => {
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, type: String(response.headers['content-type']), body }));
    })
      .on('error', reject)
      .end();
  });
}

describe('the web inspector server', () => {
  it('serves its page with the bundled script and style, and the machines it draws', async () => {
    const inspector = keep(createWebInspector({ title: 'apples <and> pears' }));
    const url = await inspector.url;
    expect(url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/$/);
    const page = await fetchText(url);
    expect(page.status).toBe(200);
    expect(page.type).toMatch(/^text\/html/);
    expect(page.body).toContain('<title>apples &#60;and&#62; pears · troupe</title>');
    expect(page.body).toContain('<script type="module" src="/assets/app.js">');
    const script = await fetchText(`${url}assets/app.js`);
    expect(script.status).toBe(200);
    expect(script.body.length).toBeGreaterThan(100_000); // Preact, the virtual list, uPlot and ELK, all inlined
    expect(script.body).not.toMatch(/https?:\/\/(unpkg|cdn|esm\.sh|jsdelivr)/);
    expect((await fetchText(`${url}assets/app.css`)).body).toContain('.uplot');
    const machines = JSON.parse((await fetchText(`${url}api/machines`)).body) as Record<string, { id: string }>;
    expect(Object.keys(machines).sort()).toEqual(['agent', 'group']);
    expect((await fetchText(`${url}nothing`)).status).toBe(404);
  });

  it('refuses a request addressed to another host name (a page of another site cannot reach it)', async () => {
    const inspector = keep(createWebInspector());
    const url = await inspector.url;
    const refused = await fetchText(url, { host: 'attacker.example:80' });
    expect(refused.status).toBe(403);
    expect((await fetchText(url, { host: `localhost:${new URL(url).port}` })).status).toBe(200);
  });

  it('streams every event of a run in order to a page connected from the start, then says it ended', async () => {
    const inspector = keep(createWebInspector());
    const reader = await readEvents(`${await inspector.url}api/events`);
    const events = await runTeam(inspector);
    await reader.until((event) => event.event === 'end');
    reader.close();
    expect(reader.events[0]).toMatchObject({ event: 'hello' });
    expect(JSON.parse(reader.events[0]!.data)).toEqual({ title: 'troupe run', mode: 'live', instance: expect.any(String) });
    expect(batched(reader.events)).toEqual(events);
    // Each batch's id is the count of events sent so far: what a page that reconnects gives back.
    const ids = reader.events.filter((event) => event.event === 'message').map((event) => Number(event.id?.split('.')[1]));
    expect(ids.at(-1)).toBe(events.length);
    expect(events.length).toBeGreaterThan(30);
  });

  it('gives a page that connects late everything, and one that reconnects only what it has not seen', async () => {
    const inspector = keep(createWebInspector());
    const events = await runTeam(inspector);
    const late = await readEvents(`${await inspector.url}api/events`);
    await late.until((event) => event.event === 'end');
    late.close();
    expect(batched(late.events)).toEqual(events);
    const { instance } = JSON.parse(late.events[0]!.data) as { instance: string };
    expect(late.events.filter((event) => event.event === 'message').at(-1)?.id).toBe(`${instance}.${events.length}`);
    const again = await readEvents(`${await inspector.url}api/events`, `${instance}.20`);
    await again.until((event) => event.event === 'end');
    again.close();
    expect(batched(again.events)).toEqual(events.slice(20));
    // An id another server gave (a run served before on the same port) counts events of that run: this one comes whole.
    for (const foreign of ['0f2c6a1e-5b1d-4c38-9d55-3f1a6f0b8e21.20', '20']) {
      const other = await readEvents(`${await inspector.url}api/events`, foreign);
      await other.until((event) => event.event === 'end');
      other.close();
      expect(batched(other.events)).toEqual(events);
    }
  });

  it('sends a page the rest and ends its stream when it closes; the page keeps what it got', async () => {
    const inspector = createWebInspector();
    const reader = await readEvents(`${await inspector.url}api/events`);
    const header = { runId: 'r', agentId: 'agent:a:1', parentId: null, toolCallId: null };
    for (let at = 0; at < 3; at += 1) inspector.push({ type: 'agent.spawned', ...header, agentId: `agent:a:${at}`, at, name: 'a', depth: 0, task: 't' });
    const ended = new Promise((resolve) => reader.response.once('end', resolve));
    await inspector.close();
    await ended;
    expect(batched(reader.events)).toHaveLength(3);
  });

  it('sends a page the whole rest of a long run when it closes, more than a socket buffer holds, then ends its stream', async () => {
    const inspector = createWebInspector();
    const header = { runId: 'r', parentId: null, toolCallId: null };
    const task = 'A task long enough to make the run weigh megabytes. '.repeat(4);
    for (let at = 0; at < 20_000; at += 1) inspector.push({ type: 'agent.spawned', ...header, agentId: `agent:a:${at}`, at, name: 'a', depth: 0, task });
    const reader = await readEvents(`${await inspector.url}api/events`);
    await reader.until((event) => event.event === 'hello');
    const closed = new Promise((resolve) => reader.response.once('close', resolve));
    inspector.end();
    await inspector.close();
    await closed;
    expect(batched(reader.events)).toHaveLength(20_000);
    expect(reader.events.at(-1)?.event).toBe('end');
  });

  it('replays a recorded run (what `troupe ui run.jsonl` serves), ended at once', async () => {
    const file = join(scratch.path, 'run.jsonl');
    const events = await runTeam(keep(createWebInspector()), { record: file });
    const replay = keep(await openWebReplay(file));
    const reader = await readEvents(`${await replay.url}api/events`);
    await reader.until((event) => event.event === 'end');
    reader.close();
    expect(JSON.parse(reader.events[0]!.data)).toEqual({ title: 'run.jsonl', mode: 'replay', instance: expect.any(String) });
    expect(batched(reader.events)).toEqual(events);
  });

  it('refuses a file that is not a recording, and a recording of a newer format', async () => {
    const corrupt = join(scratch.path, 'corrupt.jsonl');
    writeFileSync(corrupt, '{"type":"recording","schemaVersion":1,"runId":"r"}\nnot json\n{}\n');
    await expect(openWebReplay(corrupt)).rejects.toMatchObject({ code: 'corrupt_recording' });
    const newer = join(scratch.path, 'newer.jsonl');
    writeFileSync(newer, '{"type":"recording","schemaVersion":999,"runId":"r"}\n');
    await expect(openWebReplay(newer)).rejects.toMatchObject({ code: 'unsupported_schema' });
    await expect(openWebReplay(join(scratch.path, 'missing.jsonl'))).rejects.toMatchObject({ code: 'ENOENT' });
  });

  it('is what createRuntime({ ui: true }) starts, and closes at shutdown after the page got the whole run', async () => {
    const runtime = createRuntime({ agents: teamAgents, model: teamModel(), clock: simulatedClock(), ui: true });
    const url = await runtime.ui!.url;
    const reader = await readEvents(`${url}api/events`);
    const events = collect(runtime.events$);
    runtime.spawn('lead', 'Compare apples and pears.');
    await runtime.runUntilIdle();
    const ended = new Promise((resolve) => reader.response.once('end', resolve));
    await runtime.shutdown();
    await ended;
    expect(reader.events.at(-1)?.event).toBe('end');
    expect(batched(reader.events)).toEqual(events);
    await expect(fetchText(url)).rejects.toMatchObject({ code: 'ECONNREFUSED' });
  });
});
