// Agents that fail and are started again, in simulated time (offline: scripted models). A flaky researcher fails once
// and is restarted: its lead, which delegated to it, only sees the answer. A broken agent fails every time: past its
// restart intensity (2 restarts within a minute) its failure escalates to the caller. Then a parallel review runs one
// for all: when one reviewer fails, the reviewer still running is cancelled and both start again; the one that had
// finished keeps its answer.
//
//   npx tsx examples/restarts.ts
import { createRuntime, defineAgent, formatEvent, parallel, step, type TroupeEvent } from 'troupe';
import { assignCall, callTools, ScriptedModel, TestClock } from 'troupe/testing';

const agent = (name: string, options: Partial<Parameters<typeof defineAgent>[0]> = {}) =>
  defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, ...options });
const shown = new Set<TroupeEvent['type']>(['agent.failed', 'agent.restarted', 'agent.escalated', 'agent.completed']);
const down = () => new Error('The model is down.');

// 1. A flaky researcher under a lead, and a broken agent called from code.
const clock = new TestClock();
const model = ScriptedModel.perAgent(
  {
    lead: [callTools(assignCall('researcher', 'Find the launch date.')), 'The launch is on 3 March (the researcher says so).'],
    researcher: [down(), 'The launch is on 3 March.'],
    broken: [down(), down(), down()],
  },
  { latencyMs: 100 },
);
const runtime = createRuntime({
  model,
  clock,
  seed: 7,
  agents: [
    agent('lead', { tools: ['assign_task'], subagents: ['researcher'] }),
    agent('researcher', { restart: 'on-failure' }),
    agent('broken', { restart: 'on-failure', restartIntensity: { max: 2, withinMs: 60_000 } }),
  ],
});
runtime.events$.subscribe((event) => shown.has(event.type) && console.log(formatEvent(event)));
const lead = runtime.spawn('lead', 'When is the launch?');
const broken = runtime.spawn('broken', 'Do the impossible.');
await runtime.runUntilIdle();
for (const result of [await lead.result, await broken.result]) {
  console.log(`${result.agent}: ${result.status}${result.error ? ` (${result.reason}: ${result.error.message})` : `: ${result.output}`}, ${result.turns} turns`);
}
await runtime.shutdown();

// 2. A parallel review, one for all.
console.log('\none for all:');
const reviewClock = new TestClock();
const reviewModel = ScriptedModel.perAgent(
  { security: [down(), 'No secrets in the code.'], style: ['Names are clear.'], docs: ['The README is up to date.'] },
  { latencyMs: (request) => ({ security: 200, style: 1_000, docs: 50 })[request.agentName] ?? 100 },
);
const review = createRuntime({ model: reviewModel, clock: reviewClock, seed: 7, agents: ['security', 'style', 'docs'].map((name) => agent(name)) });
review.events$.subscribe((event) => shown.has(event.type) && console.log(formatEvent(event)));
const running = parallel([step('security', 'Audit.'), step('style', 'Review the style.'), step('docs', 'Check the docs.')], {
  restart: 'one-for-all',
}).run(review);
await review.runUntilIdle();
const result = await running;
console.log(`review: ${result.status}\n${result.output}`);
console.log(`simulated time: ${reviewClock.now()} ms`);
await review.shutdown();
