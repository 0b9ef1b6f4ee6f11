// Files troupe wrote in earlier formats still load: each folder of test/fixtures/ is copied to a temporary folder and
// opened with the code of today, and the committed fixtures are checked unchanged afterwards.
import { createHash } from 'node:crypto';
import { cpSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeEach, describe, expect, it } from 'vitest';
import {
  createRuntime,
  defineAgent,
  JsonFileMemory,
  NOTE_SCHEMA_VERSION,
  NoteStore,
  NOTES_KEY,
  readRecording,
  RECORDING_SCHEMA_VERSION,
  SESSION_SCHEMA_VERSION,
  SESSIONS_KEY,
  STORE_SCHEMA_VERSION,
} from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { scriptedPerAgent } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const fixtures = fileURLToPath(new URL('../fixtures/', import.meta.url));
/** Every fixture folder: the format of files written before versioning, then one folder per schema version. */
const FORMATS = ['unversioned', 'v1', 'v2', 'v3', 'v4', 'v5', 'v6', 'v7', 'v8', 'v9'];
/**
 * The writer's failure as each fixture holds it: read from a text (v1) or written before model failures were wrapped in
 * a ModelCallError (v2, v3), `unexpected` with the model's message; since v4, what today's troupe writes.
 */
const WRITER_ERRORS: Record<string, { code: string; message: string }> = {
  v4: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
  v5: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
  v6: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
  v7: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
  v8: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
  v9: { code: 'model_call_failed', message: 'The model call of agent "writer" to model "scripted" failed: The model is down.' },
};
const writerError = (format: string) => WRITER_ERRORS[format] ?? { code: 'unexpected', message: 'The model is down.' };
/** The recording format of each fixture folder. */
const RECORDING_VERSIONS: Record<string, number> = { unversioned: 1, v1: 1, v2: 2, v3: 2, v4: 3, v5: 3, v6: 4, v7: 5, v8: 6, v9: 7 };
/** Since v8 a fourth run: a reporter that had to write to the blackboard first, and failed with `required_tools`. */
const hasReporter = (format: string) => RECORDING_VERSIONS[format]! >= 6;
/** Since v9 a fifth run: a listener whose wait for a message timed out (a `tool.wait_ended`), then answered. */
const hasListener = (format: string) => RECORDING_VERSIONS[format]! >= 7;
const REPORTER_ERROR = {
  code: 'required_tools',
  message: 'The agent used its one turn without calling blackboard_write, which it must call before it finishes.',
  fault: 'model',
};

/** A hash of every committed fixture file, to show the tests never change them. */
function fixtureHashes(): Record<string, string> {
  const hashes: Record<string, string> = {};
  for (const format of FORMATS) {
    for (const name of readdirSync(join(fixtures, format))) {
      hashes[`${format}/${name}`] = createHash('sha256').update(readFileSync(join(fixtures, format, name))).digest('hex');
    }
  }
  return hashes;
}

const before = fixtureHashes();
afterAll(() => expect(fixtureHashes()).toEqual(before));

const agents = ['lead', 'analyst', 'writer', 'reporter', 'listener'].map((name) =>
  defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are the ${name}.`, tools: name === 'lead' ? ['assign_task'] : [] }),
);

describe('the fixtures', () => {
  it('end with a folder in the versions written today, so a raised version comes with a fixture of its format', () => {
    const newest = join(fixtures, FORMATS.at(-1)!);
    const store = JSON.parse(readFileSync(join(newest, 'store.json'), 'utf8')) as Record<string, unknown>;
    const records = Object.values(store[SESSIONS_KEY] as Record<string, { schemaVersion?: unknown }>);
    const header = JSON.parse(readFileSync(join(newest, 'run.jsonl'), 'utf8').split('\n')[0]!) as { schemaVersion?: unknown };
    expect(store.schemaVersion).toBe(STORE_SCHEMA_VERSION);
    expect(records.map((record) => record.schemaVersion)).toEqual(records.map(() => SESSION_SCHEMA_VERSION));
    expect(records).toHaveLength(5);
    expect(header.schemaVersion).toBe(RECORDING_SCHEMA_VERSION);
    expect((store[NOTES_KEY] as { schemaVersion?: unknown }[]).map((note) => note.schemaVersion)).toEqual([NOTE_SCHEMA_VERSION]);
  });
});

describe.each(FORMATS)('the %s fixtures', (format) => {
  const dir = eachTestTempDir();
  let store: string;

  beforeEach(() => {
    cpSync(join(fixtures, format), dir.path, { recursive: true });
    store = join(dir.path, 'store.json');
  });

  it('list their sessions with their parents, outcomes and conversations', async () => {
    const runtime = createRuntime({ model: new ScriptedModel([]), agents, store: new JsonFileMemory(store), projectAgentDir: false });
    const sessions = await runtime.sessions.list();
    expect(sessions.map((session) => [session.agentType, session.state]).sort()).toEqual([
      ['analyst', 'completed'],
      ['lead', 'completed'],
      ...(hasListener(format) ? [['listener', 'completed']] : []),
      ...(hasReporter(format) ? [['reporter', 'failed']] : []),
      ['writer', 'failed'],
    ]);
    expect(sessions.map((session) => session.schemaVersion)).toEqual(sessions.map(() => SESSION_SCHEMA_VERSION)); // read in today's shape
    const byType = Object.fromEntries(sessions.map((session) => [session.agentType, session]));
    expect(byType.lead).toMatchObject({ parentConversationId: 'main', result: 'The analyst counted 7 modules.', metrics: { subtree: { modelCalls: 3 } } });
    expect(byType.analyst).toMatchObject({ parentConversationId: byType.lead!.id, taskDescription: 'Count the modules.' });
    // Every format reads in today's shape: a version-1 text error as an ErrorInfo with the code its reason implies.
    expect(byType.writer).toMatchObject({ parentConversationId: 'poems', reason: 'error', error: writerError(format), result: null });
    if (hasReporter(format)) expect(byType.reporter).toMatchObject({ parentConversationId: 'reports', reason: 'required_tools', error: REPORTER_ERROR, result: null });
    expect(await runtime.sessions.conversation(byType.analyst!.id)).toEqual([
      { role: 'user', content: 'Count the modules.' },
      { role: 'assistant', content: 'There are 7 modules: a, b, c, d, e, f, g.' },
    ]);
    // (Since v7 the lead's one tool turn has two calls: a blackboard write, then the delegation.)
    const leadTools = RECORDING_VERSIONS[format]! >= 5 ? ['tool', 'tool'] : ['tool'];
    expect((await runtime.sessions.conversation('main'))?.map((message) => message.role)).toEqual(['user', 'assistant', ...leadTools, 'assistant']);
    await runtime.shutdown();
  });

  it('resume a stored session, and the store they are in takes the new writes', async () => {
    const model = scriptedPerAgent({ analyst: [(request) => `Resumed with ${request.messages.length} messages.`] });
    const runtime = createRuntime({ model, agents, store: new JsonFileMemory(store), projectAgentDir: false });
    const analyst = (await runtime.sessions.list()).find((session) => session.agentType === 'analyst')!;
    const keys = (await new JsonFileMemory(store).keys()).sort();

    const resumed = await (await runtime.resume(analyst.id, 'Which is the largest?')).result;
    await runtime.shutdown();

    expect(resumed).toMatchObject({ id: analyst.id, status: 'completed', output: 'Resumed with 4 messages.' });
    const again = new JsonFileMemory(store);
    expect(((await again.get(SESSIONS_KEY)) as Record<string, unknown>)[analyst.id]).toMatchObject({ state: 'completed', parentConversationId: analyst.parentConversationId });
    expect(await again.get(analyst.id)).toHaveLength(4);
    expect((await again.keys()).sort()).toEqual(keys);
    expect(JSON.parse(readFileSync(store, 'utf8'))).toMatchObject({ schemaVersion: STORE_SCHEMA_VERSION }); // written in today's format
  });

  it('read their recording: every event of the run that wrote the sessions, in order', async () => {
    const recording = await readRecording(join(dir.path, 'run.jsonl'));
    expect(recording.schemaVersion).toBe(RECORDING_VERSIONS[format]);
    expect(recording.events.every((event) => event.runId === recording.runId)).toBe(true);
    // Each agent's last end (since version 4 the writer fails twice: restarted once, then escalated).
    const ends = recording.events.filter(
      (event, index, all) =>
        (event.type === 'agent.completed' || event.type === 'agent.failed') &&
        !all.slice(index + 1).some((later) => later.agentId === event.agentId && (later.type === 'agent.completed' || later.type === 'agent.failed')),
    );
    // (In order of their names: since version 5 the writer's first attempt takes a turn more, and ends later.)
    expect(ends.map((event) => [event.type, event.agentId.split(':')[1]]).sort((a, b) => a[1]!.localeCompare(b[1]!))).toEqual([
      ['agent.completed', 'analyst'],
      ['agent.completed', 'lead'],
      ...(hasListener(format) ? [['agent.completed', 'listener']] : []),
      ...(hasReporter(format) ? [['agent.failed', 'reporter']] : []),
      ['agent.failed', 'writer'],
    ]);
    // Since version 7 a waiting call's tool.result is `waiting`, and its wait's end a tool.wait_ended: the listener's
    // wait for a message timed out after its second.
    const waits = recording.events.filter((event) => event.type === 'tool.wait_ended' || (event.type === 'tool.result' && event.waiting));
    expect(waits.map((event) => [event.type, event.agentId.split(':')[1], event.type === 'tool.wait_ended' ? [event.outcome, event.status, event.durationMs] : event.at])).toEqual(
      hasListener(format) ? [['tool.result', 'listener', 0], ['tool.wait_ended', 'listener', ['timeout', 'error', 1000]]] : [],
    );
    if (hasListener(format)) {
      const records = Object.values(JSON.parse(readFileSync(store, 'utf8'))[SESSIONS_KEY] as Record<string, { agentType: string }>);
      expect(records.find((record) => record.agentType === 'listener')).toMatchObject({ result: 'Nobody wrote.', metrics: { own: { toolCalls: 1, toolErrors: 1 } } });
    }
    // Since version 6 a failure may have reason and code required_tools.
    if (hasReporter(format)) expect(ends.find((event) => event.agentId.includes(':reporter:'))).toMatchObject({ reason: 'required_tools', error: REPORTER_ERROR });
    // A version-1 failure (a text error) reads as today's ErrorInfo, its code what its reason implies.
    expect(ends.find((event) => event.agentId.includes(':writer:'))).toMatchObject({ reason: 'error', error: writerError(format) });
    // Since version 3 a recording may hold model.retry events: the analyst's first call was tried again.
    const retries = recording.events.filter((event) => event.type === 'model.retry');
    expect(retries.map((event) => event.agentId.split(':')[1])).toEqual(RECORDING_VERSIONS[format]! >= 3 ? ['analyst'] : []);
    // Since version 4 it may hold agent.restarted and agent.escalated: the writer was restarted once, then escalated.
    const supervision = recording.events.filter((event) => event.type === 'agent.restarted' || event.type === 'agent.escalated');
    expect(supervision.map((event) => [event.type, event.agentId.split(':')[1]])).toEqual(
      RECORDING_VERSIONS[format]! >= 4 ? [['agent.restarted', 'writer'], ['agent.escalated', 'writer']] : [],
    );
    // Since version 5 it may hold todo.updated: the writer's first attempt wrote its list (and saved a note, which the
    // store keeps under __agent_notes__ and a search of today finds).
    const todos = recording.events.filter((event) => event.type === 'todo.updated');
    expect(todos.map((event) => [event.agentId.split(':')[1], event.items.map((item) => item.status)])).toEqual(
      RECORDING_VERSIONS[format]! >= 5 ? [['writer', ['in_progress', 'pending']]] : [],
    );
    const notes = await new NoteStore(new JsonFileMemory(store)).search('syllables of a haiku', { agentName: 'analyst' });
    expect(notes.hits.map((hit) => hit.note.content)).toEqual(RECORDING_VERSIONS[format]! >= 5 ? ['Haiku: five, seven and five syllables.'] : []);
    // Since version 5 it may hold tool.plan: the lead's turn of two calls, the delegation waiting for the blackboard write,
    // and the writer's, whose two calls run side by side.
    const plans = recording.events.filter((event) => event.type === 'tool.plan');
    expect(plans.map((event) => [event.agentId.split(':')[1], event.stages, event.waits.map((wait) => wait.reason)])).toEqual(
      RECORDING_VERSIONS[format]! >= 5
        ? [
            ['lead', [['c0'], ['c1']], ['reads blackboard:question that c0 writes']],
            ['writer', [['w1', 'w2']], []], // its todo list and its note: no conflict
          ]
        : [],
    );
    const runtime = createRuntime({ model: new ScriptedModel([]), agents, store: new JsonFileMemory(store), projectAgentDir: false });
    // (A restarted agent is spawned again under its id: one session per id.)
    const spawned = [...new Set(recording.events.filter((event) => event.type === 'agent.spawned').map((event) => event.agentId))];
    expect(spawned.sort()).toEqual((await runtime.sessions.list()).map((session) => session.id).sort());
    await runtime.shutdown();
  });
});
