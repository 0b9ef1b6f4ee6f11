// Orchestration patterns: agents composed from code, without a lead model. A pipeline takes a product idea through
// research, two drafts written side by side (parallel), a review whose verdicts an editor turns into the final note
// (fanIn; the legal reviewer's model is down, and onFailure: 'continue' lets the review go on without it), and a race
// of two translators (the quicker wins, the other is cancelled). Every pattern is a group in the agent tree, so the events
// and the metrics table show it as a parent with its agents under it. All agents run on a scripted model, offline.
//
//   npx tsx examples/patterns.ts
import {
  createRuntime,
  defineAgent,
  fanIn,
  formatMetrics,
  parallel,
  pipeline,
  race,
  step,
  type ModelRequest,
} from 'troupe';
import { ScriptedModel } from 'troupe/testing';

// ── The agents: each does one thing ────────────────────────────────────────────────────────────────────
const agent = (name: string, job: string) => defineAgent({ name, description: job, systemPrompt: `You are the ${name}. ${job}` });
const agents = [
  agent('researcher', 'You list the facts a launch note needs.'),
  agent('writer', 'You write a short launch note.'),
  agent('social', 'You write one social media post.'),
  agent('legal', 'You check drafts for claims we cannot make.'),
  agent('brand', 'You check drafts for tone.'),
  agent('editor', 'You apply the review verdicts and write the final note.'),
  agent('quick-translator', 'You translate into French, fast.'),
  agent('careful-translator', 'You translate into French, carefully.'),
];

// ── Scripted models: what a real model would answer ────────────────────────────────────────────────────
const task = (request: ModelRequest) => String(request.messages.at(-1)?.content ?? '');
const model = ScriptedModel.perAgent(
  {
    researcher: [(request) => `Facts about ${task(request)}: solar powered, 40 hours of light, ships in May.`],
    writer: ['Meet Lumen: a solar lamp that shines for 40 hours. Ships in May.'],
    social: ['40 hours of free light. Lumen ships in May. #solar'],
    legal: [new Error('The legal model is down.')],
    brand: ['Tone is warm and clear: approved.'],
    editor: ['Meet Lumen: a solar lamp that shines for 40 hours on a day of sun. Ships in May.'],
    'quick-translator': ['Voici Lumen : une lampe solaire qui brille 40 heures après un jour de soleil. Disponible en mai.'],
    'careful-translator': ['Voici Lumen, une lampe solaire qui éclaire 40 heures après une journée de soleil. En vente dès mai.'],
  },
  { model: 'gpt-4o-mini', latencyMs: (request) => (request.agentName === 'careful-translator' ? 1_500 : 50) },
);

// ── The flow: patterns nest, and each output becomes the next stage's input ──────────────────────────
const launchNote = pipeline(
  [
    'researcher',
    parallel(
      [
        step('writer', (_, facts) => `Write a launch note from these facts:\n${facts}`),
        step('social', (_, facts) => `Write a post from these facts:\n${facts}`),
      ],
      { name: 'drafts' },
    ),
    fanIn(
      [step('legal', (_, drafts) => `Check these drafts:\n${drafts}`), step('brand', (_, drafts) => `Check these drafts:\n${drafts}`)],
      { agent: 'editor' },
      { name: 'review', onFailure: 'continue' },
    ),
    race([
      step('quick-translator', (_, note) => `Translate into French:\n${note}`),
      step('careful-translator', (_, note) => `Translate into French:\n${note}`),
    ]),
  ],
  { name: 'launch-note' },
);

// ── Run ────────────────────────────────────────────────────────────────────────────────────────────────
const runtime = createRuntime({ model, agents });
const groups = new Set<string>();
runtime.events$.subscribe((event) => {
  if (event.type === 'agent.spawned' && event.group) {
    groups.add(event.agentId);
    console.log(`${event.agentId} opened${event.parentId ? ` in ${event.parentId}` : ''}`);
  }
  if (event.type === 'agent.completed' && groups.has(event.agentId)) {
    console.log(`${event.agentId} completed:\n  ${event.output.replaceAll('\n', '\n  ')}`);
  }
  if (event.type === 'agent.failed') console.log(`  ${event.agentId} failed (${event.reason}): ${event.error.message}`);
});

const result = await launchNote.run(runtime, 'Lumen, a solar lamp');

console.log(`\nThe note in French: ${result.status === 'completed' ? result.output : `none (${result.reason}: ${result.error?.message})`}`);
console.log(`${result.metrics.subtree.modelCalls} model calls, $${result.metrics.subtree.costUsd.toFixed(6)} in all`);
console.log(`\n${formatMetrics(runtime.metrics())}`);
await runtime.shutdown();
process.exitCode = result.status === 'completed' ? 0 : 1;
