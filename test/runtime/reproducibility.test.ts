// Seeded simulations that use most features at once (delegation in the foreground and the background, task_output,
// parallel_tasks, spawn_agent, a pool, the five patterns, the blackboard, topics, request/reply with time-outs,
// wait_for_messages timing out, model faults retried with backoff, restarts, budgets, approvals, todo lists, notes,
// file tools, metrics): run twice with one seed, the recording is the same byte for byte, and with another seed it is
// not. And the work on the disk that made them differ: file tools and resumes from a file store take no simulated time,
// and run one at a time in the order they started.
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, fanIn, JsonFileMemory, parallel, pipeline, race, sequence, step, type ModelReply } from 'troupe';
import { FaultyModel, ScriptedModel, advanceUntilSettled, assignCall, callTools, toolCall, type ScriptRequest } from 'troupe/testing';
import { eachTestTempDir } from '../support/tempDir.js';
import { collect, lastMessage, lastToolMessage, ofType, readMessages, resident, simulatedClock, worker } from '../stubs.js';

/** The answers of every agent of the world, drawn from each agent's seeded stream. */
function scriptOfWorld(): (request: ScriptRequest) => ModelReply | string {
  let flakyCalls = 0;
  return (request) => {
    const roll = Math.floor(request.random() * 1_000);
    const turn = request.messages.filter((message) => message.role === 'assistant').length;
    const last = lastMessage(request);
    switch (request.agentName) {
      case 'lead': {
        if (turn === 0) {
          return callTools(
            toolCall('todo_write', { items: [{ id: 'a', content: 'Delegate', status: 'in_progress' }, { id: 'b', content: 'Sum up', status: 'pending' }] }, 'todo'),
            toolCall('memory_save', { content: `Helpers answer in about ${roll} ms.`, tags: ['helpers'] }, 'save'),
            assignCall('helper', `Background work ${roll}.`, { background: true, id: 'bg' }),
            assignCall('helper', `Foreground work ${roll}.`, { id: 'fg' }),
            toolCall('parallel_tasks', { tasks: [{ agent: 'helper', task: 'Part one.' }, { agent: 'helper', task: 'Part two.' }] }, 'fan'),
          );
        }
        if (turn === 1) {
          const background = request.messages.find((message) => message.role === 'tool' && message.toolCallId === 'bg');
          const id = /agent:helper:[0-9A-Za-z]+/.exec(background?.content ?? '')?.[0] ?? 'agent:helper:missing';
          return callTools(
            toolCall('task_output', { agent_id: id, blocking: true, timeout_ms: 1 + (roll % 3) * 400 }, 'out'),
            toolCall('memory_search', { query: 'helpers answer' }, 'recall'),
            toolCall('todo_read', {}, 'todos'),
          );
        }
        return `lead done ${roll}`;
      }
      case 'helper':
        return `helper ${roll}`;
      case 'flaky':
        // Fails its first attempt with an empty answer (it is restarted: on-failure), then answers.
        flakyCalls += 1;
        return flakyCalls === 1 ? { content: '' } : `flaky ${roll}`;
      case 'spender':
        return callTools(toolCall('blackboard_read', { key: 'headline' }, `read${turn}`));
      case 'filer':
        if (turn === 0) {
          return callTools(
            toolCall('write_file', { path: 'notes/a.txt', content: `alpha ${roll}\nbeta\n` }, 'write'),
            toolCall('list_files', { pattern: '**/*.txt' }, 'list'),
          );
        }
        if (turn === 1) return callTools(toolCall('edit_file', { path: 'notes/a.txt', old_string: 'beta', new_string: `gamma ${roll}` }, 'edit'), toolCall('grep', { pattern: 'gamma' }, 'grep'));
        if (turn === 2) return callTools(toolCall('read_file', { path: 'notes/a.txt' }, 'read'), toolCall('read_file', { path: 'missing.txt' }, 'missing'));
        return `filed ${roll}`;
      case 'herald':
        if (turn === 0) {
          return callTools(
            toolCall('blackboard_write', { key: 'headline', value: { roll } }, 'write'),
            toolCall('blackboard_read', { key: 'headline' }, 'read'),
            toolCall('send_message', { to: 'echo', content: `question ${roll}`, expect_reply: true, timeout_ms: 300 }, 'ask'),
          );
        }
        if (turn === 1) return callTools(toolCall('wait_for_messages', { timeout_ms: 250, from: 'echo' }, 'wait'));
        return `herald done ${lastToolMessage(request)?.isError === true ? 'unanswered' : 'answered'} ${roll}`;
      case 'echo': {
        const [read] = last.role === 'user' ? readMessages(last.content) : [];
        if (read) return callTools(toolCall('reply', { content: `echo ${roll}: ${read.content}` }, `r${roll}`));
        return `echo ready ${roll}`;
      }
      default:
        return `${request.agentName} ${roll}`;
    }
  };
}

interface Run {
  bytes: Buffer;
  summary: string;
}

async function world(seed: number, record: string, workspace: string): Promise<Run> {
  rmSync(workspace, { recursive: true, force: true });
  mkdirSync(workspace, { recursive: true });
  writeFileSync(join(workspace, 'readme.txt'), 'gamma ray\n');
  const clock = simulatedClock();
  const scripted = new ScriptedModel(scriptOfWorld(), { latencyMs: (request) => 20 + Math.floor(request.random() * 400) });
  const model = new FaultyModel(scripted, { seed, rates: { rateLimit: 0.05, serverError: 0.1, timeout: 0.05, disconnect: 0.05 }, retryAfterMs: 700, timeoutMs: 900 });
  const agents = [
    defineAgent({
      name: 'lead',
      description: 'The lead.',
      systemPrompt: 'Lead.',
      tools: ['assign_task', 'task_output', 'parallel_tasks', 'todo_write', 'todo_read', 'memory_save', 'memory_search'],
    }),
    worker('helper'),
    defineAgent({ name: 'flaky', description: 'Flaky.', systemPrompt: 'Flake.', restart: 'on-failure' }),
    worker('spender', ['blackboard_read']),
    worker('filer', ['read_file', 'write_file', 'edit_file', 'list_files', 'grep']),
    worker('herald', ['blackboard_write', 'blackboard_read', 'send_message', 'wait_for_messages']),
    resident('echo', ['reply']),
    ...['scout', 'critic', 'editor', 'hare', 'tortoise'].map((name) => worker(name)),
  ];
  const runtime = createRuntime({ model, agents, clock, seed, record, workspace, retry: { attempts: 5, baseMs: 200, maxMs: 2_000 }, projectAgentDir: false });
  const echo = runtime.spawn('echo', 'Echo.');
  const runs = [
    runtime.run('lead', 'Lead the work.'),
    runtime.run('flaky', 'Try.'),
    runtime.run('spender', 'Spend.', { budget: { maxTurns: 2 } }),
    runtime.run('filer', 'File.'),
    runtime.run('herald', 'Herald.'),
    sequence([step('scout', 'Scout.'), step('critic', (previous) => `Criticise ${previous?.output}`)]).run(runtime, 'go'),
    parallel([step('scout', 'Scout again.'), 'critic'], { onFailure: 'continue' }).run(runtime, 'both'),
    fanIn(['scout', 'critic'], { agent: 'editor' }).run(runtime, 'merge'),
    pipeline(['scout', step('editor', (_, input) => `Edit ${input}`)]).run(runtime, 'pipe'),
    race([step('hare', 'Run.'), step('tortoise', 'Run.')]).run(runtime, 'race'),
  ];
  const asked = runtime.request(echo.id, 'ping', { timeoutMs: 150 }).then(
    (message) => `reply ${message.content}`,
    (error: unknown) => `no reply: ${(error as Error).message}`,
  );
  await runtime.runUntilIdle();
  runtime.stop(echo.id);
  const results = await Promise.all([...runs, echo.result]);
  const answer = await asked;
  const metrics = runtime.metrics();
  await runtime.shutdown();
  const summary = JSON.stringify({ results, answer, metrics, files: readFileSync(join(workspace, 'notes/a.txt'), 'utf8'), at: clock.now() });
  return { bytes: readFileSync(record), summary };
}

describe('a seeded simulation of every feature', () => {
  const dir = eachTestTempDir();

  it('writes the same recording, results and metrics byte for byte for one seed, and others for another seed', async () => {
    const first = await world(11, join(dir.path, 'first.jsonl'), join(dir.path, 'one'));
    const second = await world(11, join(dir.path, 'second.jsonl'), join(dir.path, 'two'));
    const other = await world(12, join(dir.path, 'other.jsonl'), join(dir.path, 'three'));

    const lines = first.bytes.toString('utf8').trim().split('\n').slice(1).map((line) => JSON.parse(line) as { type: string });
    const types = new Set(lines.map((line) => line.type));
    for (const type of ['model.retry', 'agent.restarted', 'todo.updated', 'blackboard.changed', 'message.sent', 'tool.wait_ended', 'agent.failed', 'agent.completed']) {
      expect(types, type).toContain(type);
    }
    expect(second.summary).toBe(first.summary);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(other.bytes.equals(first.bytes)).toBe(false);
  });
});

describe('file tools in simulated time', () => {
  const dir = eachTestTempDir();

  it.each(['runUntilIdle', 'advanceUntilSettled'] as const)('take no simulated time, and give their results in the order the calls started, however long the disk takes (%s)', async (driver) => {
    for (let i = 0; i < 300; i += 1) writeFileSync(join(dir.path, `f${i}.txt`), `line ${i}\nneedle ${i}\n`);
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      {
        filer: [callTools(toolCall('grep', { pattern: 'needle 2' }, 'slow'), toolCall('read_file', { path: 'f1.txt' }, 'fast')), 'filed'],
        sleeper: ['slept'],
      },
      { latencyMs: (request) => (request.agentName === 'sleeper' ? 10_000 : 5) },
    );
    const runtime = createRuntime({ model, agents: [worker('filer', ['grep', 'read_file']), worker('sleeper')], clock, workspace: dir.path, projectAgentDir: false });
    const events = collect(runtime.events$);
    const runs = Promise.all([runtime.run('filer', 'File.'), runtime.run('sleeper', 'Sleep.')]);
    if (driver === 'runUntilIdle') await runtime.runUntilIdle();
    else await advanceUntilSettled(clock, runs);
    expect((await runs).map((result) => result.output)).toEqual(['filed', 'slept']);
    await runtime.shutdown();

    const tools = events.filter((event) => event.type === 'tool.call' || event.type === 'tool.result');
    // Both calls start at 5 ms and end there: the sleeper's reply at 10 s was not let in while the disk worked.
    expect(tools.map((event) => [event.type, event.callId, event.at])).toEqual([
      ['tool.call', 'slow', 5],
      ['tool.call', 'fast', 5],
      ['tool.result', 'slow', 5],
      ['tool.result', 'fast', 5],
    ]);
    expect(ofType(events, 'tool.result').map((event) => event.durationMs)).toEqual([0, 0]);
  });
});

describe('file tools of two agents in one instant', () => {
  const dir = eachTestTempDir();

  it('run one at a time, in the order they started: a listing never sees half of a write', async () => {
    const listings: string[] = [];
    for (let round = 0; round < 3; round += 1) {
      const workspace = join(dir.path, `w${round}`);
      mkdirSync(workspace);
      const clock = simulatedClock();
      const model = ScriptedModel.perAgent(
        {
          writer: [callTools(toolCall('write_file', { path: 'big.txt', content: 'x'.repeat(4_000_000) }, 'write')), 'written'],
          lister: [callTools(toolCall('list_files', {}, 'list')), 'listed'],
        },
        { latencyMs: 5 },
      );
      const runtime = createRuntime({ model, agents: [worker('writer', ['write_file']), worker('lister', ['list_files'])], clock, workspace, projectAgentDir: false });
      const events = collect(runtime.events$);
      const runs = Promise.all([runtime.run('writer', 'Write.'), runtime.run('lister', 'List.')]);
      await runtime.runUntilIdle();
      await runs;
      await runtime.shutdown();
      listings.push(ofType(events, 'tool.result').find((event) => event.callId === 'list')!.content!);
    }
    expect(listings).toEqual(Array(3).fill('big.txt'));
  });
});

describe('resuming a sub-agent from a file store in simulated time', () => {
  const dir = eachTestTempDir();

  it('takes no simulated time for the store, however long the disk takes', async () => {
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      {
        lead: [
          callTools(assignCall('helper', 'First.', { id: 'first' })),
          (request) => {
            const id = /agent:helper:[0-9A-Za-z]+/.exec(lastToolMessage(request)?.content ?? '')![0];
            return callTools(assignCall('helper', 'Again.', { id: 'again', resume: id }));
          },
          'led',
        ],
        helper: ['first answer', 'second answer'],
        sleeper: ['slept'],
      },
      { latencyMs: (request) => (request.agentName === 'sleeper' ? 10_000 : 5) },
    );
    const runtime = createRuntime({
      model,
      agents: [defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['assign_task'] }), worker('helper'), worker('sleeper')],
      clock,
      store: new JsonFileMemory(join(dir.path, 'store.json')),
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);
    const runs = Promise.all([runtime.run('lead', 'Lead.'), runtime.run('sleeper', 'Sleep.')]);
    await runtime.runUntilIdle();
    expect((await runs).map((result) => result.output)).toEqual(['led', 'slept']);
    await runtime.shutdown();

    const again = ofType(events, 'tool.call').find((event) => event.callId === 'again')!;
    const resumed = ofType(events, 'agent.spawned').filter((event) => event.name === 'helper')[1]!;
    // The lead asks at 15 ms (its turn, the helper's, its turn: 5 ms each); the resumed helper starts then, not at 10 s.
    expect([again.at, resumed.at]).toEqual([15, 15]);
  });
});

/** A second world: spawn_agent, approvals answered by code, topics, stop_agent, finish, a pool, a one-for-all group, a tool waiting on the clock. */
async function secondWorld(seed: number, record: string): Promise<Run> {
  const clock = simulatedClock();
  const nap = defineTool({
    name: 'nap',
    description: 'Naps on the clock.',
    parameters: z.object({ ms: z.number() }),
    kind: 'read',
    timeoutMs: 500,
    execute: async ({ ms }, { clock: own }) => {
      await new Promise((resolve) => own.setTimeout(resolve, ms));
      return `napped ${ms}`;
    },
  });
  const guarded = defineTool({ name: 'guarded', description: 'Needs a person.', parameters: z.object({}), kind: 'write', needsApproval: true, execute: () => 'done' });
  let boss = 0;
  const scripted = new ScriptedModel(
    (request) => {
      const roll = Math.floor(request.random() * 1_000);
      const turn = request.messages.filter((message) => message.role === 'assistant').length;
      switch (request.agentName) {
        case 'boss':
          boss += 1;
          if (turn === 0) {
            return callTools(
              toolCall('spawn_agent', { name: `temp${boss}`, task: 'Do a small thing.', system_prompt: 'Be small.', tools: [] }, 'spawn'),
              assignCall('pooled', `Pooled ${roll}.`, { id: 'pool1' }),
              toolCall('nap', { ms: 100 + roll }, 'nap'),
              toolCall('guarded', {}, 'guard'),
            );
          }
          if (turn === 1) return callTools(assignCall('pooled', `Pooled again ${roll}.`, { id: 'pool2' }), toolCall('publish', { topic: 'news', content: `news ${roll}` }, 'pub'));
          return `boss ${roll}`;
        case 'listener':
          return turn >= 1 ? callTools(toolCall('finish', { answer: `heard ${roll}` }, 'fin')) : `listening ${roll}`;
        default:
          return `${request.agentName} ${roll}`;
      }
    },
    { latencyMs: (request) => 10 + Math.floor(request.random() * 200) },
  );
  const model = new FaultyModel(scripted, { seed, rates: { serverError: 0.15, rateLimit: 0.05 }, retryAfterMs: 300 });
  const agents = [
    defineAgent({ name: 'boss', description: 'Boss.', systemPrompt: 'Boss.', tools: ['spawn_agent', 'assign_task', 'nap', 'guarded', 'publish'] }),
    defineAgent({ name: 'pooled', description: 'Pooled.', systemPrompt: 'Pool.', persist: true }),
    resident('listener', ['finish'], { subscribe: ['news'] }),
    worker('left'),
    worker('right'),
  ];
  const runtime = createRuntime({ model, agents, tools: [nap, guarded], clock, seed, record, retry: { attempts: 6, baseMs: 100, maxMs: 1_000 }, pool: { maxIdlePerKey: 2, idleTimeoutMs: 5_000 }, projectAgentDir: false });
  runtime.events$.subscribe((event) => {
    if (event.type === 'approval.requested') runtime.approve(event.requestId);
  });
  runtime.spawn('listener', 'Listen.');
  const runs = [runtime.run('boss', 'Boss around.'), parallel([step('left', 'Left.'), step('right', 'Right.')], { restart: 'one-for-all' }).run(runtime, 'both')];
  await runtime.runUntilIdle();
  const results = await Promise.all(runs);
  const metrics = runtime.metrics();
  await runtime.shutdown();
  return { bytes: readFileSync(record), summary: JSON.stringify({ results, metrics, at: clock.now() }) };
}

describe('a second seeded simulation', () => {
  const dir = eachTestTempDir();

  it('repeats byte for byte for one seed, and differs for another', async () => {
    const first = await secondWorld(5, join(dir.path, 'first.jsonl'));
    const second = await secondWorld(5, join(dir.path, 'second.jsonl'));
    const other = await secondWorld(6, join(dir.path, 'other.jsonl'));
    expect(second.summary).toBe(first.summary);
    expect(second.bytes.equals(first.bytes)).toBe(true);
    expect(other.bytes.equals(first.bytes)).toBe(false);
  });
});

describe('a realTime call that waits its turn', () => {
  it('does not run once its agent was stopped while it waited behind another agent\'s call', async () => {
    let release!: () => void;
    const gate = new Promise<void>((resolve) => (release = resolve));
    const ran: string[] = [];
    const slow = defineTool({
      name: 'slow',
      description: 'Works on the disk until the test lets it end.',
      parameters: z.object({}),
      kind: 'read',
      realTime: true,
      execute: async () => {
        ran.push('slow');
        await gate;
        return 'slow done';
      },
    });
    const erase = defineTool({
      name: 'erase',
      description: 'Erases a file.',
      parameters: z.object({}),
      kind: 'write',
      realTime: true,
      execute: () => {
        ran.push('erase');
        return 'erased';
      },
    });
    const clock = simulatedClock();
    const model = ScriptedModel.perAgent(
      { reader: [callTools(toolCall('slow', {}, 'slow')), 'read'], eraser: [callTools(toolCall('erase', {}, 'erase'))] },
      { latencyMs: 5 },
    );
    const runtime = createRuntime({ model, agents: [worker('reader', ['slow']), worker('eraser', ['erase'])], tools: [slow, erase], clock, projectAgentDir: false });
    const reader = runtime.spawn('reader', 'Read.');
    const eraser = runtime.spawn('eraser', 'Erase.');
    // Both calls are asked for at 5 ms: the reader's runs (held by the gate), the eraser's waits behind it. Once the
    // eraser's call is in the queue (after its announcement), the eraser is stopped and the reader's call let end.
    runtime.events$.subscribe((event) => {
      if (event.type === 'tool.call' && event.callId === 'erase') {
        queueMicrotask(() => {
          runtime.stop(eraser.id);
          release();
        });
      }
    });
    await runtime.runUntilIdle();
    expect(await eraser.result).toMatchObject({ status: 'failed' });
    expect(await reader.result).toMatchObject({ status: 'completed', output: 'read' });
    await runtime.shutdown();
    expect(ran).toEqual(['slow']);
  });
});
