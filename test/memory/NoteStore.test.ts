// Long-term notes in a real JsonFileMemory file: scopes, redaction, BM25 ranking offline, and ranking by embeddings
// from an OpenAIModel against the loopback OpenAI-compatible server (and the fall back to BM25 when it cannot embed).
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { ConfigurationError, InMemoryMemory, JsonFileMemory, NOTES_KEY, NoteStore, OpenAIModel, Redactor } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';
import { eachTestTempDir } from '../support/tempDir.js';

/** Three axes of meaning (vehicles, food, weather): a text's vector counts its words of each. */
const AXES = [
  ['car', 'automobile', 'truck', 'parked', 'garage'],
  ['pizza', 'lunch', 'food', 'hungry'],
  ['rain', 'umbrella', 'weather', 'sunny'],
];
const meaning = (text: string) => AXES.map((words) => text.toLowerCase().split(/\W+/).filter((word) => words.includes(word)).length);

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

/** A store with these notes saved by `agentName`, shared unless told. */
async function storeWith(contents: readonly string[], memory = new InMemoryMemory()): Promise<NoteStore> {
  const notes = new NoteStore(memory, { makeId: counter() });
  for (const content of contents) await notes.save(content, { agentName: 'scribe', scope: 'shared' });
  return notes;
}

function counter(): () => string {
  let next = 0;
  return () => String(++next);
}

describe('NoteStore', () => {
  const dir = eachTestTempDir();

  it('ranks by BM25 offline: a note with every term first, a rare term above a common one, no match left out', async () => {
    const notes = await storeWith([
      'Deploy to staging first.',
      'Rollback plan: keep the last build.',
      'Deploy to production on Tuesdays.',
      'Lunch is at noon.',
      'Deploy, and rollback if the checks fail.',
    ]);

    const found = await notes.search('deploy rollback', { agentName: 'anyone' });

    expect(found.ranking).toBe('lexical');
    const contents = found.hits.map((hit) => hit.note.content);
    expect(contents[0]).toBe('Deploy, and rollback if the checks fail.');
    expect(contents[1]).toBe('Rollback plan: keep the last build.'); // rollback is in 2 notes of 5, deploy in 3
    expect(contents.slice(2).sort()).toEqual(['Deploy to production on Tuesdays.', 'Deploy to staging first.']);
    expect(found.hits.map((hit) => hit.score)).toEqual([...found.hits.map((hit) => hit.score)].sort((a, b) => b - a));
  });

  it('matches words by prefix and tags, and gives at most limit notes', async () => {
    const notes = new NoteStore(new InMemoryMemory());
    await notes.save('The deployment needs NODE_ENV set.', { agentName: 'ops', scope: 'shared' });
    await notes.save('Staging lives on host b.', { agentName: 'ops', scope: 'shared', tags: ['deploy'] });
    await notes.save('Nothing to see.', { agentName: 'ops', scope: 'shared' });

    const all = await notes.search('deploy', { agentName: 'ops' });
    const one = await notes.search('deploy', { agentName: 'ops', limit: 1 });

    expect(all.hits.map((hit) => hit.note.content).sort()).toEqual(['Staging lives on host b.', 'The deployment needs NODE_ENV set.']);
    expect(one.hits).toHaveLength(1);
  });

  it('refuses, with a ConfigurationError and nothing written, a note that would never read back and a search it cannot run', async () => {
    const file = join(dir.path, 'notes.json');
    const notes = new NoteStore(new JsonFileMemory(file));
    await notes.save('Staging deploys need approval.', { agentName: 'ops', scope: 'shared' });
    const bad: [unknown, Record<string, unknown>][] = [
      [42, {}],
      ['x', { scope: 'everyone' }],
      ['x', { tags: 'deploy' }], // a text, which was spread into its letters
      ['x', { tags: [1] }],
      ['x', { agentName: undefined }],
    ];
    for (const [content, options] of bad) {
      await expect(notes.save(content as string, { agentName: 'ops', ...options } as never)).rejects.toThrow(ConfigurationError);
    }
    const stored = (await new JsonFileMemory(file).get(NOTES_KEY)) as unknown[];
    expect(stored).toHaveLength(1);
    for (const [query, limit] of [[42, 5], ['deploy', -1], ['deploy', Number.NaN], ['deploy', 'x'], ['deploy', 1.5]] as const) {
      await expect(notes.search(query as string, { agentName: 'ops', limit: limit as number })).rejects.toThrow(ConfigurationError);
    }
    expect((await notes.search('deploy', { agentName: 'ops', limit: 1 })).hits).toHaveLength(1);
  });

  it('finds an agent note only for agents of its name, and a shared note for every agent', async () => {
    const notes = new NoteStore(new InMemoryMemory());
    await notes.save('The API rate limit is 60 a minute.', { agentName: 'researcher' });
    await notes.save('The API key rotates on Mondays.', { agentName: 'researcher', scope: 'shared' });

    const own = await notes.search('API', { agentName: 'researcher' });
    const other = await notes.search('API', { agentName: 'writer' });

    expect(own.hits.map((hit) => hit.note.scope).sort()).toEqual(['agent', 'shared']);
    expect(other.hits.map((hit) => hit.note.content)).toEqual(['The API key rotates on Mondays.']);
  });

  it('replaces secrets before a note is stored, in its content and tags', async () => {
    const file = join(dir.path, 'store.json');
    const secret = 'sk-live-0123456789abcdefghij';
    const notes = new NoteStore(new JsonFileMemory(file), { redactor: new Redactor({ secrets: [secret] }) });

    const saved = await notes.save(`The key is ${secret}.`, { agentName: 'ops', tags: [secret] });

    expect(saved.content).toBe('The key is [redacted].');
    expect(JSON.stringify(await new JsonFileMemory(file).get(NOTES_KEY))).not.toContain(secret);
  });

  it('keeps notes in the file across stores, and leaves out a note of a newer format', async () => {
    const file = join(dir.path, 'store.json');
    await new NoteStore(new JsonFileMemory(file)).save('Written by the first process.', { agentName: 'a', scope: 'shared' });
    await new JsonFileMemory(file).append(NOTES_KEY, { schemaVersion: 99, id: 'note:future', content: 'From a newer troupe.' });

    const notes = await new NoteStore(new JsonFileMemory(file)).list();

    expect(notes.map((note) => note.content)).toEqual(['Written by the first process.']);
  });

  it('draws another key for a note whose key the store has, and finds two notes stored under one key, by words and by meaning', async () => {
    const memory = new InMemoryMemory();
    const keys = ['a', 'a', 'b'];
    const notes = new NoteStore(memory, { makeId: () => keys.shift()! });
    expect((await notes.save('The car is parked in the garage.', { agentName: 'scribe', scope: 'shared' })).id).toBe('note:a');
    expect((await notes.save('The truck is parked outside.', { agentName: 'scribe', scope: 'shared' })).id).toBe('note:b');
    // Two notes of one key, as two runs of one seed left them before keys were checked.
    const older = new InMemoryMemory();
    const twins = new NoteStore(older, { makeId: () => 'same' });
    const first = await twins.save('The car is parked in the garage.', { agentName: 'scribe', scope: 'shared' });
    await older.append(NOTES_KEY, { ...first, content: 'The truck is parked outside.' });
    expect((await twins.list()).map((note) => note.id)).toEqual(['note:same', 'note:same']);

    const byWords = await twins.search('parked', { agentName: 'anyone' });
    server = await startOpenAIServer([], { embeddings: meaning });
    const model = new OpenAIModel({ model: 'chat', apiKey: 'sk-test', baseURL: server.baseURL, embeddingModel: 'meaning-3' });
    const byMeaning = await twins.search('automobile', { agentName: 'anyone', model });

    expect(byWords.hits.map((hit) => hit.note.content).sort()).toEqual(['The car is parked in the garage.', 'The truck is parked outside.']);
    expect(byMeaning.ranking).toBe('embeddings');
    expect(byMeaning.hits.map((hit) => hit.note.content).sort()).toEqual(['The car is parked in the garage.', 'The truck is parked outside.']);
  });

  it('gives a note a key of its own when makeId keeps giving one the store has (it is not asked for ever)', async () => {
    let draws = 0;
    const constant = () => {
      draws += 1;
      if (draws > 100) throw new Error('makeId was asked more than 100 times');
      return 'same';
    };
    const notes = new NoteStore(new InMemoryMemory(), { makeId: constant });
    const saved = [];
    for (const content of ['One.', 'Two.', 'Three.']) saved.push((await notes.save(content, { agentName: 'scribe' })).id);
    expect(saved).toEqual(['note:same', 'note:same-2', 'note:same-3']);
  });

  it('ranks by embeddings when the model embeds (an OpenAIModel on the loopback server), by meaning rather than words', async () => {
    server = await startOpenAIServer([], { embeddings: meaning });
    const model = new OpenAIModel({ model: 'chat', apiKey: 'sk-test', baseURL: server.baseURL, embeddingModel: 'meaning-3' });
    const notes = await storeWith(['Bring an umbrella: rain is likely.', 'The car is parked in the garage, level 3.', 'Pizza for lunch on Friday.']);

    const found = await notes.search('automobile location', { agentName: 'anyone', model });
    const again = await notes.search('hungry for food', { agentName: 'anyone', model });

    expect(found.ranking).toBe('embeddings');
    expect(found.hits[0]?.note.content).toBe('The car is parked in the garage, level 3.');
    expect(again.hits[0]?.note.content).toBe('Pizza for lunch on Friday.');
    // The notes were embedded once, with the first query; the second search embedded only its query.
    expect(server.requests.map((request) => (request.body as { input: string[] }).input.length)).toEqual([4, 1]);
    expect(server.requests[0]?.body).toMatchObject({ model: 'meaning-3' });
    // Words alone find nothing: no note has a word of the query.
    expect((await notes.search('automobile location', { agentName: 'anyone' })).hits).toEqual([]);
  });

  it('falls back to BM25 for a model without embeddings, and for one whose embedding call fails', async () => {
    server = await startOpenAIServer([{ kind: 'error', status: 404, message: 'This server has no embeddings.' }]);
    const failing = new OpenAIModel({ model: 'chat', apiKey: 'sk-test', baseURL: server.baseURL });
    const notes = await storeWith(['Pizza for lunch on Friday.', 'The car is parked in the garage.']);

    const scripted = await notes.search('pizza', { agentName: 'anyone', model: new ScriptedModel([]) });
    const failed = await notes.search('pizza', { agentName: 'anyone', model: failing });

    expect(scripted).toEqual({ ranking: 'lexical', hits: [expect.objectContaining({ note: expect.objectContaining({ content: 'Pizza for lunch on Friday.' }) })] });
    expect(failed.ranking).toBe('lexical');
    expect(failed.hits.map((hit) => hit.note.content)).toEqual(['Pizza for lunch on Friday.']);
    expect(failed.fallback).toMatch(/^embedding with text-embedding-3-small failed: .*HTTP 404/);
  });
});
