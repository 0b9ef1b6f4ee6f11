// `troupe run`, as a user runs it: a child process whose output is not a terminal, so the run shows as plain lines.
import { spawn } from 'node:child_process';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { TroupeEvent } from 'troupe';
import { chatCompletion, startOpenAIServer, type OpenAIServer } from '../support/openaiServer.js';
import { offlineEnv, root, troupe, tsxLoader } from '../support/cli.js';
import { agentFile, tempDir } from '../support/tempDir.js';

const scratch = tempDir();
const store = (name: string) => join(scratch.path, `${name}.json`);
afterAll(() => scratch.remove());

const ANSWER =
  'Lisbon it is. Pack sunglasses and an umbrella: Saturday sunny, 24°C; Sunday showers in the afternoon, 19°C. The trip costs 495.80 EUR: 285.20 for the flights and 210.60 for the hotel.';

// Each test starts the command as a process (tsx compiles it first): on a machine busy with other work, a few at once
// take longer than the default time limit.
describe.concurrent('troupe run <scenario>', { timeout: 60_000 }, () => {
  it('runs a scenario on its scripted models, one plain line per event worth reading, then the result; exit 0', async () => {
    const { code, stdout, stderr } = await troupe(['run', 'examples/scenario.ts', '--store', store('plain'), '--seed', '7']);

    expect(stderr).toBe('');
    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n');
    expect(lines[0]).toBe('► planner (Plan a weekend in Lisbon for two.)');
    expect(lines).toContain('  ► meteorologist (Weekend weather in Lisbon)');
    expect(lines.find((line) => line.includes('✓ forecast'))).toMatch(/^ {4}meteorologist ✓ forecast \{"city":"Lisbon"\} \d+ms$/);
    expect(lines.find((line) => line.includes('✗ convert'))).toMatch(/^ {4}accountant ✗ convert \{"amount":310,"currency":"US\$"\} \d+ms: Unknown currency US\$/);
    expect(lines.find((line) => line.startsWith('✓ planner done'))).toMatch(/^✓ planner done [\d.]+m?s • 2 calls • \d+ tokens • (<\$0\.001|\$[\d.]+) ⎿ Lisbon it is\./);
    expect(lines.at(-3)).toMatch(/^3 agents • 3 done • 6 calls • [\d,]+ tokens • /);
    expect(lines.at(-1)).toBe(ANSWER);
    expect(stdout).not.toContain('\u001b'); // not a terminal: no control codes
  });

  it('with --json prints every event as a JSON line, then the result', async () => {
    const { code, stdout } = await troupe(['run', 'examples/scenario.ts', '--json', '--store', store('json')]);

    expect(code).toBe(0);
    const lines = stdout.trimEnd().split('\n').map((line) => JSON.parse(line) as { type: string });
    const result = lines.pop() as { type: string; result: { status: string; output: string } };
    expect(result).toMatchObject({ type: 'result', result: { status: 'completed', agent: 'planner', output: ANSWER } });
    const events = lines.map((line) => TroupeEvent.parse(line));
    expect(events[0]).toMatchObject({ type: 'agent.spawned', name: 'planner' });
    const tools = events.flatMap((event) => (event.type === 'tool.result' ? [`${event.tool} ${event.status}`] : []));
    expect(tools.sort()).toEqual(['assign_task ok', 'assign_task ok', 'convert error', 'convert ok', 'convert ok', 'forecast ok']);
    expect(events.at(-1)).toMatchObject({ type: 'agent.completed', name: 'planner' });
  });

  it('with --quiet prints only the result', async () => {
    const { code, stdout, stderr } = await troupe(['run', 'examples/scenario.ts', '--quiet', '--store', store('quiet')]);
    expect({ code, stdout, stderr }).toEqual({ code: 0, stdout: `${ANSWER}\n`, stderr: '' });
  });

  it('runs the npm start example as a scenario too', async () => {
    const { code, stdout } = await troupe(['run', 'examples/parallel-review.ts', '--quiet', '--store', store('review')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Review summary:\n- 1 finding: src\/server\.ts:3/);
  });

  it('runs a simulation: a scenario whose options bring a simulated clock spends hours of its time in a moment, the same each run', async () => {
    const run = () => troupe(['run', 'examples/simulated-scenario.ts', '--store', store('simulated')]);
    const { code, stdout } = await run();
    expect(code).toBe(0);
    // Four offers, each answered after the seller's two twenty-minute model calls; the last reply is the deal (the
    // seller's calls all have one id, and each line names its own call).
    expect(stdout).toMatch(/seller ✓ reply \{"content":"Deal at 100\."\} 0ms\n/);
    expect(stdout.match(/seller ✓ reply \{"content":"No: 120\."\}/g)).toHaveLength(3);
    expect(stdout).toMatch(/\nBought the bike for 100\. \(180 simulated minutes\)\n$/);
    expect((await run()).stdout).toBe(stdout); // the seed and the simulated clock come from the scenario
  });

  it("adds the folders of --agents to a scenario's own agentDirs", async () => {
    const more = join(scratch.path, 'more-agents');
    mkdirSync(more);
    writeFileSync(join(more, 'helper.md'), agentFile('helper', [], 'You help.'));
    const { code, stdout, stderr } = await troupe(['run', 'test/cli/fixtures/ownAgentDirs.ts', '--agents', more, '--quiet', '--store', store('own-agents')]);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toBe('Hello. Helped.\n');
  });

  it('hands a scenario its --task, and prints a value that is not a result as JSON; exit 0', async () => {
    const { code, stdout } = await troupe(['run', 'test/cli/fixtures/value.mjs', '--task', 'Count.', '--quiet', '--store', store('value')]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toEqual({ task: 'Count.', agents: ['general-purpose'] });
  });

  it('exits with 1 and one line on stderr when the run fails', async () => {
    const { code, stdout, stderr } = await troupe(['run', 'test/cli/fixtures/outOfTurns.ts', '--store', store('turns')]);
    expect(code).toBe(1);
    expect(stdout).toContain('✗ looper failed (max_turns)');
    expect(stderr).toMatch(/^troupe: looper failed \(max_turns\): [^\n]+\n$/);
  });

  it('goes on to the end of the run when the reader of its output leaves (| head -1), and writes every session', async () => {
    const sessions = store('reader-left');
    const child = spawn(process.execPath, ['--import', tsxLoader, `${root}src/cli/main.ts`, 'run', 'test/cli/fixtures/twoRuns.ts', '--json', '--store', sessions], {
      cwd: root,
      env: offlineEnv(),
    });
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    // The reader takes the first lines, then closes its end of the pipe, as `head -1` does.
    child.stdout.once('data', () => child.stdout.destroy());
    const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));

    expect({ code, stderr }).toEqual({ code: 0, stderr: '' });
    const stored = JSON.parse(readFileSync(sessions, 'utf8')) as { __agent_sessions__: Record<string, { state: string; result?: string }> };
    expect(Object.values(stored.__agent_sessions__).map((session) => [session.state, session.result]).sort()).toEqual([
      ['completed', 'first answer'],
      ['completed', 'second answer'],
    ]);
  });

  it('ends on Ctrl-C, with exit code 130, a scenario that waits on its own after the runtime shut down', async () => {
    const child = spawn(process.execPath, ['--import', tsxLoader, `${root}src/cli/main.ts`, 'run', 'test/cli/fixtures/waitsOnItsOwn.ts', '--json', '--store', store('own-wait')], {
      cwd: root,
      env: offlineEnv(),
    });
    let stdout = '';
    let stderr = '';
    child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
    const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
    // Once the agent has answered, the scenario waits on its own timer (a minute).
    await new Promise<void>((resolve) =>
      child.stdout.on('data', (chunk: Buffer) => {
        stdout += String(chunk);
        if (stdout.includes('"agent.completed"')) resolve();
      }),
    );
    child.kill('SIGINT');

    expect(await exited).toBe(130);
    expect(stderr).toBe('troupe: stopping the run (Ctrl-C again to quit at once)\ntroupe: interrupted\n');
  });

  it('exits with 1 and one line, no stack trace, when the scenario throws', async () => {
    const { code, stderr } = await troupe(['run', 'test/cli/fixtures/throws.mjs', '--store', store('throws')]);
    expect(code).toBe(1);
    expect(stderr).toBe('troupe: scenario test/cli/fixtures/throws.mjs failed: The scenario broke. at somewhere (file.js:1:1)\n');
  });
});

describe.concurrent('troupe run: arguments it cannot use give one line and exit code 2', { timeout: 60_000 }, () => {
  it.each([
    [['run', 'examples/scenario.ts', '--max-parallel', 'abc'], /^troupe: option '--max-parallel <n>' argument 'abc' is invalid\. must be a whole number from 1 up\. \(see --help\)\n$/],
    [['run', 'examples/scenario.ts', '--seed', '1.5'], /^troupe: option '--seed <n>' argument '1\.5' is invalid\. must be a whole number\. \(see --help\)\n$/],
    [['run', 'examples/scenario.ts', '--base-url', 'not a url'], /^troupe: option '--base-url <url>' argument 'not a url' is invalid\. must be an http\(s\) URL/],
    [['run', 'examples/scenario.ts', '--json', '--quiet'], /^troupe: option '--json' cannot be used with option '--quiet' \(see --help\)\n$/],
    [['run', 'examples/scenario.ts', '--colour'], /^troupe: unknown option '--colour' \(see --help\)\n$/],
    [['run'], /^troupe: missing required argument 'target' \(see --help\)\n$/],
    // --ui's port is optional, so the word after it is taken for one: a target there is not a port, and the message says where --ui goes.
    [
      ['run', '--ui', 'examples/scenario.ts'],
      /^troupe: option '--ui \[port\]' argument 'examples\/scenario\.ts' is invalid\. must be a port number, 0 to 65535; --ui takes the word after it as its port: put --ui after the target or session id \(… examples\/scenario\.ts --ui\) \(see --help\)\n$/,
    ],
    [['launch'], /^troupe: unknown command 'launch' \(see --help\)\n$/],
    [['run', 'examples/missing.ts'], /^troupe: cannot read scenario examples\/missing\.ts: no such file\n$/],
    [['run', 'examples/'], /^troupe: cannot read scenario examples\/: not a file\n$/],
    [
      ['run', 'examples/agent-files/agents/researcher.md'],
      /^troupe: cannot load scenario examples\/agent-files\/agents\/researcher\.md: a scenario is a \.ts, \.mts, \.js or \.mjs file; to run the agent of an agent file, give its name and folder: troupe run researcher --agents examples\/agent-files\/agents --task TEXT\n$/,
    ],
    [['run', 'test/cli/fixtures/badOptions.mjs'], /^troupe: test\/cli\/fixtures\/badOptions\.mjs: options\.store is set by the command; use --store\n$/],
    [['run', 'test/cli/fixtures/notAScenario.mjs'], /^troupe: test\/cli\/fixtures\/notAScenario\.mjs must export default a function \(runtime\) => result, or an object/],
    [
      ['run', 'test/cli/fixtures/script.mjs'],
      /^troupe: test\/cli\/fixtures\/script\.mjs has no default export: it is a script, which ran as it was loaded, not a scenario; run it with tsx, or make it a scenario: must export default a function \(runtime\) => result, or an object/,
    ],
    [['run', 'researcher'], /^troupe: an agent needs a task: troupe run researcher --task TEXT\n$/],
    [['run', 'researcher', '--task', 'Find it.'], /^troupe: no model: set OPENAI_API_KEY or pass --base-url\n$/],
    [['run', 'examples/scenario.ts', '--store', '/no/such/folder/s.json'], /^troupe: cannot use store \/no\/such\/folder\/s\.json: its folder \/no\/such\/folder does not exist\n$/],
  ])('troupe %j', async (args, message) => {
    const { code, stdout, stderr } = await troupe(args);
    expect(stderr).toMatch(message);
    expect(stderr.trimEnd().split('\n')).toHaveLength(1);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
  });

  // Several processes of the command, one after another: a loaded machine needs more than one process's time.
  it('troupe run --store refuses, before it runs anything, a file that is not a troupe store, a corrupt one and a folder, and leaves them as they were', async () => {
    const dir = tempDir();
    const foreign = join(dir.path, 'package.json');
    const corrupt = join(dir.path, 'corrupt.json');
    writeFileSync(foreign, '{"name":"my-package","version":"1.0.0"}\n');
    writeFileSync(corrupt, '{"__agent_sessions__": {');
    const cases: [string, RegExp][] = [
      [foreign, /^troupe: cannot use store .*package\.json: it is not a troupe store \(no schemaVersion, no sessions or notes\); give another file\n$/],
      [corrupt, /^troupe: cannot use store .*corrupt\.json: it is not JSON: .*; it was left as it is\n$/],
      [dir.path, /^troupe: cannot use store .*: it is a folder, not a file; it was left as it is\n$/],
    ];
    for (const [file, message] of cases) {
      const { code, stdout, stderr } = await troupe(['run', 'examples/scenario.ts', '--store', file]);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toMatch(message);
    }
    expect(readFileSync(foreign, 'utf8')).toBe('{"name":"my-package","version":"1.0.0"}\n');
    expect(readFileSync(corrupt, 'utf8')).toBe('{"__agent_sessions__": {');
    expect(readdirSync(dir.path).sort()).toEqual(['corrupt.json', 'package.json']); // no lock left behind
    dir.remove();
  }, 90_000);

  it('troupe run without --store, where a file named .troupe stands in the way of the default store folder: one line, exit 2, the file kept', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, '.troupe'), 'notes\n');
    const run = await troupe(['run', `${root}examples/scenario.ts`, '--quiet'], { cwd: dir.path });
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: 'troupe: cannot use store .troupe/sessions.json: its folder .troupe cannot be made (a file of that name is there); give another --store\n',
    });
    expect(readFileSync(join(dir.path, '.troupe'), 'utf8')).toBe('notes\n');
    dir.remove();
  });

  it('troupe run refuses an OPENAI_BASE_URL that is not an http(s) URL as it refuses such a --base-url: one line, exit 2, before the run', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'finder.md'), '---\nname: finder\ndescription: Finds things.\n---\nFind it.\n');
    const run = await troupe(['run', 'finder', '--task', 'Find it.', '--agents', dir.path, '--store', store('bad-env-url')], {
      env: { OPENAI_BASE_URL: 'localhost:11434/v1' },
    });
    dir.remove();
    expect(run).toEqual({
      code: 2,
      stdout: '',
      stderr: 'troupe: OPENAI_BASE_URL "localhost:11434/v1" must be an http(s) URL, such as http://127.0.0.1:11434/v1\n',
    });
  });

  it('troupe run --store refuses, before it runs anything, a store whose sessions are not session records; sessions list says so too', async () => {
    const dir = tempDir();
    const broken = join(dir.path, 'broken.json');
    const text = `${JSON.stringify({ schemaVersion: 1, __agent_sessions__: [1, 2] })}\n`;
    writeFileSync(broken, text);
    const message = /^troupe: cannot (use|read) store .*broken\.json: it holds a list under "__agent_sessions__", not session records; it was left as it is \(move it, or give another --store\)\n$/;

    const run = await troupe(['run', 'examples/scenario.ts', '--store', broken]);
    expect({ code: run.code, stdout: run.stdout }).toEqual({ code: 2, stdout: '' });
    expect(run.stderr).toMatch(message);
    const listed = await troupe(['sessions', 'list', '--store', broken]);
    expect({ code: listed.code, stdout: listed.stdout }).toEqual({ code: 2, stdout: '' });
    expect(listed.stderr).toMatch(message);

    expect(readFileSync(broken, 'utf8')).toBe(text);
    expect(readdirSync(dir.path)).toEqual(['broken.json']);
    dir.remove();
  }, 60_000);

  it('troupe run --store refuses a read-only store before it runs anything, and leaves it as it was', async () => {
    const dir = tempDir();
    const readOnly = join(dir.path, 'archive.json');
    const text = `${JSON.stringify({ schemaVersion: 1, __agent_sessions__: {} })}\n`;
    writeFileSync(readOnly, text);
    chmodSync(readOnly, 0o444);
    const { code, stdout, stderr } = await troupe(['run', 'examples/scenario.ts', '--store', readOnly]);
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^troupe: cannot use store .*archive\.json: it is read-only; it was left as it is \(make it writable, or give another --store\)\n$/);
    expect(readFileSync(readOnly, 'utf8')).toBe(text);
    expect(readdirSync(dir.path)).toEqual(['archive.json']);
    const listed = await troupe(['sessions', 'list', '--store', readOnly]); // reading it is fine
    expect(listed.code).toBe(0);
    dir.remove();
  }, 60_000);

  it('troupe run --json gives a result JSON cannot hold as Node prints it, in a JSON line, and still succeeds', async () => {
    const { code, stdout } = await troupe(['run', 'test/cli/fixtures/bigValue.mjs', '--json', '--store', store('big')]);
    expect(code).toBe(0);
    const last = JSON.parse(stdout.trim().split('\n').at(-1)!) as { type: string; result: string; notJson: string };
    expect(last).toEqual({ type: 'result', result: '{ count: 12345678901234567890n }', notJson: expect.stringMatching(/BigInt/) });
  });

  // Several processes of the command, one after another: a loaded machine needs more than one process's time.
  it('troupe run --trace into a folder that does not exist, onto a folder, another file or the store, is one line and exit 2 before the run', async () => {
    // A file that holds something else, and the store itself (with sessions in it), are left as they were.
    const other = store('other');
    writeFileSync(other, '{"name":"my-package"}\n');
    const kept = store('kept');
    writeFileSync(kept, '{"schemaVersion":1,"__agent_sessions__":{}}\n');
    const cases = [
      ['no-such-folder/t.jsonl', store('trace0'), /^troupe: cannot write trace no-such-folder\/t\.jsonl: its folder no-such-folder does not exist\n$/],
      ['examples', store('trace1'), /^troupe: cannot write trace examples: it is a folder\n$/],
      [other, store('trace2'), /^troupe: cannot write trace .*other\.json: it holds something else than a troupe trace; it was left as it is\n$/],
      [kept, kept, /^troupe: cannot write trace .*kept\.json: it is the session store \(--store\); give the trace a file of its own\n$/],
    ] as const;
    for (const [file, sessions, message] of cases) {
      const { code, stdout, stderr } = await troupe(['run', 'examples/scenario.ts', '--trace', file, '--store', sessions]);
      expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
      expect(stderr).toMatch(message);
    }
    expect(readFileSync(other, 'utf8')).toBe('{"name":"my-package"}\n');
    expect(readFileSync(kept, 'utf8')).toBe('{"schemaVersion":1,"__agent_sessions__":{}}\n');
  }, 90_000);

  it('troupe run <a scenario that does not compile> says where and what, on one line', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'broken.ts'), 'export default async (runtime) => {\n  const x = ;\n};\n');
    const { code, stdout, stderr } = await troupe(['run', join(dir.path, 'broken.ts')]);
    dir.remove();
    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    expect(stderr).toMatch(/^troupe: cannot load scenario .*broken\.ts: .*broken\.ts:2:\d+: ERROR: Unexpected ";"\n$/);
  });

  it('troupe run <unknown agent> names the agents it knows', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'researcher.md'), agentFile('researcher'));
    const { code, stderr } = await troupe(['run', 'reseacher', '--task', 'Find it.', '--agents', dir.path, '--base-url', 'http://127.0.0.1:9/v1']);
    dir.remove();
    expect(code).toBe(2);
    expect(stderr).toBe('troupe: unknown agent "reseacher": the agents here are researcher (from ./agents and --agents DIR)\n');
  });
});

describe('troupe run <agent> on a real model', () => {
  let server: OpenAIServer;
  beforeEach(async () => {
    server = await startOpenAIServer();
  });
  afterEach(() => server.close());

  it('names why the file of the agent asked for was refused, rather than calling the agent unknown; exit 2, no request', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'greeter.md'), agentFile('greeter', ['maxTurns: many']));
    const { code, stdout, stderr } = await troupe(['run', 'greeter', '--task', 'Greet Ada.', '--agents', dir.path, '--base-url', server.baseURL, '--store', store('refused')]);
    dir.remove();

    expect({ code, stdout }).toEqual({ code: 2, stdout: '' });
    // Its last line (the warnings of the folder's files come first).
    expect(stderr).toMatch(/(^|\n)troupe: the agent file of "greeter" was refused: .*greeter\.md: maxTurns: [^\n]+\n$/);
    expect(stderr).not.toContain('unknown agent');
    expect(server.requests).toEqual([]);
  });

  it('runs an agent from an agent file on an OpenAI-compatible server given by --base-url', async () => {
    const dir = tempDir();
    writeFileSync(join(dir.path, 'greeter.md'), agentFile('greeter', [], 'You greet people in one sentence.'));
    server.enqueue({ kind: 'json', body: chatCompletion({ content: 'Hello, Ada!', promptTokens: 40, completionTokens: 5, model: 'test-model' }) });

    const { code, stdout, stderr } = await troupe([
      'run', 'greeter', '--task', 'Greet Ada.', '--agents', dir.path, '--base-url', server.baseURL, '--model', 'test-model', '--store', store('greeter'),
    ]);
    dir.remove();

    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^► greeter \(Greet Ada\.\)\n✓ greeter done \d+ms • 0 calls • 45 tokens • \$0 ⎿ Hello, Ada!\n1 agent • 1 done • 0 calls • 45 tokens • \$0 • [\d.]+m?s\n\nHello, Ada!\n$/);
    const request = server.requests[0]?.body as { model: string; messages: { role: string; content: string }[] };
    expect(request.model).toBe('test-model');
    expect(request.messages).toEqual([
      { role: 'system', content: 'You greet people in one sentence.' },
      { role: 'user', content: 'Greet Ada.' },
    ]);
  });
});
