// troupe's web inspector: watch a run live in a browser, then scrub back through it. An editor hands three stories to
// reporters at once; each reporter searches, sends the editor a note and files its story; the editor then writes the
// front page. Scripted models answer after 0.3–1.2 s of real time, so there is something to watch.
//
//   npx tsx examples/web-inspector.ts                  # prints the page to open; Ctrl-C to exit after the run
//   npx tsx examples/web-inspector.ts --record run.jsonl
//   npx troupe ui run.jsonl                            # the saved run again, to scrub through
//
//   test: --exit
import { z } from 'zod';
import { createRuntime, createWebInspector, defineAgent, defineTool, type ModelRequest } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

const flag = (name: string) => process.argv.indexOf(name);
const record = flag('--record') > 0 ? process.argv[flag('--record') + 1] : undefined;
const exitAfterRun = flag('--exit') > 0;

const search = defineTool({
  name: 'search',
  description: 'Searches the news wire.',
  parameters: z.object({ query: z.string() }),
  kind: 'read',
  execute: ({ query }) => `Wire: three sources confirm "${query}".`,
});

const editor = defineAgent({
  name: 'editor',
  description: 'Assigns stories and writes the front page.',
  systemPrompt: 'Assign the stories at once, then write the front page from what the reporters file.',
  tools: ['assign_task'],
});
const reporter = defineAgent({
  name: 'reporter',
  description: 'Reports one story.',
  systemPrompt: 'Search the wire, tell the editor what you found, then file the story.',
  tools: [search, 'send_message'],
  canMessage: ['editor'],
});

const stories = ['harbour reopens', 'city budget passes', 'rain returns'];
const filed = (request: ModelRequest) => request.messages.filter((message) => message.role === 'tool').map((message) => message.content.split('\n\n[agent_id')[0]);

const model = ScriptedModel.perAgent(
  {
    editor: [callTools(...stories.map((story, index) => assignCall('reporter', `Report: ${story}.`, { description: story, id: `story-${index}` }))), (request) => `Front page: ${filed(request).join(' ')}`],
    reporter: [
      (request) => callTools(toolCall('search', { query: request.messages[1]?.content ?? 'news' })),
      callTools(toolCall('send_message', { to: 'editor', content: 'Sources confirmed; filing now.' })),
      (request) => `Filed: ${String(request.messages[1]?.content).replace(/^Report: /, '')}`,
    ],
  },
  { model: 'gpt-4o-mini', latencyMs: (request) => 300 + Math.floor(request.random() * 900) },
);

// `createRuntime({ ui: true })` starts one too (closed at shutdown); one of our own outlives the run until Ctrl-C.
const inspector = createWebInspector({ title: 'newsroom' });
console.log(`Open ${await inspector.url} to watch the run.`);
const runtime = createRuntime({ agents: [editor, reporter], model, seed: 11, ...(record ? { record } : {}) });
inspector.watch(runtime.events$);
const result = await runtime.run('editor', "Put together today's front page.");
await runtime.shutdown();
model.assertDone();
console.log(`\n${result.output}\n`);
if (record) console.log(`Saved the run to ${record}: npx troupe ui ${record}`);
if (!exitAfterRun) {
  console.log('The page keeps showing the run; scrub back with its slider. Ctrl-C to exit.');
  await new Promise((resolve) => process.once('SIGINT', resolve));
}
await inspector.close();
