// A trace: the recording format written event by event, so a crash loses at most the last event; secrets redacted.
import { execFile } from 'node:child_process';
import { appendFileSync, existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { ConfigurationError, CorruptRecordingError, createRuntime, JsonFileMemory, readRecording, RECORDING_SCHEMA_VERSION, REDACTED, summarizeTrace, type TroupeEvent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { simulatedClock, worker } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = eachTestTempDir();

/** Runs test/support/traceWorker.ts; resolves with how it ended, whether it exited or was killed. */
async function traceWorker(args: string[], env: Record<string, string> = {}) {
  const files = { trace: join(dir.path, 'trace.jsonl'), store: join(dir.path, 'store.json'), events: join(dir.path, 'events.json') };
  const argv = ['--import', 'tsx', 'test/support/traceWorker.ts', files.trace, files.store, files.events, ...args];
  const ended = await run(process.execPath, argv, { cwd: root, timeout: 60_000, env: { ...process.env, ...env } }).then(
    ({ stdout }) => ({ signal: null, stdout }),
    (error: { signal?: string; stdout?: string; stderr?: string }) => {
      if (error.signal !== 'SIGKILL') throw error;
      return { signal: error.signal, stdout: error.stdout ?? '' };
    },
  );
  return { ...ended, files };
}

describe('a trace', () => {
  it('holds each event before any subscriber hears of it, and reads back as the recording of the run', async () => {
    const file = join(dir.path, 'trace.jsonl');
    const record = join(dir.path, 'record.jsonl');
    const runtime = createRuntime({ model: new ScriptedModel(['one', 'two']), agents: [worker()], clock: simulatedClock(), seed: 3, trace: file, record, projectAgentDir: false });
    const seen: TroupeEvent[] = [];
    const linesWhenSeen: number[] = [];
    runtime.events$.subscribe((event) => {
      seen.push(event);
      linesWhenSeen.push(readFileSync(file, 'utf8').split('\n').length - 1);
    });
    await runtime.run('worker', 'First.');
    await runtime.run('worker', 'Second.');
    await runtime.shutdown();

    // The header, then every event up to this one: written to the file, not held in a buffer.
    expect(linesWhenSeen).toEqual(seen.map((_, index) => index + 2));
    const recording = await readRecording(file);
    expect(recording).toEqual({ schemaVersion: RECORDING_SCHEMA_VERSION, runId: runtime.runId, events: JSON.parse(JSON.stringify(seen)) });
    // The same format as `record`: the two files of one run are the same bytes.
    expect(readFileSync(file, 'utf8')).toBe(readFileSync(record, 'utf8'));
  });

  it('keeps the header and every complete event line when its process is killed with SIGKILL mid-run', async () => {
    const killAfter = 57;
    const { signal, files } = await traceWorker([String(killAfter)], { TROUPE_TEST_API_KEY: 'troupe-test-key-in-the-child' });

    expect(signal).toBe('SIGKILL');
    const text = readFileSync(files.trace, 'utf8');
    expect(text.endsWith('\n')).toBe(true); // no torn line: each line went out in one write
    const recording = await readRecording(files.trace);
    expect(recording.schemaVersion).toBe(RECORDING_SCHEMA_VERSION);
    expect(recording.runId).not.toBeNull();
    // The trace subscribes first, so the event that triggered the kill is in the file as well (at least N-1 promised).
    expect(recording.events.length).toBeGreaterThanOrEqual(killAfter);
    expect(recording.events.length).toBeLessThan(killAfter + 5);
    expect(text).not.toContain('troupe-test-key-in-the-child');
  });

  it('never holds a secret from an environment variable; nor do events$, a failed result and the stored session', async () => {
    const key = 'troupe-test-key-in-the-child';
    const { signal, stdout, files } = await traceWorker([], { TROUPE_TEST_API_KEY: key });

    expect(signal).toBeNull();
    const output = JSON.parse(stdout) as { events: number; failed: { status: string; error: { message: string } } };
    expect(output.failed).toMatchObject({
      status: 'failed',
      error: { message: `The model call of agent "caller" to model "scripted" failed: upstream refused the key ${REDACTED}` },
    });
    const recording = await readRecording(files.trace);
    expect(recording.events).toHaveLength(output.events);
    expect(recording.events.filter((event) => event.type === 'agent.completed')).toHaveLength(20);
    for (const written of [files.trace, files.events, files.store]) {
      const bytes = readFileSync(written, 'utf8');
      expect(bytes, written).not.toContain(key);
      expect(bytes, written).toContain(REDACTED);
    }
    expect(stdout).not.toContain(key);
  });

  it('reads back without a last line cut short by a crash, when asked to; a torn line elsewhere is still refused', async () => {
    const file = join(dir.path, 'torn.jsonl');
    const runtime = createRuntime({ model: new ScriptedModel(['one']), agents: [worker()], clock: simulatedClock(), seed: 1, trace: file, projectAgentDir: false });
    await runtime.run('worker', 'Only.');
    await runtime.shutdown();
    const whole = await readRecording(file);
    appendFileSync(file, '{"type":"agent.started","runId":"r');

    await expect(readRecording(file)).rejects.toBeInstanceOf(CorruptRecordingError);
    const lineCount = readFileSync(file, 'utf8').split('\n').length;
    expect(await readRecording(file, { dropTornLine: true })).toEqual({ ...whole, tornLine: lineCount });
    expect(whole.tornLine).toBeUndefined();
    // The summary says the run was cut short, rather than show a run that ended with agents running.
    expect((await summarizeTrace(file)).split('\n')[0]).toMatch(new RegExp(`^Run \\S+: \\d+ events over \\d+ ms \\(line ${lineCount}, its last, was cut short, as by a crash, and is left out\\)$`));
    const lines = readFileSync(file, 'utf8').split('\n');
    writeFileSync(file, [...lines.slice(0, 2), '{"type":"agent.st', ...lines.slice(2)].join('\n'));
    await expect(readRecording(file, { dropTornLine: true })).rejects.toMatchObject({ code: 'corrupt_recording', line: 3 });
  });

  it('fails createRuntime at once, with a ConfigurationError, when its file cannot be made', () => {
    const make = (trace: string) => () => createRuntime({ model: new ScriptedModel([]), trace, projectAgentDir: false });
    expect(make(join(dir.path, 'missing', 'trace.jsonl'))).toThrow(ConfigurationError);
    expect(make(join(dir.path, 'missing', 'trace.jsonl'))).toThrow(/^The trace file .*trace\.jsonl cannot be written: its folder .*missing does not exist or is not a folder\.$/);
    expect(make(dir.path)).toThrow(/cannot be written: it is a folder/);
  });

  it('refuses to write a trace or a recording over a file that holds something else, and leaves it as it was', async () => {
    const store = join(dir.path, 'store.json');
    const stored = '{"schemaVersion":3,"__agent_sessions__":{"agent:a:1":{"task":"kept"}}}\n';
    writeFileSync(store, stored);
    for (const option of ['trace', 'record'] as const) {
      const make = () => createRuntime({ model: new ScriptedModel([]), [option]: store, projectAgentDir: false });
      expect(make).toThrow(ConfigurationError);
      expect(make).toThrow(`The ${option} file ${store} holds something else than a troupe recording; it was left as it is.`);
    }
    expect(readFileSync(store, 'utf8')).toBe(stored);
    // An earlier trace of a run, and an empty file, are written over.
    const earlier = join(dir.path, 'earlier.jsonl');
    const runtime = createRuntime({ model: new ScriptedModel(['one']), agents: [worker()], trace: earlier, projectAgentDir: false });
    await runtime.run('worker', 'First.');
    await runtime.shutdown();
    const again = createRuntime({ model: new ScriptedModel(['two']), agents: [worker()], trace: earlier, projectAgentDir: false });
    await again.shutdown();
    expect((await readRecording(earlier)).runId).toBe(again.runId);
    writeFileSync(join(dir.path, 'empty.jsonl'), '');
    await createRuntime({ model: new ScriptedModel([]), record: join(dir.path, 'empty.jsonl'), projectAgentDir: false }).shutdown();
  });

  it("refuses a trace or a recording on the store's file not made yet, and a trace and a recording on one file", () => {
    // Written to one file, the events would make the store unreadable and its sessions lost at the first write.
    const file = join(dir.path, 'run.json');
    for (const option of ['trace', 'record'] as const) {
      const make = () => createRuntime({ model: new ScriptedModel([]), store: new JsonFileMemory(file), [option]: file, projectAgentDir: false });
      expect(make).toThrow(ConfigurationError);
      expect(make).toThrow(`The ${option} file ${file} is the store's file; give the ${option} a file of its own.`);
    }
    const both = () => createRuntime({ model: new ScriptedModel([]), trace: file, record: file, projectAgentDir: false });
    expect(both).toThrow(`The trace and the record file are one file (${file}); give each a file of its own.`);
    expect(existsSync(file)).toBe(false);
  });
});
