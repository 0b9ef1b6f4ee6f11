// Writes the stored-format fixtures of test/fixtures/: a JSON store with its sessions and the recording of the run
// that made them, as the troupe of this commit writes them. Run it once per new format, into a new folder, and commit
// what it writes; never run it over a folder already committed (those are the formats older files are in).
//   node --import tsx test/support/writeFixtures.ts test/fixtures/<folder>
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, JsonFileMemory, ModelError, ScriptedModel } from '../../src/index.js';

const folder = process.argv[2];
if (!folder) throw new Error('Usage: writeFixtures.ts <folder>');
mkdirSync(folder, { recursive: true });

// The lead notes the question on the blackboard and hands it on in one turn (since recording version 5: a tool.plan
// event, the assign_task, a read of the key with targets, waiting for the write of it).
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'You lead.', tools: ['assign_task', 'blackboard_write'] });
const analyst = defineAgent({ name: 'analyst', description: 'Analyses.', systemPrompt: 'You analyse.' });
// Restarted once on failure, then escalated (since recording version 4: agent.restarted and agent.escalated events).
// Its first attempt writes a todo list (since recording version 5: a todo.updated event) and saves a note (a note of
// NOTE_SCHEMA_VERSION 1 under __agent_notes__) before its model fails.
const writer = defineAgent({
  name: 'writer',
  description: 'Writes.',
  systemPrompt: 'You write.',
  restart: 'on-failure',
  restartIntensity: { max: 1 },
  tools: ['todo_write', 'memory_save'],
});
// It must write to the blackboard before it answers, and has one turn: it answers at once and fails (since recording
// version 6 and session version 4: reason and code `required_tools`).
const reporter = defineAgent({
  name: 'reporter',
  description: 'Reports.',
  systemPrompt: 'You report.',
  tools: ['blackboard_write'],
  requiredToolCalls: ['blackboard_write'],
  maxTurns: 1,
});
// It waits a second for a message nobody sends, then answers (since recording version 7: a tool.result that is
// `waiting`, then the wait's tool.wait_ended, a timeout).
const listener = defineAgent({ name: 'listener', description: 'Listens.', systemPrompt: 'You listen.', tools: ['wait_for_messages'] });
const todos = [
  { id: 'draft', content: 'Draft the haiku', status: 'in_progress' },
  { id: 'count', content: 'Count the syllables', status: 'pending' },
];
const note = { content: 'Haiku: five, seven and five syllables.', tags: ['haiku'], scope: 'shared' };
const model = ScriptedModel.perAgent({
  lead: [
    {
      content: '',
      toolCalls: [
        { id: 'c0', name: 'blackboard_write', arguments: JSON.stringify({ key: 'question', value: 'How many modules?' }) },
        {
          id: 'c1',
          name: 'assign_task',
          arguments: JSON.stringify({ description: 'count modules', agent: 'analyst', task: 'Count the modules.', targets: ['blackboard:question'] }),
        },
      ],
    },
    'The analyst counted 7 modules.',
  ],
  // A 503 first (since recording version 3): the model call is tried again, and the recording holds a model.retry.
  analyst: [new ModelError('Service unavailable.', { status: 503 }), 'There are 7 modules: a, b, c, d, e, f, g.'],
  reporter: ['Nothing to report.'],
  listener: [{ content: '', toolCalls: [{ id: 'l1', name: 'wait_for_messages', arguments: JSON.stringify({ timeout_ms: 1000 }) }] }, 'Nobody wrote.'],
  writer: [
    { content: '', toolCalls: [{ id: 'w1', name: 'todo_write', arguments: JSON.stringify({ items: todos }) }, { id: 'w2', name: 'memory_save', arguments: JSON.stringify(note) }] },
    new Error('The model is down.'),
    new Error('The model is down.'),
  ],
});
const runtime = createRuntime({
  model,
  agents: [lead, analyst, writer, reporter, listener],
  store: new JsonFileMemory(join(folder, 'store.json')),
  clock: new SimulatedClock(),
  seed: 11,
  record: join(folder, 'run.jsonl'),
  projectAgentDir: false,
});
const running = Promise.all([
  runtime.run('lead', 'How many modules?'),
  runtime.run('writer', 'Write a haiku.', { conversationKey: 'poems' }),
  runtime.run('reporter', 'Report on the modules.', { conversationKey: 'reports' }),
  runtime.run('listener', 'Listen for a second.', { conversationKey: 'listening' }),
]);
await runtime.runUntilIdle(); // simulated time: the retry's wait passes at once
const results = await running;
await runtime.shutdown();
console.log(JSON.stringify(results.map((result) => ({ id: result.id, status: result.status }))));
