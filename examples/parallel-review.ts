// `npm start`: a lead agent reviews a small repository by handing three tasks to three specialists at once (a
// security audit, a docs update, a search for TODO comments), then sums up what they found. Every agent runs on a
// scripted model, so no key or network is needed; the specialists really call their tools on the files below.
// Run as a script it prints every event, a timeline and the metrics; its default export is a scenario, so the troupe
// command can run it too, with its live tree.
//
//   npx tsx examples/parallel-review.ts
//   npx troupe run examples/parallel-review.ts
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import {
  createRuntime,
  defineAgent,
  defineTool,
  formatEvent,
  formatMetrics,
  formatTimeline,
  type ModelRequest,
  type Runtime,
  type Scenario,
  type TroupeEvent,
} from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

// ── A small repository, in memory ──────────────────────────────────────────────────────────────────────
const files = new Map<string, string>([
  ['src/server.ts', 'export function handle(query: string) {\n  // TODO: validate the query\n  return eval(query);\n}\n'],
  ['src/db.ts', 'export const url = process.env.DB_URL;\n// TODO: pool connections\n'],
  ['README.md', '# shop\n\nA tiny shop server. Run `npm start`.\n'],
]);

const grep = defineTool({
  name: 'grep',
  description: 'Finds the lines that contain a text, in every file.',
  parameters: z.object({ text: z.string().min(1) }),
  kind: 'read',
  execute: ({ text }) =>
    [...files].flatMap(([path, body]) =>
      body.split('\n').flatMap((line, index) => (line.includes(text) ? [`${path}:${index + 1}: ${line.trim()}`] : [])),
    ),
});

const readFile = defineTool({
  name: 'read_file',
  description: 'Reads one file.',
  parameters: z.object({ path: z.string() }),
  kind: 'read',
  targets: ({ path }) => [path],
  execute: ({ path }) => files.get(path) ?? `No file ${path}.`,
});

const writeFile = defineTool({
  name: 'write_file',
  description: 'Writes one file.',
  parameters: z.object({ path: z.string(), content: z.string() }),
  kind: 'write',
  targets: ({ path }) => [path],
  execute: ({ path, content }) => (files.set(path, content), `Wrote ${content.length} characters to ${path}.`),
});

// ── The agents ─────────────────────────────────────────────────────────────────────────────────────────
const lead = defineAgent({
  name: 'lead',
  description: 'Reviews a repository by delegating to specialists.',
  systemPrompt: 'You lead a code review. Hand independent tasks to specialists at once, then sum up.',
  tools: ['assign_task', 'task_output'],
});
const auditor = defineAgent({
  name: 'security-auditor',
  description: 'Audits code for security problems such as eval or injection.',
  systemPrompt: 'You audit code for security problems. Search, then report each finding with its line.',
  tools: [grep, readFile],
  examples: ['Audit src/ for uses of eval'],
});
const docsWriter = defineAgent({
  name: 'docs-writer',
  description: 'Keeps the documentation in step with the code.',
  systemPrompt: 'You update the docs. Read the README and the code, then write docs/api.md.',
  tools: [readFile, writeFile],
});
const todoFinder = defineAgent({
  name: 'todo-finder',
  description: 'Lists the TODO comments left in the code.',
  systemPrompt: 'You find TODO comments and list them with their place.',
  tools: [grep],
});

// ── Scripted models: what a real model would answer, step by step ─────────────────────────────────────
const lastTool = (request: ModelRequest) => [...request.messages].reverse().find((message) => message.role === 'tool')?.content ?? '';
const answers = (request: ModelRequest) =>
  request.messages.filter((message) => message.role === 'tool').map((message) => message.content.split('\n\n[agent_id')[0]);

const model = ScriptedModel.perAgent(
  {
    lead: [
      {
        content: 'Three independent checks: I will run them side by side.',
        toolCalls: [
          assignCall('security-auditor', 'Audit src/ for dangerous calls.', { description: 'Audit src for security problems', id: 'audit' }),
          assignCall('docs-writer', 'Write docs/api.md for src/server.ts.', { description: 'Write the API docs from the code', id: 'docs' }),
          assignCall('todo-finder', 'List every TODO in the code.', { description: 'List the TODO comments in src', id: 'todos' }),
        ],
      },
      (request) => `Review summary:\n${answers(request).map((answer) => `- ${answer}`).join('\n')}`,
    ],
    'security-auditor': [
      callTools(toolCall('grep', { text: 'eval(' })),
      (request) => `1 finding: ${JSON.parse(lastTool(request))[0]} runs user input as code.`,
    ],
    'docs-writer': [
      callTools(toolCall('read_file', { path: 'src/server.ts' })),
      callTools(toolCall('write_file', { path: 'docs/api.md', content: '# API\n\n`handle(query)` answers one query.\n' })),
      (request) => `Docs updated: ${lastTool(request)}`,
    ],
    'todo-finder': [
      callTools(toolCall('grep', { text: 'TODO' })),
      (request) => `${JSON.parse(lastTool(request)).length} TODOs: ${JSON.parse(lastTool(request)).join('; ')}`,
    ],
  },
  { model: 'gpt-4o-mini', latencyMs: (request) => 200 + 20 * request.messages.length },
);

// ── Run ────────────────────────────────────────────────────────────────────────────────────────────────
const agents = [lead, auditor, docsWriter, todoFinder];
const review = (runtime: Runtime) => runtime.run('lead', 'Review this repository: security, docs and TODOs.');

/** `troupe run examples/parallel-review.ts`: the command makes the runtime and shows the run. */
export default { agents, model, run: review } satisfies Scenario;

/** `npm start`: a runtime of its own, every event as a log line, then the timeline and the metrics. */
async function main(): Promise<void> {
  const runtime = createRuntime({ model, agents, maxParallel: 4 });
  const events: TroupeEvent[] = [];
  runtime.events$.subscribe((event) => {
    events.push(event);
    console.log(formatEvent(event));
  });

  const result = await review(runtime);

  console.log(`\n${result.status === 'completed' ? result.output : `The lead failed (${result.reason}): ${result.error?.message}`}\n`);
  console.log('Who ran when (█ running, · waiting):');
  console.log(formatTimeline(events));
  console.log(`\n${formatMetrics(runtime.metrics())}`);
  await runtime.shutdown();
  process.exitCode = result.status === 'completed' ? 0 : 1;
}

if (process.argv[1] !== undefined && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await main();
