// memory_save and memory_search through real runtimes: notes saved in one runtime are found by another over the same
// JsonFileMemory file, scoped by agent name, with secrets replaced; an agent on an OpenAIModel ranks by embeddings.
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, JsonFileMemory, NoteStore, OpenAIModel, type ChatMessage, type ModelRequest } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { chatCompletion, startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';
import { collect, scriptedPerAgent, simulatedClock } from '../stubs.js';
import { eachTestTempDir } from '../support/tempDir.js';

const tools = ['memory_save', 'memory_search'];
const researcher = defineAgent({ name: 'researcher', description: 'Researches.', systemPrompt: 'You research.', tools });
const writer = defineAgent({ name: 'writer', description: 'Writes.', systemPrompt: 'You write.', tools });

const lastTool = (request: ModelRequest) =>
  request.messages.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool').at(-1)!;

let server: OpenAIServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

describe('memory_save and memory_search', () => {
  const dir = eachTestTempDir();

  it('save notes in one runtime that agents of another find over the same JsonFileMemory file, by scope', async () => {
    const file = join(dir.path, 'store.json');
    const first = createRuntime({
      model: scriptedPerAgent({
        researcher: [
          callTools(
            toolCall('memory_save', { content: 'The rate limit of the search API is 60 calls a minute.', tags: ['api'] }, 'own'),
            toolCall('memory_save', { content: 'The search API needs the header X-Team.', scope: 'shared' }, 'shared'),
          ),
          'Noted.',
        ],
      }),
      agents: [researcher, writer],
      store: new JsonFileMemory(file),
      clock: simulatedClock(),
      projectAgentDir: false,
    });
    await first.run('researcher', 'Find out about the search API.');
    await first.shutdown();

    const found: Record<string, string> = {};
    const searchThenKeep = (name: string) => [
      callTools(toolCall('memory_search', { query: 'search API' })),
      (request: ModelRequest) => {
        found[name] = lastTool(request).content;
        return 'Thanks.';
      },
    ];
    const second = createRuntime({
      model: scriptedPerAgent({ researcher: searchThenKeep('researcher'), writer: searchThenKeep('writer') }),
      agents: [researcher, writer],
      store: new JsonFileMemory(file),
      clock: simulatedClock(),
      projectAgentDir: false,
    });
    await second.run('researcher', 'What do we know about the search API?');
    await second.run('writer', 'What do we know about the search API?');
    await second.shutdown();

    expect(found.researcher).toMatch(/^2 note\(s\), best first:/);
    expect(found.researcher).toContain('(agent, by researcher, ');
    expect(found.researcher).toContain('[api]\nThe rate limit of the search API is 60 calls a minute.');
    expect(found.writer).toMatch(/^1 note\(s\), best first:\n\n1\. note:\w+ \(shared, by researcher, \d{4}-\d\d-\d\d\)\nThe search API needs the header X-Team\.$/);
  });

  it('date a note by the simulated clock in a simulation (the model sees that date), and by the wall clock otherwise', async () => {
    const saveThenSearch = (seen: string[]) => [
      callTools(toolCall('memory_save', { content: 'Deploys need approval.' }, 'save'), toolCall('memory_search', { query: 'deploys' }, 'search')),
      (request: ModelRequest) => {
        seen.push(lastTool(request).content);
        return 'Done.';
      },
    ];
    const simulatedFile = join(dir.path, 'simulated.json');
    const clock = simulatedClock();
    const simulatedTime = Date.UTC(2031, 4, 6, 12);
    clock.set(simulatedTime);
    const simulated: string[] = [];
    const inSimulation = createRuntime({ model: scriptedPerAgent({ researcher: saveThenSearch(simulated) }), agents: [researcher], store: new JsonFileMemory(simulatedFile), clock, projectAgentDir: false });
    await inSimulation.run('researcher', 'Keep it.');
    await inSimulation.shutdown();
    expect(simulated[0]).toContain('(agent, by researcher, 2031-05-06)\nDeploys need approval.');
    expect((await new NoteStore(new JsonFileMemory(simulatedFile)).list()).map((note) => note.savedAt)).toEqual([simulatedTime]);

    const realFile = join(dir.path, 'real.json');
    const before = Date.now();
    const real: string[] = [];
    const inRealTime = createRuntime({ model: scriptedPerAgent({ researcher: saveThenSearch(real) }), agents: [researcher], store: new JsonFileMemory(realFile), projectAgentDir: false });
    await inRealTime.run('researcher', 'Keep it.');
    await inRealTime.shutdown();
    const [savedAt] = (await new NoteStore(new JsonFileMemory(realFile)).list()).map((note) => note.savedAt);
    expect(savedAt).toBeGreaterThanOrEqual(before);
    expect(savedAt).toBeLessThanOrEqual(Date.now());
    expect(real[0]).toContain(`(agent, by researcher, ${new Date(savedAt!).toISOString().slice(0, 10)})`);
  });

  it('give a note of a seeded run a key no note of the store has, so a second run with the same seed finds both runs\' notes', async () => {
    const file = join(dir.path, 'store.json');
    const searches: string[] = [];
    for (const fact of ['Staging deploys need approval.', 'Production deploys happen on Tuesdays.']) {
      const runtime = createRuntime({
        model: scriptedPerAgent({
          researcher: [
            callTools(toolCall('memory_save', { content: fact, scope: 'shared' }, 'save')),
            callTools(toolCall('memory_search', { query: 'deploys' }, 'search')),
            (request) => {
              searches.push(lastTool(request).content);
              return 'Done.';
            },
          ],
        }),
        agents: [researcher],
        store: new JsonFileMemory(file),
        seed: 7,
        clock: simulatedClock(),
        projectAgentDir: false,
      });
      await runtime.run('researcher', 'Keep it.');
      await runtime.shutdown();
    }

    const ids = (await new NoteStore(new JsonFileMemory(file)).list()).map((note) => note.id);
    expect(new Set(ids).size).toBe(2);
    expect(searches[1]).toMatch(/^2 note\(s\), best first:/);
    expect(searches[1]).toContain('Staging deploys need approval.');
    expect(searches[1]).toContain('Production deploys happen on Tuesdays.');
  });

  it('store notes with the runtime\'s secrets replaced, and tell the model when nothing matches', async () => {
    const file = join(dir.path, 'store.json');
    const secret = 'sk-team-0123456789abcdefghij';
    let answer = '';
    const runtime = createRuntime({
      model: scriptedPerAgent({
        researcher: [
          callTools(toolCall('memory_save', { content: `The team key is ${secret}.` })),
          callTools(toolCall('memory_search', { query: 'weather' })),
          (request) => {
            answer = lastTool(request).content;
            return 'Done.';
          },
        ],
      }),
      agents: [researcher],
      store: new JsonFileMemory(file),
      secrets: [secret],
      clock: simulatedClock(),
      projectAgentDir: false,
    });

    await runtime.run('researcher', 'Keep the key.');
    await runtime.shutdown();

    expect((await new NoteStore(new JsonFileMemory(file)).list()).map((note) => note.content)).toEqual(['The team key is [redacted].']);
    expect(answer).toBe('No note matches.');
  });

  it('rank by embeddings for an agent whose model embeds (an OpenAIModel on the loopback server)', async () => {
    const file = join(dir.path, 'store.json');
    const notes = new NoteStore(new JsonFileMemory(file));
    for (const content of ['Bring an umbrella: rain is likely.', 'The car is parked in the garage.', 'Pizza for lunch on Friday.']) {
      await notes.save(content, { agentName: 'researcher', scope: 'shared' });
    }
    const vehicles = ['car', 'automobile', 'garage', 'parked'];
    server = await startOpenAIServer(
      [
        { kind: 'json', body: chatCompletion({ toolCalls: [{ id: 'find', name: 'memory_search', arguments: JSON.stringify({ query: 'automobile whereabouts', limit: 1 }) }] }) },
        { kind: 'json', body: chatCompletion({ content: 'In the garage.' }) },
      ],
      { embeddings: (text) => [text.toLowerCase().split(/\W+/).filter((word) => vehicles.includes(word)).length, 1] },
    );
    const runtime = createRuntime({
      model: new OpenAIModel({ model: 'chat', apiKey: 'sk-test', baseURL: server.baseURL }),
      agents: [researcher],
      store: new JsonFileMemory(file),
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);

    const result = await runtime.run('researcher', 'Where is the car?');
    await runtime.shutdown();

    expect(result.output).toBe('In the garage.');
    const searched = events.find((event) => event.type === 'tool.result' && event.tool === 'memory_search');
    expect(searched).toMatchObject({ status: 'ok', content: expect.stringMatching(/^1 note\(s\), best first:\n\n1\. .*\nThe car is parked in the garage\.$/) });
    expect(server.requests.map((request) => request.url)).toEqual(['/v1/chat/completions', '/v1/embeddings', '/v1/chat/completions']);
  });
});
