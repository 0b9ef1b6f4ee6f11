// Each turn of several tool calls is planned in the open: a tool.plan event with its stages and why each waiting call
// waits, before the calls run; formatEvent and formatTimeline show it. A turn of one call has no plan event.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, formatEvent, formatTimeline, readRecording, sleep, TroupeEvent, type RuntimeOptions } from 'troupe';
import { callTools, toolCall, type ScriptStep } from 'troupe/testing';
import { collect, ofType, scriptedPerAgent, simulatedClock } from '../stubs.js';

/** A file tool of a kind, touching `path` (a path, a directory or a glob); each call takes 100 ms. */
function fileTool(name: string, kind: 'read' | 'write') {
  return defineTool({
    name,
    description: `${kind === 'read' ? 'Reads' : 'Writes'} files.`,
    parameters: z.object({ path: z.string() }),
    kind,
    targets: ({ path }) => [path],
    execute: async ({ path }, { clock }) => {
      await sleep(clock, 100);
      return path;
    },
  });
}

async function run(turn: ScriptStep, options: Partial<RuntimeOptions> & { parallel?: boolean } = {}) {
  const { parallel, ...rest } = options;
  const agent = defineAgent({
    name: 'coder',
    description: 'Codes.',
    systemPrompt: 'Code.',
    tools: ['look', 'edit'],
    ...(parallel === undefined ? {} : { enableParallelExecution: parallel }),
  });
  const runtime = createRuntime({ model: scriptedPerAgent({ coder: [turn, 'Done.'] }), agents: [agent], tools: [fileTool('look', 'read'), fileTool('edit', 'write')], clock: simulatedClock(), ...rest });
  const events = collect(runtime.events$);
  const handle = runtime.spawn('coder', 'Change the code.');
  await runtime.runUntilIdle();
  await handle.result;
  await runtime.shutdown();
  return events;
}

const look = (path: string, id: string) => toolCall('look', { path }, id);
const edit = (path: string, id: string) => toolCall('edit', { path }, id);

describe('the tool.plan event', () => {
  it('is made for whoever watches: a handle\'s stream, a record file (nothing in the runtime reads it)', async () => {
    const turn = callTools(look('src/a.ts', 'c1'), edit('src/a.ts', 'c2'));
    const agent = defineAgent({ name: 'coder', description: 'Codes.', systemPrompt: 'Code.', tools: ['look', 'edit'] });
    const tools = [fileTool('look', 'read'), fileTool('edit', 'write')];
    // Only a handle's stream watches (no events$ subscriber).
    const watched = createRuntime({ model: scriptedPerAgent({ coder: [turn, 'Done.'] }), agents: [agent], tools, clock: simulatedClock() });
    const handle = watched.spawn('coder', 'Change the code.');
    const seen = collect(handle.events$);
    await watched.runUntilIdle();
    await watched.shutdown();
    expect(ofType(seen, 'tool.plan')).toMatchObject([{ stages: [['c1'], ['c2']] }]);
    // Only a record file watches.
    const file = join(mkdtempSync(join(tmpdir(), 'troupe-plan-')), 'run.jsonl');
    const recorded = createRuntime({ model: scriptedPerAgent({ coder: [turn, 'Done.'] }), agents: [agent], tools, clock: simulatedClock(), record: file });
    recorded.spawn('coder', 'Change the code.');
    await recorded.runUntilIdle();
    await recorded.shutdown();
    expect(ofType((await readRecording(file)).events, 'tool.plan')).toMatchObject([{ stages: [['c1'], ['c2']] }]);
  });

  it('gives the stages and, for each call that waits, the calls it waits for and the targets that overlap', async () => {
    const events = await run(callTools(look('src/a.ts', 'c1'), edit('src/**/*.ts', 'c2'), edit('docs/x.md', 'c3'), look('src/lib', 'c4')), { maxToolConcurrency: 4 });

    const [plan] = ofType(events, 'tool.plan');
    expect(TroupeEvent.parse(plan)).toEqual(plan); // plain JSON of the event union
    expect(plan).toMatchObject({
      agentId: expect.stringMatching(/^agent:coder:/),
      stages: [['c1', 'c3'], ['c2'], ['c4']],
      waits: [
        { callId: 'c2', after: ['c1'], cause: 'conflict', reason: 'writes src/**/*.ts, which overlaps src/a.ts that c1 reads' },
        { callId: 'c4', after: ['c2'], cause: 'conflict', reason: 'reads src/lib, which overlaps src/**/*.ts that c2 writes' },
      ],
      maxConcurrency: 4,
    });
    // Announced before the calls run.
    expect(events.indexOf(plan!)).toBeLessThan(events.findIndex((event) => event.type === 'tool.call'));
  });

  it('says which calls wait for a free slot under the cap', async () => {
    const events = await run(callTools(look('a', 'c1'), look('b', 'c2'), look('c', 'c3'), look('d', 'c4')), { maxToolConcurrency: 2 });
    const [plan] = ofType(events, 'tool.plan');
    expect(plan?.stages).toEqual([['c1', 'c2', 'c3', 'c4']]);
    expect(plan?.waits).toEqual([
      { callId: 'c3', after: ['c1', 'c2'], cause: 'concurrency_cap', reason: 'at most 2 calls run at a time' },
      { callId: 'c4', after: ['c1', 'c2'], cause: 'concurrency_cap', reason: 'at most 2 calls run at a time' },
    ]);
  });

  it('names the call before each one when the agent runs its calls one at a time', async () => {
    const events = await run(callTools(look('a', 'c1'), look('b', 'c2'), edit('c', 'c3')), { parallel: false });
    const [plan] = ofType(events, 'tool.plan');
    expect(plan).toMatchObject({ stages: [['c1'], ['c2'], ['c3']], maxConcurrency: 1 });
    expect(plan?.waits.map((wait) => [wait.callId, wait.after, wait.cause])).toEqual([
      ['c2', ['c1'], 'sequential'],
      ['c3', ['c2'], 'sequential'],
    ]);
  });

  it('says why a call without targets waits', async () => {
    const untargeted = defineTool({ name: 'shell', description: 'Runs a command.', parameters: z.object({}), kind: 'other', execute: () => 'ok' });
    const agent = defineAgent({ name: 'coder', description: 'Codes.', systemPrompt: 'Code.', tools: ['look', 'shell'] });
    const runtime = createRuntime({
      model: scriptedPerAgent({ coder: [callTools(look('src/a.ts', 'c1'), toolCall('shell', {}, 'c2')), 'Done.'] }),
      agents: [agent],
      tools: [fileTool('look', 'read'), untargeted],
    });
    const events = collect(runtime.events$);
    await runtime.run('coder', 'Go.');
    await runtime.shutdown();
    expect(ofType(events, 'tool.plan')[0]?.waits).toEqual([
      { callId: 'c2', after: ['c1'], cause: 'conflict', reason: 'may change anything (it names no targets), and c1 reads src/a.ts' },
    ]);
  });

  it('is not announced for a turn of one call, nor for calls refused before they run', async () => {
    expect(ofType(await run(callTools(edit('a', 'c1'))), 'tool.plan')).toEqual([]);
    expect(ofType(await run(callTools(edit('a', 'c1'), toolCall('nope', {}, 'c2'))), 'tool.plan')).toEqual([]);
  });
});

describe('the views of a plan', () => {
  it('formatEvent writes one line: how many calls in how many stages, and the first wait', async () => {
    const events = await run(callTools(look('src/a.ts', 'c1'), edit('src/a.ts', 'c2')));
    const [plan] = ofType(events, 'tool.plan');
    expect(formatEvent(plan!)).toMatch(/coder:\w{4}\s+plans 2 calls in 2 stages; 1 wait \(c2 writes src\/a\.ts that c1 reads\)$/);
  });

  it('formatTimeline lists each planned turn below the bars: its stages with the tools, and why calls wait', async () => {
    const events = await run(callTools(look('src/a.ts', 'c1'), edit('src/**/*.ts', 'c2'), edit('docs/x.md', 'c3')));
    const text = formatTimeline(events as TroupeEvent[], { width: 20 });
    const lines = text.split('\n');
    const from = lines.indexOf('plans');
    expect(lines.slice(from + 1)).toEqual([
      expect.stringMatching(/^coder:\w{4} at 0 ms: 3 calls in 2 stages, at most 3 at a time$/),
      '  stage 1  c1 look, c3 edit',
      '  stage 2  c2 edit',
      '  c2 waits for c1: writes src/**/*.ts, which overlaps src/a.ts that c1 reads',
    ]);
    expect(formatTimeline(events, { plans: false })).not.toContain('plans');
  });
});
