// A small newsroom, offline, orchestrated from code. Three researchers look up notes side by side (at most two at a time),
// then a writer turns their findings into a brief. Every agent runs on a scripted model, so no key or network
// is needed; the progress lines and the metrics table are what a run on a real model would print too.
//
//   npx tsx examples/newsroom.ts
import { z } from 'zod';
import {
  createRuntime,
  defineAgent,
  defineTool,
  formatEvent,
  formatMetrics,
  type ModelRequest,
} from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';

const notes: Record<string, string> = {
  actors: 'An actor owns its state and changes it only in answer to messages, one at a time.',
  supervision: 'A supervisor starts, limits and restarts its children; a failure is a message, not a crash.',
  metrics: 'Folding a stream of events gives live totals without a central lock.',
};

const searchNotes = defineTool({
  name: 'search_notes',
  description: 'Finds the note about a topic.',
  parameters: z.object({ topic: z.string().describe('one word, such as "actors"') }),
  kind: 'read',
  targets: ({ topic }) => [`notes/${topic}`],
  execute: ({ topic }) => notes[topic] ?? `No note about "${topic}".`,
});

const researcher = defineAgent({
  name: 'researcher',
  description: 'Looks up one topic in the notes and reports what it found.',
  systemPrompt: 'You research one topic. Use search_notes, then answer in one sentence.',
  tools: [searchNotes],
});

const writer = defineAgent({
  name: 'writer',
  description: 'Writes a short brief from research findings.',
  systemPrompt: 'You write a three-line brief from the findings you are given.',
});

/** The text of the last message of a role. */
const last = (request: ModelRequest, role: string) =>
  [...request.messages].reverse().find((message) => message.role === role)?.content ?? '';

// Each agent gets its own script: a researcher searches, then reports; the writer writes.
const model = ScriptedModel.perAgent(
  {
    researcher: [
      (request) => callTools(toolCall('search_notes', { topic: last(request, 'user') }, 'call_1')),
      (request) => `Found: ${last(request, 'tool')}`,
    ],
    writer: [(request) => `Brief:\n${last(request, 'user').split('\n').slice(1).map((line) => `- ${line}`).join('\n')}`],
  },
  { model: 'gpt-4o-mini', latencyMs: (request) => 150 + 40 * request.messages.length },
);

const runtime = createRuntime({ model, agents: [researcher, writer], maxParallel: 2 });
runtime.events$.subscribe((event) => console.log(formatEvent(event)));

const topics = ['actors', 'supervision', 'metrics'];
const findings = await Promise.all(topics.map((topic) => runtime.run('researcher', topic)));
const failed = findings.filter((result) => result.status === 'failed');
if (failed.length > 0) console.error(`${failed.length} researcher(s) failed:`, failed.map((result) => result.error));

const brief = await runtime.run(
  'writer',
  ['Findings:', ...findings.map((result) => result.output ?? `(failed: ${result.error?.message})`)].join('\n'),
);

console.log(`\n${brief.output ?? `The writer failed: ${brief.error}`}\n`);
console.log(formatMetrics(runtime.metrics()));
await runtime.shutdown();
