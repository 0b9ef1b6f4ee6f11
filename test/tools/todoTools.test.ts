// todo_write and todo_read: an agent's own task list, kept in its conversation, through real runtimes, a real
// JsonFileMemory in a temporary folder and ScriptedModels on simulated time.
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineAgent,
  formatEvent,
  formatTimeline,
  formatTodos,
  JsonFileMemory,
  todosOf,
  type ChatMessage,
  type ModelRequest,
  type TodoItem,
  type TroupeEventOf,
} from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { collect, scriptedPerAgent, simulatedClock } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const planner = defineAgent({ name: 'planner', description: 'Plans.', systemPrompt: 'You plan.', tools: ['todo_write', 'todo_read'] });
const plain = defineAgent({ name: 'plain', description: 'Lists no tools.', systemPrompt: 'You answer.' });

const list: TodoItem[] = [
  { id: 'spec', content: 'Read the spec', status: 'done' },
  { id: 'parse', content: 'Write the parser', status: 'in_progress' },
  { id: 'test', content: 'Test the parser', status: 'pending' },
];

/** The tool messages of the last request the model got. */
const toolMessages = (request: ModelRequest) =>
  request.messages.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
const lastTool = (request: ModelRequest) => toolMessages(request).at(-1)!;

describe('todo_write and todo_read', () => {
  const dir = eachTestTempDir();

  it('are there in a runtime with a workspace too (its file tools rooted there beside them)', async () => {
    const model = scriptedPerAgent({ planner: [callTools(toolCall('todo_write', { items: list })), 'Planned.'] });
    const runtime = createRuntime({ model, agents: [planner], clock: simulatedClock(), projectAgentDir: false, workspace: dir.path });
    const events = collect(runtime.events$);
    const result = await runtime.run('planner', 'Plan the parser.');
    await runtime.shutdown();
    expect(result.status).toBe('completed');
    expect(events.filter((event) => event.type === 'todo.updated')).toHaveLength(1);
  });

  it('keep the list across turns: a read in a later turn gets what the last write wrote, and a write replaces the whole list', async () => {
    const seen: string[] = [];
    const model = scriptedPerAgent({
      planner: [
        callTools(toolCall('todo_write', { items: list })),
        callTools(toolCall('todo_write', { items: [{ id: 'ship', content: 'Ship it', status: 'pending' }] })),
        callTools(toolCall('todo_read', {})),
        (request) => {
          seen.push(lastTool(request).content);
          return 'Planned.';
        },
      ],
    });
    const runtime = createRuntime({ model, agents: [planner], clock: simulatedClock(), projectAgentDir: false });

    const result = await runtime.run('planner', 'Plan the parser.');
    await runtime.shutdown();

    expect(result.status).toBe('completed');
    expect(seen).toEqual(['1 item: 0 done, 0 in progress, 1 pending.\n[ ] ship: Ship it']);
  });

  it('read a list written earlier in the same turn', async () => {
    let read = '';
    const model = scriptedPerAgent({
      planner: [
        callTools(toolCall('todo_write', { items: list }), toolCall('todo_read', {})),
        (request) => {
          read = lastTool(request).content;
          return 'Done.';
        },
      ],
    });
    const runtime = createRuntime({ model, agents: [planner], clock: simulatedClock(), projectAgentDir: false });

    await runtime.run('planner', 'Plan.');
    await runtime.shutdown();

    expect(read).toBe(formatTodos(list));
  });

  it('keep the list in the session: a resumed agent reads it, from a JsonFileMemory store read by a second runtime', async () => {
    const file = join(dir.path, 'store.json');
    const first = createRuntime({
      model: scriptedPerAgent({ planner: [callTools(toolCall('todo_write', { items: list })), 'Started on the parser.'] }),
      agents: [planner],
      store: new JsonFileMemory(file),
      clock: simulatedClock(),
      projectAgentDir: false,
    });
    const { id } = await first.run('planner', 'Plan the parser.');
    await first.shutdown();

    let read = '';
    const second = createRuntime({
      model: scriptedPerAgent({
        planner: [
          callTools(toolCall('todo_read', {}, 'again')),
          (request) => {
            read = lastTool(request).content;
            return 'Carrying on.';
          },
        ],
      }),
      agents: [planner],
      store: new JsonFileMemory(file),
      clock: simulatedClock(),
      projectAgentDir: false,
    });
    const stored = await second.sessions.conversation(id);
    const resumed = await (await second.resume(id, 'Carry on.')).result;
    await second.shutdown();

    expect(todosOf(stored ?? [])).toEqual(list);
    expect(resumed.status).toBe('completed');
    expect(read).toBe(formatTodos(list));
  });

  it('refuse an invalid list with an error result the model sees, and keep the last valid one', async () => {
    const errors: string[] = [];
    let read = '';
    const twoAtOnce = list.map((item) => ({ ...item, status: 'in_progress' }));
    const sameId = [list[0], { ...list[1], id: 'spec' }];
    const model = scriptedPerAgent({
      planner: [
        callTools(toolCall('todo_write', { items: list }, 'good')),
        callTools(toolCall('todo_write', { items: twoAtOnce }, 'busy'), toolCall('todo_write', { items: sameId }, 'twins')),
        (request) => {
          errors.push(...toolMessages(request).filter((message) => message.isError).map((message) => message.content));
          return callTools(toolCall('todo_read', {}, 'read'));
        },
        (request) => {
          read = lastTool(request).content;
          return 'Checked.';
        },
      ],
    });
    const runtime = createRuntime({ model, agents: [planner], clock: simulatedClock(), projectAgentDir: false });
    const events = collect(runtime.events$);

    const result = await runtime.run('planner', 'Plan.');
    await runtime.shutdown();

    expect(result.status).toBe('completed');
    expect(errors).toHaveLength(2);
    expect(errors[0]).toContain('At most one item may be in_progress (found 3: "spec", "parse", "test")');
    expect(errors[1]).toContain('The id "spec" is used by more than one item');
    expect(read).toBe(formatTodos(list));
    expect(events.filter((event) => event.type === 'todo.updated')).toHaveLength(1);
  });

  it('announce each list as a todo.updated event, which formatEvent and formatTimeline show', async () => {
    const done = list.map((item) => ({ ...item, status: 'done' as const }));
    const model = scriptedPerAgent({
      planner: [callTools(toolCall('todo_write', { items: list }, 'w1')), callTools(toolCall('todo_write', { items: done }, 'w2')), 'All done.'],
    });
    const runtime = createRuntime({ model, agents: [planner], clock: simulatedClock(), projectAgentDir: false, runId: 'run-1' });
    const events = collect(runtime.events$);

    const { id } = await runtime.run('planner', 'Plan.');
    await runtime.shutdown();

    const updates = events.filter((event): event is TroupeEventOf<'todo.updated'> => event.type === 'todo.updated');
    expect(updates.map(({ type, runId, agentId, callId, items }) => ({ type, runId, agentId, callId, items }))).toEqual([
      { type: 'todo.updated', runId: 'run-1', agentId: id, callId: 'w1', items: list },
      { type: 'todo.updated', runId: 'run-1', agentId: id, callId: 'w2', items: done },
    ]);
    expect(formatEvent(updates[0]!)).toMatch(/planner:\w{4}\s+todo 1\/3 done, now: Write the parser$/);
    const timeline = formatTimeline(events, { width: 20 }).split('\n');
    const row = timeline.findIndex((line) => line.startsWith('planner:'));
    expect(timeline.slice(row + 1, row + 5).map((line) => line.trim())).toEqual([
      'todo 3/3 done',
      '[x] spec: Read the spec',
      '[x] parse: Write the parser',
      '[x] test: Test the parser',
    ]);
  });

  it('are offered only to agents that list them', async () => {
    const offered: string[][] = [];
    const model = scriptedPerAgent({
      plain: [
        (request) => {
          offered.push(request.tools.map((tool) => tool.name));
          return callTools(toolCall('todo_write', { items: list }));
        },
        (request) => `${lastTool(request).content}`,
      ],
    });
    const runtime = createRuntime({ model, agents: [plain], clock: simulatedClock(), projectAgentDir: false });

    const result = await runtime.run('plain', 'Plan.');
    await runtime.shutdown();

    expect(offered).toEqual([[]]);
    expect(result.output).toMatch(/^Error: .*todo_write/);
  });
});
