// The live tree of the troupe command, on strings: events folded into a model, drawn for a screen, and plain lines for
// output that is not a terminal.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, defineTool, type ModelRequest, type TroupeEvent } from 'troupe';
import { advanceUntilSettled, assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { z } from 'zod';
import type { Observable } from 'rxjs';
import { applyEvent, createMetrics } from '../../src/events/metrics.js';
import { LiveTree } from '../../src/views/LiveTree.js';
import { formatDuration, statusLine } from '../../src/views/liveFormat.js';
import { plainEventLine } from '../../src/views/plainEventLine.js';
import { renderLiveTree } from '../../src/views/renderLiveTree.js';
import { scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

/** Events as the runtime stamps them, for one run. */
const header = (agentId: string, at: number, parentId: string | null = null, toolCallId: string | null = null) => ({
  runId: 'run',
  agentId,
  parentId,
  toolCallId,
  at,
});
const spawned = (id: string, name: string, at: number, parentId: string | null = null, toolCallId: string | null = null, description?: string): TroupeEvent => ({
  type: 'agent.spawned',
  ...header(id, at, parentId, toolCallId),
  name,
  depth: parentId ? 1 : 0,
  task: `The task of ${name}.`,
  ...(description ? { description } : {}),
});
const started = (id: string, at: number): TroupeEvent => ({ type: 'agent.started', ...header(id, at), name: id.split(':')[1]! });
const called = (id: string, callId: string, tool: string, args: object, at: number): TroupeEvent => ({
  type: 'tool.call',
  ...header(id, at),
  callId,
  tool,
  arguments: JSON.stringify(args),
});
const resulted = (id: string, callId: string, tool: string, durationMs: number, at: number, error?: string): TroupeEvent => ({
  type: 'tool.result',
  ...header(id, at),
  callId,
  tool,
  status: error === undefined ? 'ok' : 'error',
  durationMs,
  ...(error === undefined ? {} : { error }),
});
const replied = (id: string, inputTokens: number, outputTokens: number, costUsd: number, at: number): TroupeEvent => ({
  type: 'model.response',
  ...header(id, at),
  turn: 1,
  model: 'gpt-4o-mini',
  usage: { inputTokens, outputTokens },
  costUsd,
  durationMs: 100,
  toolCalls: 0,
});
const completed = (id: string, output: string, at: number): TroupeEvent => ({
  type: 'agent.completed',
  ...header(id, at),
  name: id.split(':')[1]!,
  output,
  turns: 2,
});

/** A live tree fed by a runtime's events, and the plain event lines it prints, as `troupe run --plain` does. */
function plainLinesOf(runtime: { events$: Observable<TroupeEvent> }): { tree: LiveTree; lines: string[] } {
  const tree = new LiveTree();
  const lines: string[] = [];
  runtime.events$.subscribe((event) => {
    const node = tree.apply(event);
    const line = node && plainEventLine(event, node);
    if (line !== undefined) lines.push(line);
  });
  return { tree, lines };
}

function fold(events: readonly TroupeEvent[]): LiveTree {
  const tree = new LiveTree();
  for (const event of events) tree.apply(event);
  return tree;
}

/** A lead that delegated an audit; the auditor ran two tools, one failing, and is still working. */
const audit: TroupeEvent[] = [
  spawned('agent:lead:1', 'lead', 0),
  started('agent:lead:1', 0),
  called('agent:lead:1', 'c1', 'assign_task', { agent: 'auditor' }, 300),
  spawned('agent:auditor:2', 'auditor', 300, 'agent:lead:1', 'c1', 'Audit src for eval'),
  started('agent:auditor:2', 500),
  replied('agent:auditor:2', 300, 150, 0.002, 900),
  called('agent:auditor:2', 'g1', 'grep', { text: 'eval(' }, 900),
  called('agent:auditor:2', 'r1', 'read_file', { path: 'x.ts' }, 900),
  resulted('agent:auditor:2', 'g1', 'grep', 3, 903),
  resulted('agent:auditor:2', 'r1', 'read_file', 12, 912, 'No file x.ts.'),
];

describe('the live tree', () => {
  it('draws each agent under its parent, in place of the tool call that started it, with ✓ or ✗, durations and a status line', () => {
    const frame = renderLiveTree(fold(audit), { width: 120, height: 40, now: 2_500 });

    expect(frame).toBe(
      [
        '► lead (The task of lead.)',
        '  ► auditor (Audit src for eval)',
        '    ✓ grep {"text":"eval("} 3ms',
        '    ✗ read_file {"path":"x.ts"} 12ms: No file x.ts.',
        '    Working… 2.0s • 2 calls • 450 tokens • $0.002',
        '  Working… 2.5s • 1 call • 0 tokens • $0',
        '2 agents • 2 running • 0 done • 3 calls • 450 tokens • $0.002 • 2.5s',
      ].join('\n'),
    );
  });

  it('shows a tool call that is still running, and a finished agent with the first line of its answer and its final figures', () => {
    const events = [
      ...audit,
      called('agent:auditor:2', 'g2', 'grep', { text: 'exec(' }, 1_000),
      resulted('agent:auditor:2', 'g2', 'grep', 1_500, 2_500),
      completed('agent:auditor:2', 'One finding: eval in x.ts.\nDetails follow.', 3_000),
      called('agent:lead:1', 'c2', 'write_file', { path: 'report.md' }, 3_100),
    ];

    const frame = renderLiveTree(fold(events), { width: 120, height: 40, now: 4_000 });

    expect(frame.split('\n')).toEqual([
      '► lead (The task of lead.)',
      '  ⋯ write_file {"path":"report.md"}',
      '  ► auditor (Audit src for eval)',
      '    ✓ grep {"text":"eval("} 3ms',
      '    ✗ read_file {"path":"x.ts"} 12ms: No file x.ts.',
      '    ✓ grep {"text":"exec("} 1.5s',
      '    ⎿ One finding: eval in x.ts.',
      '    Done 2.5s • 3 calls • 450 tokens • $0.002',
      '  Working… 4.0s • 2 calls • 0 tokens • $0',
      '2 agents • 1 running • 1 done • 5 calls • 450 tokens • $0.002 • 4.0s',
    ]);
  });

  it('writes the status line as time • calls • tokens • cost, for each state', () => {
    const tree = fold([...audit, replied('agent:auditor:2', 0, 0, 0, 1_000)]);
    const auditor = tree.get('agent:auditor:2')!;
    expect(statusLine(auditor, 3_000)).toBe('Working… 2.5s • 2 calls • 450 tokens • $0.002');
    tree.apply({ type: 'agent.failed', ...header('agent:auditor:2', 70_000), name: 'auditor', reason: 'max_turns', error: { code: 'max_turns', message: 'Out of turns.', fault: 'user' }, turns: 10 });
    expect(statusLine(auditor, 99_000)).toBe('Failed (max_turns) 1m09s • 2 calls • 450 tokens • $0.002');
    expect(statusLine(fold([spawned('agent:w:1', 'w', 0)]).get('agent:w:1')!, 5)).toBe('Queued…');
  });

  it('writes a time just under a second or a minute in the next unit, as it rounds', () => {
    expect([0, 999.4, 999.6, 1_049, 59_949, 59_960, 60_000, 65_400, 119_999].map(formatDuration)).toEqual([
      '0ms',
      '999ms',
      '1.0s',
      '1.0s',
      '59.9s',
      '1m00s',
      '1m00s',
      '1m05s',
      '1m59s',
    ]);
  });

  it("shows a restarted or resumed agent's time over all its runs, as its figures (and the metrics) add them up", () => {
    const failed = (at: number): TroupeEvent => ({
      type: 'agent.failed',
      ...header('agent:w:1', at),
      name: 'w',
      reason: 'error',
      error: { code: 'model_call_failed', message: 'Broken.', fault: 'model' },
      turns: 1,
    });
    // Ran 0–1000 and failed; started again at 1200 (restarted) and answered at 1700; resumed at 5000, done at 5300.
    const tree = fold([
      spawned('agent:w:1', 'w', 0),
      started('agent:w:1', 0),
      replied('agent:w:1', 100, 100, 0.1, 1_000),
      failed(1_000),
      spawned('agent:w:1', 'w', 1_200),
      started('agent:w:1', 1_200),
      replied('agent:w:1', 100, 100, 0.2, 1_700),
      completed('agent:w:1', 'Done.', 1_700),
    ]);
    const node = tree.get('agent:w:1')!;
    expect(statusLine(node, 9_000)).toBe('Done 1.5s • 0 calls • 400 tokens • $0.300');
    expect(node.figures.costUsd).toBe(0.3);
    tree.apply(spawned('agent:w:1', 'w', 5_000));
    tree.apply(started('agent:w:1', 5_000));
    expect(statusLine(node, 5_100)).toBe('Working… 1.6s • 0 calls • 400 tokens • $0.300');
    const done = completed('agent:w:1', 'Done again.', 5_300);
    tree.apply(done);
    expect(statusLine(node, 9_000)).toBe('Done 1.8s • 0 calls • 400 tokens • $0.300');
    expect(plainEventLine(done, node)).toBe('✓ w done 1.8s • 0 calls • 400 tokens • $0.300 ⎿ Done again.');
  });

  it('counts no running time for an agent cancelled while it waited to start, as the metrics do', () => {
    // Spawned at 0, queued behind a full maxParallel, cancelled at 4000 before it ever started.
    const cancelled: TroupeEvent = {
      type: 'agent.failed',
      ...header('agent:w:1', 4_000),
      name: 'w',
      reason: 'cancelled',
      error: { code: 'cancelled', message: 'Cancelled.', fault: 'user' },
      turns: 0,
    };
    const events = [spawned('agent:w:1', 'w', 0), cancelled];
    const tree = fold(events);
    const node = tree.get('agent:w:1')!;
    const metrics = events.reduce(applyEvent, createMetrics());
    expect(metrics.agents['agent:w:1']!.own.durationMs).toBe(0);
    expect(statusLine(node, 9_000)).toBe('Failed (cancelled) 0ms • 0 calls • 0 tokens • $0');
    expect(plainEventLine(cancelled, node)).toBe('✗ w failed (cancelled) 0ms • 0 calls • 0 tokens • $0 ⎿ Cancelled.');
    // Resumed later and cancelled again before it started: only the runs it had count.
    const ran = fold([spawned('agent:w:2', 'w', 0), started('agent:w:2', 0), completed('agent:w:2', 'Done.', 700), spawned('agent:w:2', 'w', 1_000)]);
    ran.apply({ ...cancelled, agentId: 'agent:w:2', at: 3_000 });
    expect(statusLine(ran.get('agent:w:2')!, 9_000)).toBe('Failed (cancelled) 700ms • 0 calls • 0 tokens • $0');
  });

  it('moves an agent resumed by another caller under that caller, in place of its call, as the metrics do', async () => {
    const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Delegate.', tools: ['assign_task'] });
    const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Help.' });
    let helperId = '';
    // The first lead hands a task to a helper; the second lead, a run of its own, resumes that helper.
    const model = new ScriptedModel((request) => {
      if (request.agentName === 'helper') return 'Helped.';
      const second = request.messages.some((message) => message.role === 'user' && message.content === 'Go on.');
      if (request.messages.at(-1)?.role === 'tool') return second ? 'Went on.' : 'Started.';
      return callTools(second ? assignCall('helper', 'Go on.', { id: 'again', resume: helperId }) : assignCall('helper', 'Start.', { id: 'first' }));
    });
    const runtime = createRuntime({ model, agents: [lead, helper], clock: simulatedClock(), seed: 1, projectAgentDir: false });
    const tree = new LiveTree();
    runtime.events$.subscribe((event) => {
      if (event.type === 'agent.spawned' && event.name === 'helper') helperId = event.agentId;
      tree.apply(event);
    });

    const first = await runtime.run('lead', 'Start.');
    const second = await runtime.run('lead', 'Go on.');
    await runtime.shutdown();

    const node = tree.get(helperId)!;
    expect(runtime.metrics().agents[helperId]).toMatchObject({ parentId: second.id, depth: 1 });
    expect(node).toMatchObject({ parentId: second.id, toolCallId: 'again', depth: 1 });
    expect(tree.get(first.id)!.children).toEqual([]);
    expect(tree.get(second.id)!.children).toEqual([node]);
    const frame = renderLiveTree(tree, { width: 120, height: 40, now: 0 }).split('\n');
    expect(frame.slice(0, 6)).toEqual([
      '► lead (Start.)',
      '  ✓ assign_task {"description":"work for helper","agent":"helpe… 0ms', // the first lead's call, the helper gone
      '  ⎿ Started.',
      '  Done 0ms • 1 call • 55 tokens • $0',
      '► lead (Go on.)',
      '  ► helper (work for helper)',
    ]);
  });

  it('says what a running agent works on: the item of its todo list in progress, while there is one', () => {
    const todo = (at: number, statuses: ('pending' | 'in_progress' | 'done')[]): TroupeEvent => ({
      type: 'todo.updated',
      ...header('agent:coder:1', at),
      callId: `w${at}`,
      items: statuses.map((status, index) => ({ id: `i${index}`, content: `Step ${index + 1}`, status })),
    });
    const nodes = fold([spawned('agent:coder:1', 'coder', 0), started('agent:coder:1', 0), todo(100, ['done', 'in_progress'])]);
    const coder = nodes.get('agent:coder:1')!;
    expect(statusLine(coder, 1_000)).toBe('Working: Step 2… 1.0s • 0 calls • 0 tokens • $0');
    const done = fold([spawned('agent:coder:1', 'coder', 0), started('agent:coder:1', 0), todo(100, ['in_progress']), todo(200, ['done'])]);
    expect(statusLine(done.get('agent:coder:1')!, 1_000)).toMatch(/^Working… 1\.0s/);
  });

  it('groups finished agents into one summary line per parent when 1,000 agents do not fit the screen', () => {
    const events: TroupeEvent[] = [spawned('agent:lead:0', 'lead', 0), started('agent:lead:0', 0)];
    for (let index = 1; index <= 1_000; index += 1) {
      const id = `agent:worker:${index}`;
      events.push(spawned(id, 'worker', index, 'agent:lead:0', `call${index}`), started(id, index));
      events.push(called(id, `t${index}`, 'fetch', { page: index }, index + 1), resulted(id, `t${index}`, 'fetch', 5, index + 6));
      events.push(replied(id, 100, 50, 2 ** -10, index + 7)); // a cost that sums exactly
      if (index <= 997) events.push(index % 100 === 0 ? failedEvent(id, index + 8) : completed(id, `Page ${index} read.`, index + 8));
    }

    const frame = renderLiveTree(fold(events), { width: 100, height: 30, now: 2_000 });
    const lines = frame.split('\n');

    expect(lines.length).toBeLessThanOrEqual(30);
    expect(lines[0]).toBe('► lead (The task of lead.)');
    expect(lines[1]).toBe('  ✓ 988 done, ✗ 9 failed • 997 calls • 149,550 tokens • $0.974');
    expect(lines.filter((line) => line.startsWith('  ► worker'))).toHaveLength(3); // the three still running, in full
    expect(lines).toContain('    ✓ fetch {"page":998} 5ms');
    expect(lines.at(-1)).toBe('1,001 agents • 4 running • 988 done • 9 failed • 1,000 calls • 150,000 tokens • $0.977 • 2.0s');
  });

  it('draws agents on one line each, then cuts the frame, when even the running ones do not fit', () => {
    const events: TroupeEvent[] = [];
    for (let index = 1; index <= 1_000; index += 1) events.push(spawned(`agent:w:${index}`, 'w', 0), started(`agent:w:${index}`, 0));

    const lines = renderLiveTree(fold(events), { width: 80, height: 24, now: 1_000 }).split('\n');

    expect(lines).toHaveLength(24);
    expect(lines[0]).toBe('► w (The task of w.) · Working… 1.0s • 0 calls • 0 tokens • $0');
    expect(lines[22]).toBe('… 978 more not shown');
    expect(lines[23]).toBe('1,000 agents • 1,000 running • 0 done • 0 calls • 0 tokens • $0 • 1.0s');
  });

  it('cuts every line to the width of the screen', () => {
    const lines = renderLiveTree(fold(audit), { width: 30, height: 40, now: 2_500 }).split('\n');
    expect(lines.every((line) => line.length <= 29)).toBe(true);
    expect(lines[0]).toBe('► lead (The task of lead.)');
    expect(lines[2]).toBe('    ✓ grep {"text":"eval("} …');
  });

  it('cuts lines of Chinese, Japanese or Korean text and emoji to the columns they take, never inside a character', () => {
    // A wide character takes two columns of a terminal; an emoji is two UTF-16 units, and half of one prints as �.
    const tree = fold([
      spawned('agent:lead:1', 'lead', 0, null, null, '東京の週末の天気と予算を調べてください'),
      started('agent:lead:1', 0),
      called('agent:lead:1', 'c1', 'note', { text: '☔☔☔☔☔☔☔☔☔☔☔☔☔☔☔☔☔☔' }, 1),
      resulted('agent:lead:1', 'c1', 'note', 2, 3),
      completed('agent:lead:1', '晴れ☀️のち雨🌧、予算は四万円です。傘を忘れずに持って行ってください。', 4),
    ]);
    const lines = renderLiveTree(tree, { width: 30, height: 40, now: 5 }).split('\n');
    const columns = (line: string) => [...line].reduce((sum, character) => sum + (/[\u3000-\u9fff\uff00-\uff60]|\p{Emoji_Presentation}/u.test(character) ? 2 : /\p{Mn}|\ufe0f/u.test(character) ? 0 : 1), 0);
    for (const line of lines) {
      expect(columns(line), line).toBeLessThanOrEqual(29);
      expect(line).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/); // no half of a character
    }
    expect(lines[0]).toBe('► lead (東京の週末の天気と予…');
    expect(lines[1]).toBe('  ✓ note {"text":"☔☔☔☔☔…');
  });

  it('ends both calls of a turn that share an id, and cuts short only a call still running when its agent ends', () => {
    const tree = fold([
      spawned('agent:w:1', 'w', 0),
      started('agent:w:1', 0),
      called('agent:w:1', 'call_echo', 'echo', { text: 'one' }, 1),
      called('agent:w:1', 'call_echo', 'echo', { text: 'two' }, 1),
      called('agent:w:1', 'h1', 'hang', {}, 1),
      resulted('agent:w:1', 'call_echo', 'echo', 2, 3),
      resulted('agent:w:1', 'call_echo', 'echo', 4, 5),
      { type: 'agent.failed', ...header('agent:w:1', 9), name: 'w', reason: 'cancelled', error: { code: 'cancelled', message: 'Cancelled.', fault: 'user' }, turns: 1 } as TroupeEvent,
    ]);
    expect(tree.get('agent:w:1')!.tools.map(({ args, state, error }) => [args, state, error])).toEqual([
      ['{"text":"one"}', 'ok', undefined],
      ['{"text":"two"}', 'ok', undefined],
      ['{}', 'error', 'cut short: the agent ended'],
    ]);
    expect(tree.get('agent:w:1')!.figures).toMatchObject({ toolCalls: 3, toolErrors: 0 });
  });

  it('cuts short the calls it no longer keeps when their agent ends, counting none as an error', () => {
    const events: TroupeEvent[] = [spawned('agent:w:1', 'w', 0), started('agent:w:1', 0)];
    for (let index = 1; index <= 8; index += 1) events.push(called('agent:w:1', `c${index}`, 'tick', {}, index));
    const tree = fold([...events, resulted('agent:w:1', 'c1', 'tick', 9, 9, 'Broke.')]); // c1 and c2 are no longer kept
    tree.apply({ type: 'agent.failed', ...header('agent:w:1', 20), name: 'w', reason: 'cancelled', error: { code: 'cancelled', message: 'Cancelled.', fault: 'user' }, turns: 1 });

    expect(tree.get('agent:w:1')!.lastEnded).toMatchObject({ callId: 'c1', state: 'error', error: 'Broke.' });
    expect(tree.apply(resulted('agent:w:1', 'c2', 'tick', 30, 30, 'Too late.'))).toBeUndefined(); // cut short already
    expect(tree.get('agent:w:1')!.tools.every((call) => call.error === 'cut short: the agent ended')).toBe(true);
    expect(tree.totals).toMatchObject({ toolCalls: 8, toolErrors: 1 });
  });

  it('keeps only the latest tool calls of an agent, and counts them all', () => {
    const events: TroupeEvent[] = [spawned('agent:w:1', 'w', 0), started('agent:w:1', 0)];
    for (let index = 0; index < 500; index += 1) events.push(called('agent:w:1', `c${index}`, 'tick', {}, index), resulted('agent:w:1', `c${index}`, 'tick', 1, index));
    const tree = fold(events);
    expect(tree.get('agent:w:1')!.tools.map((call) => call.callId)).toEqual(['c494', 'c495', 'c496', 'c497', 'c498', 'c499']);
    expect(tree.get('agent:w:1')!.figures.toolCalls).toBe(500);
  });
});

describe('plain lines', () => {
  it('give one line per event worth reading, naming the agent, from a real run', async () => {
    const lookup = defineTool({ name: 'lookup', description: 'Looks up.', parameters: z.object({ q: z.string() }), kind: 'read', execute: ({ q }) => `found ${q}` });
    const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Delegate.', tools: ['assign_task'] });
    const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Look up.', tools: [lookup] });
    // Each helper looks its own letter up, then answers.
    const letter = (request: ModelRequest) => /Find (\w)\./.exec(request.messages.find((m) => m.role === 'user')?.content ?? '')?.[1] ?? '?';
    const helperStep = (request: ModelRequest) =>
      request.messages.at(-1)?.role === 'tool' ? `${letter(request)} is here.` : callTools(toolCall('lookup', { q: letter(request) }));
    const model = scriptedPerAgent(
      {
        lead: [callTools(assignCall('helper', 'Find a.', { id: 'a', description: 'Find a' }), assignCall('helper', 'Find b.', { id: 'b', description: 'Find b' })), 'Both found.'],
        helper: [helperStep, helperStep], // each helper gets its own list
      },
      { latencyMs: 100 },
    );
    const runtime = createRuntime({ model, agents: [lead, helper], clock: simulatedClock(), seed: 1, projectAgentDir: false });
    const { lines } = plainLinesOf(runtime);

    const result = runtime.run('lead', 'Find a and b.');
    await runtime.runUntilIdle();
    expect((await result).status).toBe('completed');
    await runtime.shutdown();

    expect(lines).toEqual([
      '► lead (Find a and b.)',
      '  ► helper (Find a)',
      '  ► helper#2 (Find b)',
      '    helper ✓ lookup {"q":"a"} 0ms',
      '    helper#2 ✓ lookup {"q":"b"} 0ms',
      '  ✓ helper done 200ms • 1 call • 17 tokens • $0 ⎿ a is here.',
      '  ✓ helper#2 done 200ms • 1 call • 17 tokens • $0 ⎿ b is here.',
      '✓ lead done 400ms • 2 calls • 101 tokens • $0 ⎿ Both found.',
    ]);
  });

  it('name each ended call with its own arguments when turns reuse a call id (as scripted models and some servers do)', () => {
    const tree = new LiveTree();
    const events = [
      spawned('agent:w:1', 'w', 0),
      started('agent:w:1', 0),
      called('agent:w:1', 'call_reply', 'reply', { content: 'No.' }, 1),
      resulted('agent:w:1', 'call_reply', 'reply', 0, 1),
      called('agent:w:1', 'call_reply', 'reply', { content: 'Deal.' }, 5),
      resulted('agent:w:1', 'call_reply', 'reply', 0, 5),
    ];
    const lines = events.map((event) => plainEventLine(event, tree.apply(event)!)).filter((line) => line !== undefined);
    expect(lines).toEqual(['► w (The task of w.)', '  w ✓ reply {"content":"No."} 0ms', '  w ✓ reply {"content":"Deal."} 0ms']);
  });

  it('name every call of a turn wider than the calls a node keeps, and count its errors, as the metrics do', async () => {
    // Ten pages fetched at once, page n in n × 100 ms; odd pages are missing. The first four end after six more began.
    const fetchPage = defineTool({
      name: 'fetch',
      description: 'Fetches a page.',
      parameters: z.object({ page: z.number() }),
      kind: 'read',
      execute: ({ page }, { clock }) =>
        new Promise((resolve, reject) => clock.setTimeout(() => (page % 2 === 1 ? reject(new Error('Not found.')) : resolve('ok')), page * 100)),
    });
    const pages = Array.from({ length: 10 }, (_, index) => toolCall('fetch', { page: index + 1 }, `p${index + 1}`));
    const model = scriptedPerAgent({ reader: [callTools(...pages), 'Read.'] });
    const clock = simulatedClock();
    const runtime = createRuntime({ model, agents: [worker('reader', ['fetch'])], tools: [fetchPage], clock, maxToolConcurrency: 10, projectAgentDir: false });
    const { tree, lines } = plainLinesOf(runtime);

    await advanceUntilSettled(clock, runtime.run('reader', 'Read the pages.'));
    const { total } = runtime.metrics();
    await runtime.shutdown();

    expect(lines.slice(1, 5)).toEqual([
      '  reader ✗ fetch {"page":1} 100ms: Not found.',
      '  reader ✓ fetch {"page":2} 200ms',
      '  reader ✗ fetch {"page":3} 300ms: Not found.',
      '  reader ✓ fetch {"page":4} 400ms',
    ]);
    expect(lines.filter((line) => line.includes('fetch'))).toHaveLength(10);
    expect(tree.totals).toMatchObject({ toolCalls: total.toolCalls, toolErrors: total.toolErrors });
    expect(tree.totals.toolErrors).toBe(5);
  });

  it('carry no control codes, even when a model answers with some', () => {
    const tree = new LiveTree();
    const events = [
      spawned('agent:w:1', 'w', 0, null, null, '\u001b[2Jclear'),
      started('agent:w:1', 0),
      completed('agent:w:1', '\u001b[31mred\u001b[0m alert\u0007', 10),
    ];
    const lines = events.map((event) => plainEventLine(event, tree.apply(event)!)).filter((line) => line !== undefined);
    expect(lines).toEqual(['► w ([2Jclear)', '✓ w done 10ms • 0 calls • 0 tokens • $0 ⎿ [31mred [0m alert']);
    expect([...lines.join('')].every((character) => character.charCodeAt(0) >= 32 && character.charCodeAt(0) !== 127)).toBe(true);
  });
});

function failedEvent(id: string, at: number): TroupeEvent {
  return { type: 'agent.failed', ...header(id, at), name: 'worker', reason: 'error', error: { code: 'tool_error', message: 'Broke.', fault: 'tool' }, turns: 1 };
}
