// `troupe trace summary FILE`: the timeline and metrics table of a saved trace; a file it cannot read is one line on
// stderr and exit code 2.
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { CommanderError } from 'commander';
import { describe, expect, it } from 'vitest';
import { applyEvent, createMetrics, createRuntime, formatMetrics, formatTimeline, readRecording, RECORDING_SCHEMA_VERSION, summarizeTrace } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { traceCommand } from '../../src/cli/commands/trace.js';
import { hang, leader, resident, simulatedClock, worker } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const dir = eachTestTempDir();

/** Runs the command in this process with its output captured; `exit` is the CommanderError it ended with, if any. */
async function summary(file: string) {
  const out: string[] = [];
  const err: string[] = [];
  const command = traceCommand()
    .exitOverride()
    .configureOutput({ writeOut: (text) => out.push(text), writeErr: (text) => err.push(text) });
  const exit = await command.parseAsync(['summary', file], { from: 'user' }).then(
    () => undefined,
    (error: unknown) => {
      if (error instanceof CommanderError) return error;
      throw error;
    },
  );
  return { out: out.join(''), err: err.join(''), exit };
}

/** A trace of a lead that delegates to an analyst, one failing worker beside them. */
async function writeTrace(): Promise<string> {
  const file = join(dir.path, 'run.trace.jsonl');
  const model = ScriptedModel.perAgent({
    lead: [callTools(assignCall('analyst', 'Count.', { id: 'c1' })), 'Seven modules.'],
    analyst: [{ content: '7.', usage: { inputTokens: 120, outputTokens: 8 } }],
    worker: [new Error('The worker broke.')],
  });
  const runtime = createRuntime({ model, agents: [leader(), worker('analyst'), worker()], clock: simulatedClock(), seed: 5, trace: file, projectAgentDir: false });
  await Promise.all([runtime.run('lead', 'How many modules?'), runtime.run('worker', 'Break.')]);
  await runtime.shutdown();
  return file;
}

describe('troupe trace summary', () => {
  it('prints the run, its timeline and its metrics table', async () => {
    const file = await writeTrace();
    const { out, err, exit } = await summary(file);

    expect(exit).toBeUndefined();
    expect(err).toBe('');
    expect(out).toBe(`${await summarizeTrace(file)}\n`);
    expect(out).toMatch(/^Run \S+: \d+ events over \d+ ms\n\nTimeline\n/);
    expect(out).toMatch(/lead:\S{4} +█+.* ok/);
    expect(out).toMatch(/worker:\S{4} +█*.* error/);
    expect(out).toMatch(/\n {2}analyst:\S+ +completed +120 +8 /); // the analyst indented under the lead, with its tokens
    expect(out).toMatch(/\ntotal +2 ok, 1 failed/);
  });

  it('counts the agents still running or waiting to start in the total of a run that has not ended (a crash cut it)', async () => {
    const file = join(dir.path, 'cut.trace.jsonl');
    // One agent done; one that hangs in a tool call, holding the one slot; one queued behind it.
    const model = new ScriptedModel((request) => (request.agentName === 'stuck' ? callTools(toolCall('hang', {})) : 'Done.'));
    const agents = [worker('stuck', ['hang']), worker('queued'), worker('done')];
    const runtime = createRuntime({ model, agents, tools: [hang], maxParallel: 1, seed: 2, trace: file, projectAgentDir: false });
    await runtime.run('done', 'Finish.');
    runtime.spawn('stuck', 'Hang.');
    runtime.spawn('queued', 'Wait for a slot.');
    await new Promise<void>((resolve) => {
      runtime.events$.subscribe((event) => event.type === 'tool.call' && resolve());
    });

    const { out } = await summary(file); // read as it stands: the trace is written event by event
    await runtime.shutdown();

    expect(out).toMatch(/\nstuck:\S+ +running /);
    expect(out).toMatch(/\nqueued:\S+ +pending /);
    expect(out).toMatch(/\ntotal +1 ok, 0 failed, 1 running, 1 pending /);
  });

  it("is the library's formatTimeline and formatMetrics of the trace's events (summarizeTrace)", async () => {
    const file = await writeTrace();
    const { events } = await readRecording(file);
    const text = await summarizeTrace(file, { width: 30 });

    expect(text).toContain(`\nTimeline\n${formatTimeline(events, { width: 30 })}\n`);
    expect(text.endsWith(`\nMetrics\n${formatMetrics(events.reduce(applyEvent, createMetrics()))}`)).toBe(true);
  });

  it('has a row for each agent, none for code that sent a message or wrote the blackboard (events of "runtime")', async () => {
    const file = join(dir.path, 'talk.trace.jsonl');
    const model = new ScriptedModel((request) => (request.messages.at(-1)?.content.startsWith('[message') ? callTools(toolCall('reply', { content: 'Yes.' })) : 'Ready.'));
    const runtime = createRuntime({ model, agents: [resident('voter', ['reply'])], clock: simulatedClock(), seed: 3, trace: file, projectAgentDir: false });
    const voter = runtime.spawn('voter', 'Wait for questions.');
    await runtime.runUntilIdle();
    runtime.blackboard.set('round', 1);
    const reply = runtime.request('voter', 'Agreed?', { timeoutMs: 1_000 });
    await runtime.runUntilIdle();
    expect((await reply).content).toBe('Yes.');
    runtime.stop(voter.id);
    await runtime.shutdown();

    const { events } = await readRecording(file);
    expect(events.some((event) => event.agentId === 'runtime')).toBe(true);
    const rows = formatTimeline(events, { plans: false }).split('\n').slice(0, -1); // without the scale line
    expect(rows).toEqual([expect.stringMatching(/^voter:\S{4} +█+ +ok$/)]);
  });

  it.each([
    ['a missing file', (file: string) => file, /^troupe trace summary: cannot read .*missing\.jsonl: ENOENT.*Check the path/],
    ['a corrupt trace', (file: string) => (writeFileSync(file, '{"type":"recording","schemaVersion":2,"runId":"r"}\nnot json\n'), file), /^troupe trace summary: The recording .* line 2: it is not JSON/],
    [
      'a trace of a newer schemaVersion',
      (file: string) => (writeFileSync(file, `{"type":"recording","schemaVersion":${RECORDING_SCHEMA_VERSION + 1}}\n`), file),
      new RegExp(`^troupe trace summary: The recording .* has schemaVersion ${RECORDING_SCHEMA_VERSION + 1}, but this version of troupe reads up to ${RECORDING_SCHEMA_VERSION}\\.`),
    ],
    ['an empty file', (file: string) => (writeFileSync(file, ''), file), /^troupe trace summary: The recording .* line 1: it holds no recording header and no event: it is not a troupe trace\.$/m],
    ['a file of one line that is not JSON', (file: string) => (writeFileSync(file, 'hello'), file), /^troupe trace summary: The recording .* it is not a troupe trace\.$/m],
  ])('refuses %s with one line on stderr and exit code 2', async (_, make, message) => {
    const { out, err, exit } = await summary(make(join(dir.path, 'missing.jsonl')));

    expect(exit).toMatchObject({ exitCode: 2, code: 'troupe.trace.unreadable' });
    expect(out).toBe('');
    expect(err).toMatch(message);
    expect(err.endsWith('\n')).toBe(true);
    expect(err.trimEnd().split('\n')).toHaveLength(1);
  });

  it('as a process: exits 0 with the summary on stdout, or 2 with one line on stderr and no stack trace', async () => {
    const file = await writeTrace();
    const ok = await run(process.execPath, ['--import', 'tsx', 'test/support/traceCli.ts', 'summary', file], { cwd: root, timeout: 60_000 });
    expect(ok.stdout).toBe(`${await summarizeTrace(file)}\n`);

    const failed = await run(process.execPath, ['--import', 'tsx', 'test/support/traceCli.ts', 'summary', join(dir.path, 'none.jsonl')], { cwd: root, timeout: 60_000 }).then(
      () => undefined,
      (error: { code?: number; stdout?: string; stderr?: string }) => error,
    );
    expect(failed?.code).toBe(2);
    expect(failed?.stdout).toBe('');
    expect(failed?.stderr?.trimEnd().split('\n')).toHaveLength(1);
    expect(failed?.stderr).not.toMatch(/\n\s+at /);
  });
});
