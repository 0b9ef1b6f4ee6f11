// A turn's tool calls, planned in the open. A lead hands four tasks out in one reply, each naming its `targets` (paths,
// directories, globs) and some `context`: tasks whose targets overlap run one after another in the order asked, the
// others side by side. The plan is an event (`tool.plan`): its stages and why each waiting call waits; the timeline
// shows it below the bars. Offline on a scripted model, in simulated time (each edit takes one simulated second).
//
//   npx tsx examples/planned-tools.ts
import { SimulatedClock } from 'xstate';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, formatEvent, formatTimeline, sleep, type ModelRequest, type TroupeEvent } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

// Two file tools of the kind the planner knows: their targets are the paths or globs they are given.
function fileTool(name: string, kind: 'read' | 'write', ms: number) {
  return defineTool({
    name,
    description: `${kind === 'read' ? 'Reads' : 'Edits'} the files a path or glob names.`,
    parameters: z.object({ path: z.string() }),
    kind,
    targets: ({ path }) => [path],
    execute: async ({ path }, { clock }) => {
      await sleep(clock, ms);
      return `${kind === 'read' ? 'read' : 'edited'} ${path}`;
    },
  });
}
const editFiles = fileTool('edit_files', 'write', 1_000);
const readFiles = fileTool('read_files', 'read', 500);

// An editor may write (edit_files is a write tool), so a task for it with targets is a write of them; the reviewer has
// only read tools, so its task is a read of its targets.
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Split the work.', tools: ['assign_task'] });
const editor = defineAgent({ name: 'editor', description: 'Edits code and docs.', systemPrompt: 'Edit.', tools: [editFiles] });
const reviewer = defineAgent({ name: 'reviewer', description: 'Reviews code.', systemPrompt: 'Review.', tools: [readFiles] });

/** The task a sub-agent was given (its first message), with the context below it. */
const taskOf = (request: ModelRequest) => String(request.messages.find((message) => message.role === 'user')?.content ?? '');
/** A sub-agent's first turn: one call of its tool on the path its task names after "in ". */
const work = (tool: string) => (request: ModelRequest) => callTools(toolCall(tool, { path: /in (\S+)/.exec(taskOf(request))?.[1] ?? '.' }));

const model = ScriptedModel.perAgent({
  lead: [
    callTools(
      assignCall('editor', 'Rename the types in src/parser/**', { id: 'parser', description: 'rename parser types', targets: ['src/parser/**'], context: 'Types end in Node since v2.' }),
      assignCall('editor', 'Fix the links in docs/**/*.md', { id: 'docs', description: 'fix doc links', targets: ['docs/**/*.md'] }),
      assignCall('editor', 'Tidy the lexer in src/lexer.ts', { id: 'lexer', description: 'tidy the lexer', targets: ['src/lexer.ts'] }),
      assignCall('reviewer', 'Review the renames in src/parser/**', { id: 'review', description: 'review the renames', targets: ['src/parser/**/*.ts'] }),
    ),
    'The parser, docs and lexer are done, and the renames reviewed.',
  ],
  editor: [work('edit_files'), (request) => `Done: ${taskOf(request).split('\n')[0]}`],
  reviewer: [work('read_files'), 'The renames look right.'],
});

const clock = new SimulatedClock();
const runtime = createRuntime({ model, agents: [lead, editor, reviewer], clock, maxToolConcurrency: 4, projectAgentDir: false });
const events: TroupeEvent[] = [];
runtime.events$.subscribe((event) => {
  events.push(event);
  if (event.type === 'tool.plan' || event.type === 'agent.spawned') console.log(formatEvent(event));
});

const result = runtime.run('lead', 'Clean up the project.');
await runtime.runUntilIdle();
console.log(`\nlead: ${(await result).output}`);
console.log(`simulated time: ${clock.now()} ms (the review waits for the parser's edit; the rest ran side by side)\n`);
console.log(formatTimeline(events, { width: 40 }));
await runtime.shutdown();
