// `troupe sessions list | show | resume`, on a store that a scenario run wrote with --store.
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { SessionRecord } from 'troupe';
import { troupe } from '../support/cli.js';
import { chatCompletion, startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';
import { tempDir } from '../support/tempDir.js';

const scratch = tempDir();
const agents = join(scratch.path, 'agents');
const store = join(scratch.path, 'sessions.json');
let lead: SessionRecord;
let helper: SessionRecord;

beforeAll(async () => {
  mkdirSync(agents);
  writeFileSync(join(agents, 'lead.md'), '---\nname: lead\ndescription: Leads.\ntools: assign_task\n---\nDelegate, then sum up.\n');
  writeFileSync(join(agents, 'helper.md'), '---\nname: helper\ndescription: Helps.\n---\nCount what you are asked to count.\n');
  const run = await troupe(['run', 'test/cli/fixtures/fileTeam.ts', '--agents', agents, '--store', store, '--quiet']);
  expect(run).toEqual({ code: 0, stdout: 'There are 3 apples.\n', stderr: '' });
  const list = await troupe(['sessions', 'list', '--store', store, '--json']);
  [lead, helper] = JSON.parse(list.stdout) as [SessionRecord, SessionRecord];
});
afterAll(() => scratch.remove());

describe('troupe sessions', () => {
  it('list: every session of the store, each sub-agent under its caller', async () => {
    expect(lead).toMatchObject({ agentType: 'lead', state: 'completed', parentConversationId: 'main', result: 'There are 3 apples.' });
    expect(helper).toMatchObject({ agentType: 'helper', state: 'completed', parentConversationId: lead.id, result: '3 apples.' });

    const { code, stdout } = await troupe(['sessions', 'list', '--store', store]);

    expect(code).toBe(0);
    const [head, first, second, ...rest] = stdout.trimEnd().split('\n');
    expect(head).toMatch(/^ID +AGENT +STATE +STARTED +TASK$/);
    expect(first).toMatch(new RegExp(`^${lead.id} +lead +completed +\\d{4}-\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d  How many apples\\?$`));
    expect(second).toMatch(new RegExp(`^  ${helper.id} +helper +completed +[\\d:\\- ]+  Count the apples\\.$`));
    expect(rest).toEqual([]);
  });

  it('list: says which records it leaves out (a newer troupe wrote them, or they are no session), and leaves them', async () => {
    const mixed = join(scratch.path, 'mixed.json');
    const text = JSON.stringify({
      schemaVersion: 1,
      __agent_sessions__: {
        [lead.id]: lead,
        'agent:future:1': { ...lead, id: 'agent:future:1', schemaVersion: 99 },
        'agent:broken:1': { id: 'agent:broken:1' },
      },
    });
    writeFileSync(mixed, text);

    const { code, stdout, stderr } = await troupe(['sessions', 'list', '--store', mixed]);

    expect(code).toBe(0);
    expect(stdout.trimEnd().split('\n')).toHaveLength(2); // the header and the one record it reads
    expect(stderr).toMatch(
      /^troupe: 2 sessions not listed, left in the store as they are: agent:future:1, written by a newer troupe \(schemaVersion 99; this one reads up to \d+\); agent:broken:1, not a session record \([^)]+\)\n$/,
    );
    expect(readFileSync(mixed, 'utf8')).toBe(text);

    // show names why it cannot read a record that is there, rather than calling it unknown
    const broken = await troupe(['sessions', 'show', 'agent:broken:1', '--store', mixed]);
    expect(broken.code).toBe(2);
    expect(broken.stderr).toMatch(/^troupe: cannot read session "agent:broken:1" in .*mixed\.json: not a session record \([^)]+\); it was left as it is\n$/);
    expect(readFileSync(mixed, 'utf8')).toBe(text);
  });

  it('show: the record, its figures and its conversation', async () => {
    const { code, stdout } = await troupe(['sessions', 'show', helper.id, '--store', store]);

    expect(code).toBe(0);
    expect(stdout).toContain(`${helper.id}\nagent:    helper\nstate:    completed\nparent:   ${lead.id}\n`);
    expect(stdout).toMatch(/\ntask: {5}Count the apples\.\nfigures: +0 calls • \d+ tokens • \$0 • \d+ms\nresult: {3}3 apples\.\n/);
    expect(stdout).toMatch(/\nConversation \(2 messages\):\n {2}user: Count the apples\.\n {2}assistant: 3 apples\.\n$/);
  });

  it('show: one tool call is "1 call", as the live tree says it', async () => {
    const { stdout } = await troupe(['sessions', 'show', lead.id, '--store', store]);
    expect(stdout).toMatch(/\nfigures: +1 call • \d+ tokens • \$0 • \d+ms\n/);
  });

  it('show: a conversation of one message is "1 message"', async () => {
    const single = join(scratch.path, 'single.json');
    const id = 'agent:helper:single';
    writeFileSync(single, JSON.stringify({ schemaVersion: 1, __agent_sessions__: { [id]: { ...helper, id } }, [id]: [{ role: 'user', content: 'Count the pears.' }] }));
    const { code, stdout } = await troupe(['sessions', 'show', id, '--store', single]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/\nConversation \(1 message\):\n {2}user: Count the pears\.\n$/);
  });

  it('show --json: the record with its conversation', async () => {
    const { stdout } = await troupe(['sessions', 'show', lead.id, '--store', store, '--json']);
    const shown = JSON.parse(stdout) as SessionRecord & { conversation: { role: string }[] };
    expect(shown).toMatchObject({ id: lead.id, agentType: 'lead' });
    expect(shown.conversation.map((message) => message.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
  });

  it('an unknown session, or a store that is not there: one line, exit 2', async () => {
    const unknown = await troupe(['sessions', 'show', 'agent:helper:nope', '--store', store]);
    expect(unknown).toEqual({ code: 2, stdout: '', stderr: `troupe: unknown session "agent:helper:nope" in ${store} (troupe sessions list shows them)\n` });
    const missing = await troupe(['sessions', 'list'], { cwd: scratch.path });
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: 'troupe: cannot read store .troupe/sessions.json: no such file (a run writes it; --store FILE reads another)\n',
    });
  });

  it('cleanup: removes the sessions that ended longer ago than the age given, with their conversations, and names them', async () => {
    const aged = join(scratch.path, 'aged.json');
    const stored = JSON.parse(readFileSync(store, 'utf8')) as { __agent_sessions__: Record<string, SessionRecord> } & Record<string, unknown>;
    const old = stored.__agent_sessions__[helper.id]!;
    const tenDaysAgo = Date.now() - 10 * 86_400_000;
    stored.__agent_sessions__[helper.id] = { ...old, startTime: tenDaysAgo - 1_000, endTime: tenDaysAgo };
    writeFileSync(aged, JSON.stringify(stored));
    expect(stored[helper.id]).toBeDefined(); // its conversation

    expect(await troupe(['sessions', 'cleanup', '30d', '--store', aged])).toEqual({ code: 0, stdout: `No session in ${aged} ended more than 30d ago.\n`, stderr: '' });
    expect(await troupe(['sessions', 'cleanup', '7d', '--store', aged])).toEqual({ code: 0, stdout: `Removed 1 session from ${aged}: ${helper.id}\n`, stderr: '' });
    const after = JSON.parse(readFileSync(aged, 'utf8')) as { __agent_sessions__: Record<string, unknown> } & Record<string, unknown>;
    expect(Object.keys(after.__agent_sessions__)).toEqual([lead.id]);
    expect(after[helper.id]).toBeUndefined();
    expect(after[lead.id]).toBeDefined();
    // A number without a unit is refused (ms would read it as milliseconds: `30` meant as days would remove everything).
    expect(await troupe(['sessions', 'cleanup', '30', '--store', aged])).toEqual({ code: 2, stdout: '', stderr: 'troupe: "30" has no unit: give one such as 30d, 30h or 30m\n' });
    expect(Object.keys((JSON.parse(readFileSync(aged, 'utf8')) as { __agent_sessions__: object }).__agent_sessions__)).toEqual([lead.id]);
    expect(await troupe(['sessions', 'cleanup', '0ms', '--store', aged, '--json'])).toEqual({ code: 0, stdout: `["${lead.id}"]\n`, stderr: '' });
  });

  it('cleanup: an age it cannot read, or a store that is not there, is one line with exit 2, and nothing is removed', async () => {
    const kept = join(scratch.path, 'kept.json');
    writeFileSync(kept, readFileSync(store, 'utf8'));
    for (const age of ['week', '5 fortnights', '']) {
      const bad = await troupe(['sessions', 'cleanup', age, '--store', kept]);
      expect(bad).toEqual({ code: 2, stdout: '', stderr: `troupe: "${age}" is not an age: give one such as 30d, 12h, 45m or 90s\n` });
    }
    expect(readFileSync(kept, 'utf8')).toBe(readFileSync(store, 'utf8'));
    const missing = await troupe(['sessions', 'cleanup', '7d', '--store', join(scratch.path, 'none.json')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^troupe: cannot use store .*none\.json: no such file/);
  });

  describe('resume', () => {
    let server: OpenAIServer;
    beforeEach(async () => {
      server = await startOpenAIServer();
    });
    afterEach(() => server.close());

    it('continues a session on a real model, with its whole conversation, and records the new turn', async () => {
      server.enqueue({ kind: 'json', body: chatCompletion({ content: 'And 2 pears.', promptTokens: 30, completionTokens: 4 }) });

      const { code, stdout, stderr } = await troupe([
        'sessions', 'resume', helper.id, '--task', 'Now count the pears.', '--store', store, '--agents', agents, '--base-url', server.baseURL, '--quiet',
      ]);

      expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: 'And 2 pears.\n', stderr: '' });
      const request = server.requests[0]?.body as { messages: { role: string; content: string }[] };
      expect(request.messages).toEqual([
        { role: 'system', content: 'Count what you are asked to count.' },
        { role: 'user', content: 'Count the apples.' },
        { role: 'assistant', content: '3 apples.' },
        { role: 'user', content: 'Now count the pears.' },
      ]);
      const shown = await troupe(['sessions', 'show', helper.id, '--store', store, '--json']);
      expect(JSON.parse(shown.stdout)).toMatchObject({ state: 'completed', result: 'And 2 pears.', taskDescription: 'Now count the pears.' });
    });

    it('refuses an unknown session in one line, exit 2, before asking the model', async () => {
      const { code, stderr } = await troupe(['sessions', 'resume', 'agent:helper:nope', '--task', 'Go on.', '--store', store, '--base-url', server.baseURL]);
      expect({ code, stderr }).toEqual({ code: 2, stderr: `troupe: unknown session "agent:helper:nope" in ${store} (troupe sessions list shows them)\n` });
      expect(server.requests).toHaveLength(0);
    });

    it('says how to give the agent of a session it does not know (no --agents), in one line, before asking the model', async () => {
      const { code, stderr } = await troupe(['sessions', 'resume', helper.id, '--task', 'Go on.', '--store', store, '--base-url', server.baseURL]);
      expect({ code, stderr }).toEqual({
        code: 2,
        stderr: 'troupe: the session\'s agent "helper" is not defined here: give its file with --agents DIR (an agent a scenario defines in code is resumed from code, with runtime.resume)\n',
      });
      expect(server.requests).toHaveLength(0);
    });

    it("names why the file of the session's agent was refused, rather than saying it is not defined, before asking the model", async () => {
      const refused = join(scratch.path, 'refused-agents');
      mkdirSync(refused);
      writeFileSync(join(refused, 'helper.md'), '---\nname: helper\ndescription: Helps.\nmaxTurns: many\n---\nCount.\n');
      const { code, stderr } = await troupe(['sessions', 'resume', helper.id, '--task', 'Go on.', '--store', store, '--agents', refused, '--base-url', server.baseURL]);
      expect(code).toBe(2);
      expect(stderr).toMatch(/(^|\n)troupe: the agent file of "helper" was refused: .*helper\.md: maxTurns: [^\n]+\n$/);
      expect(server.requests).toHaveLength(0);
    });
  });
});
