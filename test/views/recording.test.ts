// A record file: a header line with the format's version, then every event; read back by readRecording.
import { readFileSync, writeFileSync, WriteStream } from 'node:fs';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Subject } from 'rxjs';
import { describe, expect, it, onTestFinished, vi } from 'vitest';
import { ConfigurationError, CorruptRecordingError, createRuntime, readRecording, RECORDING_SCHEMA_VERSION, UnsupportedSchemaError, type TroupeEvent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { scripted, simulatedClock, worker } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';
import { recordEvents } from '../../src/views/recordEvents.js';

const dir = eachTestTempDir();
const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const event = (runId: string, at: number) => ({ type: 'agent.started', runId, agentId: 'agent:w:1', parentId: null, toolCallId: null, at, name: 'w' });

describe('recordings', () => {
  it('start with a header line, then hold every event, which readRecording gives back in order', async () => {
    const file = join(dir.path, 'run.jsonl');
    const runtime = createRuntime({ model: scripted(['one', 'two']), agents: [worker()], clock: simulatedClock(), seed: 3, record: file, projectAgentDir: false });
    const seen: TroupeEvent[] = [];
    runtime.events$.subscribe((e) => seen.push(e));
    await runtime.run('worker', 'First.');
    await runtime.run('worker', 'Second.');
    await runtime.shutdown();

    const [first, ...rest] = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(first).toBe(`{"type":"recording","schemaVersion":${RECORDING_SCHEMA_VERSION},"runId":"${runtime.runId}"}`);
    expect(rest.map((line) => JSON.parse(line))).toEqual(JSON.parse(JSON.stringify(seen)));
    const recording = await readRecording(file);
    expect(recording).toEqual({ schemaVersion: RECORDING_SCHEMA_VERSION, runId: runtime.runId, events: JSON.parse(JSON.stringify(seen)) });
    expect(recording.events.filter((e) => e.type === 'agent.completed')).toHaveLength(2);
  });

  it('hold every event of a run larger than its write chunks, in order, and hand them to the file before shutdown', async () => {
    const file = join(dir.path, 'large.jsonl');
    // 400 runs with a long answer each: about 840 K characters of lines, several of the recording's chunks.
    const answer = `${'x'.repeat(600)} done`;
    const runtime = createRuntime({ model: new ScriptedModel(() => answer), agents: [worker()], clock: simulatedClock(), seed: 5, record: file, projectAgentDir: false });
    const seen: TroupeEvent[] = [];
    runtime.events$.subscribe((e) => seen.push(e));
    for (let i = 0; i < 400; i++) await runtime.run('worker', `Task ${i}.`);
    // Before shutdown: the last lines reach the file once the event loop turns (the stream writes in the background).
    const last = JSON.stringify(seen[seen.length - 1]);
    await expect.poll(() => readFileSync(file, 'utf8').includes(last), { timeout: 10_000, interval: 20 }).toBe(true);
    await runtime.shutdown();
    const lines = readFileSync(file, 'utf8').trimEnd().split('\n');
    expect(lines.length).toBe(seen.length + 1);
    expect(lines.slice(1).map((line) => JSON.parse(line))).toEqual(JSON.parse(JSON.stringify(seen)));
    expect(seen.filter((e) => e.type === 'agent.completed')).toHaveLength(400);
  });

  it('hand its lines to the file a chunk at a time while events come faster than the event loop turns', async () => {
    const file = join(dir.path, 'burst.jsonl');
    const events = new Subject<TroupeEvent>();
    // Watched, not replaced: each write still goes to the stream.
    const write = vi.spyOn(WriteStream.prototype, 'write');
    onTestFinished(() => write.mockRestore());
    const recording = recordEvents(events, file, { runId: 'r1' });
    const sent = Array.from({ length: 3_000 }, (_, at) => ({ ...event('r1', at), name: `w${'x'.repeat(100)}` }));
    for (const one of sent) events.next(one as TroupeEvent);
    // Before anything is awaited: the header, then a write each time about 64 K characters had gathered.
    const chunks = write.mock.calls.length - 1;
    const characters = sent.reduce((sum, one) => sum + JSON.stringify(one).length + 1, 0);
    expect(chunks).toBe(Math.floor(characters / (64 * 1024)));
    await recording.close();
    expect((await readRecording(file)).events).toEqual(sent);
  });

  it('fail createRuntime at once, with a ConfigurationError, when the file cannot be made (not at shutdown, after the run)', () => {
    const make = (record: string) => () => createRuntime({ model: new ScriptedModel([]), record, projectAgentDir: false });
    expect(make(join(dir.path, 'missing', 'run.jsonl'))).toThrow(ConfigurationError);
    expect(make(join(dir.path, 'missing', 'run.jsonl'))).toThrow(/^The record file .*run\.jsonl cannot be written: its folder .*missing does not exist or is not a folder\.$/);
    expect(make(dir.path)).toThrow(/^The record file .* cannot be written: it is a folder\.$/);
    writeFileSync(join(dir.path, 'not-a-folder'), '');
    expect(make(join(dir.path, 'not-a-folder', 'run.jsonl'))).toThrow(/cannot be written: its folder .*not-a-folder does not exist or is not a folder/);
  });

  it('refuse a file that cannot be made before any part starts: no web inspector server is left open', async () => {
    // The process ends by itself: a server started before the refusal would keep it alive until the time limit.
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'test/support/refusedRuntimeWorker.ts', join(dir.path, 'missing', 'run.jsonl')], {
      cwd: root,
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe('refused: ConfigurationError');
  }, 90_000);

  it('read a file without a header (written before it) as version 1, its run taken from its first event', async () => {
    const file = join(dir.path, 'old.jsonl');
    writeFileSync(file, `${JSON.stringify(event('r1', 0))}\n${JSON.stringify(event('r1', 5))}\n`);
    expect(await readRecording(file)).toMatchObject({ schemaVersion: 1, runId: 'r1', events: [{ at: 0 }, { at: 5 }] });
    writeFileSync(file, '');
    expect(await readRecording(file)).toEqual({ schemaVersion: 1, runId: null, events: [] });
  });

  it('refuse a recording of a newer schemaVersion with UnsupportedSchemaError, leaving it byte-identical', async () => {
    const file = join(dir.path, 'future.jsonl');
    const newer = RECORDING_SCHEMA_VERSION + 1;
    writeFileSync(file, `{"type":"recording","schemaVersion":${newer},"format":"of the future"}\n{"kind":"unknown today"}\n`);
    const before = readFileSync(file);
    const refusal = readRecording(file);
    await expect(refusal).rejects.toBeInstanceOf(UnsupportedSchemaError);
    await expect(refusal).rejects.toMatchObject({ code: 'unsupported_schema', kind: 'recording', source: file, found: newer, supported: RECORDING_SCHEMA_VERSION });
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it.each(['"1"', '1.5', '0', 'null', '[1]'])('refuse a header whose schemaVersion is %s as corrupt', async (version) => {
    const file = join(dir.path, 'bad.jsonl');
    writeFileSync(file, `{"type":"recording","schemaVersion":${version},"runId":"r1"}\n`);
    const before = readFileSync(file);
    await expect(readRecording(file)).rejects.toMatchObject({ code: 'corrupt_recording', line: 1, reason: `its schemaVersion ${version} is not a whole number from 1 up` });
    expect(readFileSync(file).equals(before)).toBe(true);
  });

  it('name a line of an unknown type by its type, and the result line of `troupe run --json` as what it is', async () => {
    const file = join(dir.path, 'json-output.jsonl');
    writeFileSync(file, `${JSON.stringify(event('r1', 0))}\n{"type":"result","result":"Done."}\n`);
    await expect(readRecording(file)).rejects.toMatchObject({ line: 2, reason: expect.stringMatching(/^it is the result line that `troupe run --json` ends with, not an event: save a run with --trace FILE/) });
    writeFileSync(file, `${JSON.stringify(event('r1', 0))}\n{"type":"bogus","runId":"r1"}\n`);
    await expect(readRecording(file)).rejects.toMatchObject({ line: 2, reason: 'it is not an event (no event has the type "bogus")' });
  });

  // A session store, a package.json: what a mistaken path most often names. Line 1 says so, not zod's list of types.
  it('say of a first line with no type (another JSON file) that it is no troupe trace', async () => {
    const file = join(dir.path, 'sessions.json');
    writeFileSync(file, `${JSON.stringify({ schemaVersion: 1, __agent_sessions__: {} })}\n`);
    await expect(readRecording(file)).rejects.toMatchObject({ line: 1, reason: 'it is neither a recording header nor an event (it has no type): it is not a troupe trace' });
  });

  it('refuse a line that is not JSON (a last line cut short) or not an event, naming the line', async () => {
    const file = join(dir.path, 'cut.jsonl');
    const header = `{"type":"recording","schemaVersion":1,"runId":"r1"}`;
    writeFileSync(file, `${header}\n${JSON.stringify(event('r1', 0))}\n{"type":"agent.sta`);
    await expect(readRecording(file)).rejects.toMatchObject({ line: 3, reason: expect.stringMatching(/^it is not JSON/) });
    writeFileSync(file, `${header}\n{"type":"agent.started","runId":"r1"}\n`);
    const refusal = readRecording(file);
    await expect(refusal).rejects.toBeInstanceOf(CorruptRecordingError);
    await expect(refusal).rejects.toThrow(/line 2: it is not an event/);
  });
});
