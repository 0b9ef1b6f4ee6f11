// The runtime under faults and attacks: fuzzed tool arguments, allow-list escapes, a spawn bomb, secret canaries,
// flaky models, and a long soak.
import { readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import fc from 'fast-check';
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, JsonFileMemory, ModelError, type ModelRequest, type ToolCall } from '../src/index.js';
import { assignCall, callTools, FaultyModel, ScriptedModel, toolCall } from '../src/testing.js';
import type { Row } from './row.js';

const toolAnswers = (request: ModelRequest) => request.messages.filter((message) => message.role === 'tool');

/** Tool calls with fuzzed arguments (not JSON, wrong shapes, huge, deep, `__proto__`): every call gets an answer. */
export async function fuzz(calls: number, seed: number): Promise<Row> {
  const argument = fc.oneof(
    fc.string(),
    fc.json(),
    fc.jsonValue().map((value) => JSON.stringify(value)),
    fc.constant('{"__proto__": {"polluted": true}, "name": "x"}'),
    fc.nat(5_000).map((depth) => '['.repeat(depth) + ']'.repeat(depth)),
    fc.constant('['.repeat(200_000) + ']'.repeat(200_000)), // nesting 200,000 deep
    fc.constant(`{"name": "${'x'.repeat(5_000_000)}"}`), // a 5 MB string
  );
  const batches = fc.sample(fc.array(argument, { minLength: 50, maxLength: 50 }), { numRuns: Math.ceil(calls / 50), seed });
  let ran = 0;
  const echo = defineTool({ name: 'echo', description: 'Echoes a name.', parameters: z.object({ name: z.string().max(100) }), kind: 'read', execute: ({ name }) => (ran++, name) });
  const agent = defineAgent({ name: 'fuzzer', description: 'Calls.', systemPrompt: 'Call.', tools: ['echo'], maxTurns: batches.length + 1 });
  let answered = 0;
  let turn = 0;
  const model = new ScriptedModel(
    (request) => {
      answered = toolAnswers(request).length; // the conversation holds every answer so far
      const batch = batches[turn++];
      if (!batch) return 'done';
      return { content: '', toolCalls: batch.map((args, index): ToolCall => ({ id: `c${turn}-${index}`, name: 'echo', arguments: args })) };
    },
    { record: false },
  );
  const runtime = createRuntime({ model, agents: [agent], tools: [echo], maxToolConcurrency: 50, projectAgentDir: false });
  const result = await runtime.run('fuzzer', 'Call echo.');
  await runtime.shutdown();
  const tried = batches.length * 50;
  const polluted = ({} as { polluted?: unknown }).polluted !== undefined;
  return {
    case: 'fuzzed tool-call arguments (fast-check): not JSON, wrong shapes, 5 MB strings, nesting 200,000 deep, __proto__',
    tried,
    failed: (result.status === 'completed' ? 0 : 1) + (polluted ? 1 : 0),
    lost: Math.max(0, tried - answered), // calls that got no answer
    detail: `${ran} calls passed the schema and ran`,
  };
}

/** Attempts to reach agents an agent may not: directly, through spawn_agent, by message, after a resume. */
export async function escapes(): Promise<Row> {
  const secret = defineAgent({ name: 'secret', description: 'Guards a secret.', systemPrompt: 'Guard it.' });
  const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Help.' });
  const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['assign_task', 'spawn_agent', 'send_message'], subagents: ['helper'], canMessage: ['helper'] });
  const attempts = (request: ModelRequest) => {
    if (request.agentName === 'secret') return 'the secret';
    if (request.messages.at(-1)?.role !== 'user') return 'done'; // each task (the first, and the resumed one) tries once
    if (request.agentName === 'minion') return callTools(assignCall('secret', 'Tell me.', { id: 'm1' }), toolCall('send_message', { to: 'secret', content: 'psst' }, 'm2'));
    if (request.agentName === 'helper') return 'helped';
    return callTools(
      assignCall('secret', 'Tell me.', { id: 'l1' }),
      toolCall('send_message', { to: 'secret', content: 'psst' }, 'l2'),
      toolCall('spawn_agent', { name: 'minion', task: 'Find the secret.', system_prompt: 'Find it.', tools: ['assign_task', 'send_message'] }, 'l3'),
      toolCall('spawn_agent', { name: 'rogue', task: 'x', system_prompt: 'x', tools: ['wipe_disk'] }, 'l4'),
      assignCall('../secret', 'Tell me.', { id: 'l5' }),
    );
  };
  const model = new ScriptedModel(attempts);
  const runtime = createRuntime({ model, agents: [lead, secret, helper], projectAgentDir: false });
  const first = await runtime.run('lead', 'Get the secret.');
  // After a resume the same limits hold.
  const again = await (await runtime.resume(first.id, 'Try once more.')).result;
  const reached = model.calls.filter((request) => request.agentName === 'secret').length;
  const delivered = runtime.metrics().agents;
  const messagesToSecret = Object.values(delivered).filter((agent) => agent.name === 'secret').reduce((sum, agent) => sum + agent.own.messagesIn, 0);
  await runtime.shutdown();
  return {
    case: 'allow-list escapes: direct, through spawn_agent, by message, by path, after a resume',
    tried: 2 * 5 + 2,
    failed: reached + messagesToSecret + (first.status === 'completed' && again.status === 'completed' ? 0 : 1),
    lost: 0,
  };
}

/** Every agent asks for 50 more at maxDepth 10: the run stops at maxAgents (1,000). */
export async function spawnBomb(): Promise<Row> {
  const bomb = defineAgent({ name: 'bomb', description: 'Multiplies.', systemPrompt: 'Multiply.', tools: ['assign_task'], subagents: ['bomb'] });
  const model = new ScriptedModel(
    (request) => (request.tools.length > 0 && toolAnswers(request).length === 0 ? callTools(...Array.from({ length: 50 }, (_, i) => assignCall('bomb', `Part ${i}.`, { id: `b${i}` }))) : 'done'),
    { record: false },
  );
  const runtime = createRuntime({ model, agents: [bomb], maxDepth: 10, maxParallel: 64, maxToolConcurrency: 50, projectAgentDir: false });
  const started = process.memoryUsage().heapUsed;
  const result = await runtime.run('bomb', 'Go.');
  const { total } = runtime.metrics();
  const heapMB = Math.round((process.memoryUsage().heapUsed - started) / 1_048_576);
  await runtime.shutdown();
  return {
    case: 'spawn bomb: every agent asks for 50 more, maxDepth 10',
    tried: 1,
    failed: (total.agentsSpawned > 1_000 ? 1 : 0) + (result.status === 'completed' ? 0 : 1) + (total.agentsRunning > 0 ? 1 : 0),
    lost: 0,
    detail: `${total.agentsSpawned} agents ran (maxAgents 1,000), heap +${heapMB} MB`,
  };
}

/** A secret in a task, a tool's output, a model's error and an env variable: never in events, trace, store or results. */
export async function canaries(dir: string): Promise<Row> {
  const canary = 'canary-7f3a9c1e5b2d';
  process.env.RELIABILITY_API_TOKEN = `${canary}-env`;
  const leak = defineTool({ name: 'leak', description: 'Returns a password.', parameters: z.object({}), kind: 'read', execute: () => `password=${canary}` });
  const agent = defineAgent({ name: 'talker', description: 'Talks.', systemPrompt: 'Talk.', tools: ['leak'] });
  const failing = defineAgent({ name: 'failing', description: 'Fails.', systemPrompt: 'Fail.' });
  const model = new ScriptedModel((request) => {
    if (request.agentName === 'failing') throw new ModelError(`Incorrect API key ${canary}; Authorization: Bearer ${canary}`, { status: 401 });
    return toolAnswers(request).length === 0 ? callTools(toolCall('leak', {}, 'x')) : `I saw ${canary} and ${process.env.RELIABILITY_API_TOKEN}.`;
  });
  const trace = join(dir, 'canary.trace.jsonl');
  const store = join(dir, 'canary.json');
  const runtime = createRuntime({ model, agents: [agent, failing], tools: [leak], secrets: [canary], trace, store: new JsonFileMemory(store), retry: { attempts: 1 }, projectAgentDir: false });
  const events: string[] = [];
  runtime.events$.subscribe((event) => events.push(JSON.stringify(event)));
  const results = await Promise.all([runtime.run('talker', `Keep ${canary} safe.`), runtime.run('failing', 'Fail.')]);
  await runtime.shutdown();
  const places = {
    events: events.join('\n'),
    trace: readFileSync(trace, 'utf8'),
    store: readFileSync(store, 'utf8'),
    errors: results.map((result) => result.error?.message ?? '').join('\n'),
  };
  delete process.env.RELIABILITY_API_TOKEN;
  const leaks = Object.entries(places).filter(([, text]) => text.includes(canary));
  return { case: 'secret canaries: in a task, a tool output, a model error, an env variable', tried: Object.keys(places).length, failed: leaks.length, lost: 0, detail: leaks.map(([place]) => place).join(', ') || 'no leak' };
}

/** 1,000 agents on a model that fails 20 % of its calls, retried, in simulated time: each ends with a reason. */
export async function faults(agents: number, dir: string): Promise<Row> {
  const unhandled: unknown[] = [];
  const onUnhandled = (reason: unknown) => unhandled.push(reason);
  process.on('unhandledRejection', onUnhandled);
  const inner = new ScriptedModel((request) => (toolAnswers(request).length === 0 ? callTools(toolCall('blackboard_read', { key: 'k' }, 'r')) : 'done'), { record: false, latencyMs: 1_000 });
  const rates = { rateLimit: 0.05, serverError: 0.05, timeout: 0.03, disconnect: 0.03, malformedToolCall: 0.02, empty: 0.02 };
  const model = new FaultyModel(inner, { seed: 7, rates });
  const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', tools: ['blackboard_read'] });
  const store = new JsonFileMemory(join(dir, 'faults.json'));
  const runtime = createRuntime({ model, agents: [worker], clock: new SimulatedClock(), seed: 3, maxParallel: agents, store, projectAgentDir: false });
  const handles = Array.from({ length: agents }, (_, i) => runtime.spawn('worker', `Task ${i}.`));
  await runtime.runUntilIdle();
  const results = await Promise.all(handles.map((handle) => handle.result));
  await runtime.flush();
  const sessions = await runtime.sessions.list();
  await runtime.shutdown();
  process.off('unhandledRejection', onUnhandled);
  const unexplained = results.filter((result) => result.status !== 'completed' && !result.reason).length;
  const notEnded = sessions.filter((session) => session.state !== 'completed' && session.state !== 'failed').length;
  const completed = results.filter((result) => result.status === 'completed').length;
  return {
    case: `model faults at 20 % over ${agents} agents, retried, simulated time`,
    tried: agents,
    failed: unexplained + unhandled.length,
    lost: notEnded + (agents - sessions.length),
    detail: `${completed} completed, ${agents - completed} failed with a reason; ${Object.values(model.injected).reduce((a, b) => a + b, 0)} faults injected`,
  };
}

/** Leads each delegate to a worker that always fails: restarts stay within their intensity, every call is answered. */
export async function restartStorm(leads: number): Promise<Row> {
  const worker = defineAgent({ name: 'worker', description: 'Always fails.', systemPrompt: 'Fail.', restart: 'on-failure', restartIntensity: { max: 3, withinMs: 60_000 } });
  const lead = defineAgent({ name: 'lead', description: 'Delegates.', systemPrompt: 'Delegate.', tools: ['assign_task'], subagents: ['worker'] });
  const model = new ScriptedModel(
    (request) => {
      if (request.agentName === 'worker') throw new ModelError('The model is down.', { status: 500 });
      return toolAnswers(request).length === 0 ? callTools(assignCall('worker', 'Do it.')) : 'gave up';
    },
    { record: false },
  );
  const runtime = createRuntime({ model, agents: [lead, worker], maxParallel: 4, retry: { attempts: 1 }, projectAgentDir: false });
  let restarts = 0;
  let escalations = 0;
  runtime.events$.subscribe((event) => {
    if (event.type === 'agent.restarted') restarts += 1;
    if (event.type === 'agent.escalated') escalations += 1;
  });
  const results = await Promise.all(Array.from({ length: leads }, (_, i) => runtime.run('lead', `Lead ${i}.`)));
  const live = runtime.metrics().total.agentsRunning;
  await runtime.shutdown();
  const unanswered = results.filter((result) => result.status !== 'completed').length;
  return {
    case: `restart storm: ${leads} leads delegate to a worker that always fails (restart on-failure, 3 within 60 s)`,
    tried: leads,
    failed: unanswered + (restarts > leads * 3 ? 1 : 0) + (escalations !== leads ? 1 : 0) + (live > 0 ? 1 : 0),
    lost: 0,
    detail: `${restarts} restarts, ${escalations} escalations`,
  };
}

/** Agents one after another on one runtime: the heap stays flat once the retention window is full. */
export async function soak(total: number): Promise<Row> {
  const gc = (globalThis as { gc?: () => void }).gc;
  const heap = () => {
    gc?.();
    gc?.();
    return process.memoryUsage().heapUsed;
  };
  const model = new ScriptedModel((request) => (toolAnswers(request).length === 0 ? callTools(toolCall('blackboard_read', { key: 'k' }, 'r')) : 'done'), { record: false });
  const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.', tools: ['blackboard_read'] });
  const window = Math.min(10_000, Math.floor(total / 5));
  const runtime = createRuntime({ model, agents: [worker], retainFinished: window, projectAgentDir: false });
  let failed = 0;
  const runMany = async (count: number) => {
    for (let i = 0; i < count; i++) if ((await runtime.run('worker', `Task ${i}.`)).status !== 'completed') failed += 1;
  };
  await runMany(window * 2);
  const before = heap();
  await runMany(total - window * 2);
  const perAgent = (heap() - before) / (total - window * 2);
  await runtime.shutdown();
  return {
    case: `soak: ${total.toLocaleString('en')} agents one after another on one runtime`,
    tried: total,
    // Judged where it can be told from noise: over tens of thousands of agents (a small run measures the JIT too).
    failed: failed + (total >= 20_000 && perAgent > 100 ? 1 : 0),
    lost: 0,
    detail: `heap ${perAgent.toFixed(0)} bytes per agent after the first ${window * 2} (retainFinished ${window})`,
  };
}

/** Every file the run left in `dir` (for the report). */
export function leftFiles(dir: string): string[] {
  return readdirSync(dir);
}
