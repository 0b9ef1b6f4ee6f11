// Model calls that fail and are tried again, in simulated time. A flaky model (HTTP 503, then a 429 that asks to wait
// 2 s, then an answer) is retried with a jittered backoff and the server's retry-after; a refused key (401) is not
// retried; then 200 agents run over a FaultyModel that fails 20 % of calls, twice with the same seed, to show that
// every agent ends with an answer or a reason and that a seeded run repeats event for event.
//
//   npx tsx examples/retries.ts
import { createRuntime, defineAgent, formatEvent, ModelError, type TroupeEvent } from 'troupe';
import { FaultyModel, ScriptedModel, TestClock } from 'troupe/testing';

const agent = (name: string) =>
  defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools: ['blackboard_read'] });

// 1. One flaky agent and one with a refused key, on a simulated clock: the waits take no real time.
const clock = new TestClock();
const model = ScriptedModel.perAgent({
  flaky: [
    new ModelError('Service unavailable.', { status: 503 }),
    new ModelError('Rate limit reached.', { status: 429, retryAfterMs: 2_000 }),
    'Here is the summary.',
  ],
  locked: [new ModelError('Incorrect API key.', { status: 401 })],
});
const runtime = createRuntime({ model, agents: [agent('flaky'), agent('locked')], clock, seed: 1, retry: { attempts: 4, baseMs: 500, maxMs: 10_000 } });
runtime.events$.subscribe((event) => {
  if (event.type === 'model.retry' || event.type === 'agent.completed' || event.type === 'agent.failed') console.log(formatEvent(event));
});
const flaky = runtime.spawn('flaky', 'Summarise the notes.');
const locked = runtime.spawn('locked', 'Summarise the notes.');
await runtime.runUntilIdle();
for (const result of [await flaky.result, await locked.result]) {
  console.log(`${result.agent}: ${result.status}${result.error ? ` (${result.error.code}, HTTP ${result.error.status}, retryable ${result.error.retryable})` : `: ${result.output}`}`);
}
console.log(`simulated time: ${clock.now()} ms\n`);
await runtime.shutdown();

// 2. 200 agents over a model that fails 20 % of its calls, run twice with the same seed.
async function faultyRun(seed: number) {
  const simulated = new TestClock();
  const inner = new ScriptedModel(() => 'Done.', { latencyMs: 300, record: false });
  const faulty = new FaultyModel(inner, {
    seed,
    rates: { rateLimit: 0.06, serverError: 0.06, timeout: 0.04, disconnect: 0.02, malformedToolCall: 0.01, empty: 0.01 },
  });
  const crowd = createRuntime({ model: faulty, agents: [agent('worker')], clock: simulated, seed, maxParallel: 200 });
  const events: TroupeEvent[] = [];
  crowd.events$.subscribe((event) => events.push(event));
  const handles = Array.from({ length: 200 }, (_, i) => crowd.spawn('worker', `Task ${i}.`));
  await crowd.runUntilIdle();
  const results = await Promise.all(handles.map((handle) => handle.result));
  await crowd.shutdown();
  return { results, events, faulty, makespan: simulated.now() };
}

const first = await faultyRun(42);
const again = await faultyRun(42);
const failed = first.results.filter((result) => result.status === 'failed');
const reasons = new Map<string, number>();
for (const result of failed) reasons.set(`${result.reason}/${result.error?.code}`, (reasons.get(`${result.reason}/${result.error?.code}`) ?? 0) + 1);
console.log(`200 agents over a FaultyModel at 20 %: ${first.faulty.calls} model calls, faults injected ${JSON.stringify(first.faulty.injected)}`);
console.log(`${first.events.filter((event) => event.type === 'model.retry').length} retries; ${200 - failed.length} completed, ${failed.length} failed (${[...reasons].map(([reason, n]) => `${n} ${reason}`).join(', ') || 'none'})`);
console.log(`simulated makespan: ${first.makespan} ms`);
console.log(`same seed, same events: ${JSON.stringify(first.events) === JSON.stringify(again.events) ? 'yes' : 'no'} (${first.events.length} events)`);
