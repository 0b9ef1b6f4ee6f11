// A coding team on a real workspace. A lead hands three file edits to three coders in one reply, each naming the
// files it touches (`targets`, paths and globs): a rename across `src/**/*.ts`, a new helper in `src/util.ts`, and the
// README. The planner sees the rename and the helper overlap (`src/util.ts` is one of `src/**/*.ts`), so the helper
// waits for the rename; the README edit runs beside it. The coders edit the files with the file tools (`edit_file`)
// in a temporary folder; the plan, the timeline and the files are printed. Offline, in simulated time.
//
//   npx tsx examples/coding-team.ts
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, formatEvent, formatTimeline, type ModelRequest, type TroupeEvent } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

const workspace = mkdtempSync(join(tmpdir(), 'troupe-team-'));
const files: Record<string, string> = {
  'src/util.ts': 'export function greet(name: string): string {\n  return `Hello, ${name}`;\n}\n',
  'src/main.ts': "import { greet } from './util.js';\n\nconsole.log(greet('Ada'));\n",
  'README.md': '# team\n\nPrints a greeting.\n',
};
for (const [path, text] of Object.entries(files)) {
  mkdirSync(dirname(join(workspace, path)), { recursive: true });
  writeFileSync(join(workspace, path), text);
}

const lead = defineAgent({ name: 'lead', description: 'Splits the work.', systemPrompt: 'Hand each change to a coder.', tools: ['assign_task'] });
// A coder may write (edit_file and write_file are write tools): a task for it is a write of the task's targets.
const coder = defineAgent({
  name: 'coder',
  description: 'Edits the files of the workspace.',
  systemPrompt: 'Make the change you are given with edit_file (read_file first if you need to), then say what you changed.',
  tools: ['read_file', 'edit_file', 'write_file'],
});

/** The task a coder was given (its first user message). */
const taskOf = (request: ModelRequest) => String(request.messages.find((message) => message.role === 'user')?.content ?? '');
/** Each coder's one turn of edits, chosen by its task. */
function edits(request: ModelRequest) {
  const task = taskOf(request);
  if (task.startsWith('Rename')) {
    return callTools(
      toolCall('edit_file', { path: 'src/util.ts', old_string: 'function greet', new_string: 'function welcome' }, 'u'),
      toolCall('edit_file', { path: 'src/main.ts', old_string: 'greet', new_string: 'welcome', replace_all: true }, 'm'),
    );
  }
  if (task.startsWith('Add')) {
    // The helper goes above `welcome`, which exists only once the rename ran: had the two run together, this edit
    // could have found `greet` still there and failed.
    const helper = 'export const shout = (text: string): string => text.toUpperCase();\n\n';
    return callTools(toolCall('edit_file', { path: 'src/util.ts', old_string: 'export function welcome', new_string: `${helper}export function welcome` }, 'h'));
  }
  return callTools(toolCall('edit_file', { path: 'README.md', old_string: 'Prints a greeting.', new_string: 'Prints a welcome; `shout` shouts it.' }, 'r'));
}

const model = ScriptedModel.perAgent(
  {
    lead: [
      callTools(
        assignCall('coder', 'Rename greet to welcome everywhere in src.', { id: 'rename', description: 'rename greet', targets: ['src/**/*.ts'] }),
        assignCall('coder', 'Add a shout helper to src/util.ts.', { id: 'helper', description: 'add shout', targets: ['src/util.ts'] }),
        assignCall('coder', 'Update the README for welcome and shout.', { id: 'readme', description: 'update the README', targets: ['README.md'] }),
      ),
      'The rename, the helper and the README are done.',
    ],
    coder: [edits, (request) => `Done: ${taskOf(request)}`],
  },
  // Each model turn takes a simulated second, so the timeline shows who waited.
  { latencyMs: 1_000 },
);

const clock = new SimulatedClock();
const runtime = createRuntime({ model, agents: [lead, coder], workspace, clock, projectAgentDir: false });
const events: TroupeEvent[] = [];
runtime.events$.subscribe((event) => {
  events.push(event);
  if (event.type === 'tool.plan' && event.agentId.startsWith('agent:lead:')) console.log(formatEvent(event));
});

const result = runtime.run('lead', 'Rename greet to welcome, add a shout helper, and update the README.');
await runtime.runUntilIdle();
console.log(`\nlead: ${(await result).output}`);
const plan = events.find((event) => event.type === 'tool.plan' && event.agentId.startsWith('agent:lead:'));
if (plan?.type === 'tool.plan') {
  console.log(`ran together: ${plan.stages.map((stage) => stage.join(' + ')).join(', then ')}`);
  for (const wait of plan.waits) console.log(`${wait.callId} waited for ${wait.after.join(', ')}: ${wait.reason}`);
}
console.log(`\n${formatTimeline(events, { width: 40 })}`);
const after = Object.fromEntries(Object.keys(files).map((path) => [path, readFileSync(join(workspace, path), 'utf8')]));
for (const [path, text] of Object.entries(after)) console.log(`\n--- ${path}\n${text.trimEnd()}`);
await runtime.shutdown();
rmSync(workspace, { recursive: true, force: true });
// What the run must show: the helper waited for the rename, and every edit landed.
const waited = plan?.type === 'tool.plan' && plan.waits.some((wait) => wait.callId === 'helper' && wait.after.includes('rename'));
const landed = after['src/util.ts']!.includes('shout') && !`${after['src/util.ts']}${after['src/main.ts']}`.includes('greet') && after['README.md']!.includes('welcome');
if (!waited || !landed) process.exitCode = 1;
