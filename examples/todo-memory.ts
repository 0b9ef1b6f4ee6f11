// An agent's todo list and long-term notes, across two runtimes on one store file (as two runs of a program would be).
// Run 1: a coder plans its work with todo_write, works through the list, and saves what it learnt with memory_save.
// Run 2, a new runtime on the same JsonFileMemory file: a reviewer finds the shared note with memory_search (ranked by
// BM25 here: a scripted model has no embeddings; an OpenAIModel ranks by them), and the coder's session is resumed:
// its todo list is still there, because it lives in the conversation the session store keeps.
//
//   npx tsx examples/todo-memory.ts
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRuntime, defineAgent, formatEvent, formatTimeline, JsonFileMemory, todosOf, type TodoItem, type TroupeEvent } from 'troupe';
import { callTools, ScriptedModel, TestClock, toolCall } from 'troupe/testing';

const folder = mkdtempSync(join(tmpdir(), 'troupe-todo-memory-'));
const store = join(folder, 'store.json');
const tools = ['todo_write', 'todo_read', 'memory_save', 'memory_search'];
const coder = defineAgent({ name: 'coder', description: 'Writes code.', systemPrompt: 'You write code. Plan with a todo list.', tools });
const reviewer = defineAgent({ name: 'reviewer', description: 'Reviews code.', systemPrompt: 'You review code.', tools });

const plan = (statuses: TodoItem['status'][]) => ({
  items: [
    { id: 'read', content: 'Read the parser issue' },
    { id: 'fix', content: 'Fix the off-by-one in the tokenizer' },
    { id: 'test', content: 'Add a test for the last token' },
  ].map((item, index) => ({ ...item, status: statuses[index]! })),
});

// Run 1: the coder's list moves along, and it keeps a lesson for later runs (shared: every agent may find it).
const model1 = ScriptedModel.perAgent(
  {
    coder: [
      callTools(toolCall('todo_write', plan(['in_progress', 'pending', 'pending']), 'plan')),
      callTools(toolCall('todo_write', plan(['done', 'in_progress', 'pending']), 'fixing')),
      callTools(
        toolCall('todo_write', plan(['done', 'done', 'in_progress']), 'testing'),
        toolCall('memory_save', {
          content: 'The tokenizer tests run with `npx vitest run test/tokenizer`; the last token is the edge case.',
          tags: ['tests', 'tokenizer'],
          scope: 'shared',
        }),
      ),
      'Fixed the off-by-one; the test is next.',
    ],
  },
  { latencyMs: 400 }, // each model turn takes 0.4 s of simulated time, so the timeline has a length
);
const events: TroupeEvent[] = [];
const first = createRuntime({ model: model1, agents: [coder, reviewer], store: new JsonFileMemory(store), clock: new TestClock(), projectAgentDir: false });
first.events$.subscribe((event) => {
  events.push(event);
  if (event.type === 'todo.updated' || (event.type === 'tool.call' && event.tool === 'memory_save')) console.log(formatEvent(event));
});
const handle = first.spawn('coder', 'Fix the tokenizer bug from the parser issue.');
await first.runUntilIdle();
const { id } = await handle.result;
await first.shutdown();
console.log(`\n${formatTimeline(events, { width: 30 })}\n`);

// Run 2: another runtime over the same file.
const model2 = ScriptedModel.perAgent({
  reviewer: [callTools(toolCall('memory_search', { query: 'how do I run the tokenizer tests' })), 'I will run the tokenizer tests.'],
  coder: [callTools(toolCall('todo_read', {}, 'where-was-I')), 'Writing the test for the last token now.'],
});
const second = createRuntime({ model: model2, agents: [coder, reviewer], store: new JsonFileMemory(store), clock: new TestClock(), projectAgentDir: false });
second.events$.subscribe((event) => {
  if (event.type === 'tool.result' && (event.tool === 'memory_search' || event.tool === 'todo_read')) {
    console.log(`${event.tool} gave the ${event.agentId.split(':')[1]}:\n${event.content}\n`);
  }
});
console.log(`the coder's list, read from its stored session: ${todosOf((await second.sessions.conversation(id)) ?? []).length} items`);
await second.run('reviewer', 'Review the tokenizer fix.');
const resumed = await (await second.resume(id, 'Carry on where you left off.')).result;
console.log(`coder (resumed): ${resumed.output}`);
await second.shutdown();
rmSync(folder, { recursive: true, force: true });
