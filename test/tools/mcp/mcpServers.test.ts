// MCP servers as tool sources, against the reference filesystem server from the npm registry (spawned over stdio by
// the runtime) and a streamable HTTP server of the SDK's own on 127.0.0.1: agents list and call their tools, and a
// server that dies, fails to start or is slow gives error results while the run goes on; shutdown ends the children.
import { mkdirSync, writeFileSync } from 'node:fs';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ConfigurationError, createRuntime, defineAgent, type ChatMessage, type McpStdioServerConfig, type ModelRequest, type Runtime, type ToolCall, type TroupeEvent } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { McpConnection } from '../../../src/tools/mcp/McpConnection.js';
import { eachTestTempDir } from '../../support/tempDir.js';
import { filesystemServer, httpMcpServer, isRunning, rawStdioServer, scriptedStdioServer } from '../../support/mcpServers.js';
import { scripted, scriptedPerAgent, simulatedClock } from '../../stubs.js';

const dir = eachTestTempDir();
const runtimes: Runtime[] = [];
afterAll(async () => {
  await Promise.all(runtimes.map((runtime) => runtime.shutdown()));
});

/** A runtime that is shut down after the file's tests even when a test fails. */
function runtimeWith(options: Parameters<typeof createRuntime>[0]): Runtime {
  const runtime = createRuntime({ projectAgentDir: false, ...options });
  runtimes.push(runtime);
  return runtime;
}

function agent(name: string, tools: string[], extra: Partial<Parameters<typeof defineAgent>[0]> = {}) {
  return defineAgent({ name, description: `The ${name}.`, systemPrompt: `You are ${name}.`, tools, ...extra });
}

/** The tool messages of a request's conversation. */
function toolMessages(request: ModelRequest): Extract<ChatMessage, { role: 'tool' }>[] {
  return request.messages.filter((message): message is Extract<ChatMessage, { role: 'tool' }> => message.role === 'tool');
}

describe('MCP servers over stdio', () => {
  it('offers an agent every tool of a server named with server:*, with its JSON schema as the server gives it, and runs its calls', async () => {
    writeFileSync(join(dir.path, 'notes.txt'), 'The password is swordfish.');
    let offered: ModelRequest['tools'] = [];
    const last = lastRequest();
    const model = scripted([
      (request) => {
        offered = request.tools;
        return callTools(toolCall('files:read_text_file', { path: join(dir.path, 'notes.txt') }));
      },
      last.answer('It says swordfish.'),
    ]);
    const runtime = runtimeWith({ model, agents: [agent('reader', ['files:*'])], mcpServers: { files: filesystemServer(dir.path) } });

    const result = await runtime.run('reader', 'What do my notes say?');

    expect(result).toMatchObject({ status: 'completed', output: 'It says swordfish.' });
    const read = offered.find((tool) => tool.name === 'files:read_text_file');
    expect(read?.parameters).toMatchObject({ type: 'object', properties: { path: { type: 'string' } }, required: ['path'] });
    expect(read?.parameters).not.toHaveProperty('$schema');
    expect(offered.map((tool) => tool.name)).toEqual(expect.arrayContaining(['files:write_file', 'files:list_directory']));
    expect(toolMessages(last.request)).toEqual([expect.objectContaining({ content: 'The password is swordfish.' })]);
    expect(runtime.mcpServers()).toEqual([
      expect.objectContaining({ name: 'files', transport: 'stdio', state: 'ready', pid: expect.any(Number), tools: expect.arrayContaining(['read_text_file']) }),
    ]);
  });

  it('offers only the tools an allow-list names (server:tool) and refuses the others', async () => {
    const offered = offeredTools();
    const last = lastRequest();
    const model = scripted([
      offered.then(toolCall('files:write_file', { path: join(dir.path, 'x.txt'), content: 'x' })),
      last.answer('done'),
    ]);
    const runtime = runtimeWith({
      model,
      agents: [agent('lister', ['files:list_directory', 'files:list_allowed_directories'])],
      mcpServers: { files: filesystemServer(dir.path) },
    });

    await runtime.run('lister', 'Write x.');

    expect(offered.names).toEqual(['files:list_directory', 'files:list_allowed_directories']);
    const [refused] = toolMessages(last.request);
    expect(refused).toMatchObject({ isError: true });
    expect(refused?.content).toMatch(/Unknown tool "files:write_file"\. Available tools: files:list_directory, files:list_allowed_directories/);
  });

  it('lets spawn_agent give a new agent an MCP tool its creator has (by name or server:*), and refuses one it lacks', async () => {
    writeFileSync(join(dir.path, 'notes.txt'), 'Meet at noon.');
    let offered: string[] = [];
    const reply = (request: ModelRequest) => String(toolMessages(request).at(-1)?.content);
    const model = scriptedPerAgent({
      lead: [
        callTools(
          toolCall('spawn_agent', { name: 'reader', task: 'Read notes.txt.', system_prompt: 'You read files.', tools: ['files:read_text_file'] }, 's1'),
        ),
        reply,
      ],
      boss: [callTools(toolCall('spawn_agent', { name: 'writer', task: 'Write a file.', system_prompt: 'You write.', tools: ['files:write_file'] }, 's2')), reply],
      reader: [
        (request) => {
          offered = request.tools.map((tool) => tool.name);
          return callTools(toolCall('files:read_text_file', { path: join(dir.path, 'notes.txt') }));
        },
        (request) => `The notes say: ${reply(request)}`,
      ],
    });
    const runtime = runtimeWith({
      model,
      agents: [agent('lead', ['spawn_agent', 'files:*']), agent('boss', ['spawn_agent', 'files:read_text_file'])],
      mcpServers: { files: filesystemServer(dir.path) },
    });

    const first = await runtime.run('lead', 'Find out what the notes say.');
    const second = await runtime.run('boss', 'Have someone write a file.');

    expect(first.output).toContain('The notes say: Meet at noon.');
    expect(offered).toEqual(['files:read_text_file']);
    expect(second.output).toMatch(/may only get tools of its creator; "boss" does not have files:write_file/);
  });

  it('turns malformed calls into error results the model sees: not JSON, not an object, refused by the server', async () => {
    const last = lastRequest();
    const model = scripted([
      callTools(
        toolCall('files:read_text_file', '{not json', 'bad-json'),
        toolCall('files:read_text_file', [1, 2], 'not-object'),
        toolCall('files:read_text_file', { path: 5 }, 'wrong-type'),
      ),
      last.answer('I give up.'),
    ]);
    const runtime = runtimeWith({ model, agents: [agent('reader', ['files:*'])], mcpServers: { files: filesystemServer(dir.path) } });

    expect(await runtime.run('reader', 'Read.')).toMatchObject({ status: 'completed' });

    const [badJson, notObject, wrongType] = toolMessages(last.request);
    expect(badJson).toMatchObject({ isError: true, content: expect.stringMatching(/not valid JSON/) });
    expect(notObject).toMatchObject({ isError: true, content: expect.stringMatching(/do not match its parameters/) });
    expect(wrongType).toMatchObject({ isError: true, content: expect.stringMatching(/expected string/i) });
  });

  it('gives error results when the server dies mid-run, and the run goes on', async () => {
    writeFileSync(join(dir.path, 'a.txt'), 'first');
    const last = lastRequest();
    let runtime!: Runtime;
    const model = scripted([
      callTools(toolCall('files:read_text_file', { path: join(dir.path, 'a.txt') })),
      async () => {
        const { pid } = runtime.mcpServers()[0]!;
        process.kill(pid!, 'SIGKILL');
        await until(() => runtime.mcpServers()[0]!.state === 'failed');
        return callTools(toolCall('files:read_text_file', { path: join(dir.path, 'a.txt') }, 'after-death'));
      },
      last.answer('The server died.'),
    ]);
    runtime = runtimeWith({ model, agents: [agent('reader', ['files:*'])], mcpServers: { files: filesystemServer(dir.path) } });

    const result = await runtime.run('reader', 'Read a.txt twice.');

    expect(result).toMatchObject({ status: 'completed', output: 'The server died.' });
    const [first, second] = toolMessages(last.request);
    expect(first).toMatchObject({ content: 'first' });
    expect(second).toMatchObject({ isError: true, content: expect.stringMatching(/MCP server "files" is not available: its connection closed/) });
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/connection closed/) });
  });

  it('gives error results with a clear message for a server that fails to start (a bad command)', async () => {
    const offered = offeredTools();
    const last = lastRequest();
    const model = scripted([
      offered.then(toolCall('files:read_text_file', { path: 'a.txt' })),
      last.answer('No files today.'),
    ]);
    const runtime = runtimeWith({
      model,
      agents: [agent('reader', ['files:*'])],
      mcpServers: { files: { command: '/nonexistent/mcp-server-binary', args: [] } },
    });

    expect(await runtime.run('reader', 'Read.')).toMatchObject({ status: 'completed', output: 'No files today.' });

    expect(offered.names).toEqual([]);
    expect(toolMessages(last.request)[0]).toMatchObject({
      isError: true,
      content: expect.stringMatching(/MCP server "files" is not available: failed to start: .*ENOENT/),
    });
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'failed', error: expect.stringMatching(/ENOENT/) });
  });

  it('says that a stdio server\'s cwd does not exist, not that its command is missing', async () => {
    const last = lastRequest();
    const missing = join(dir.path, 'no-such-folder');
    const model = scripted([callTools(toolCall('files:read_text_file', { path: 'a.txt' })), last.answer('No files.')]);
    const runtime = runtimeWith({ model, agents: [agent('reader', ['files:*'])], mcpServers: { files: filesystemServer(dir.path, { cwd: missing }) } });

    expect(await runtime.run('reader', 'Read.')).toMatchObject({ status: 'completed', output: 'No files.' });

    const message = `failed to start: its cwd ${missing} does not exist`;
    expect(toolMessages(last.request)[0]).toMatchObject({ isError: true, content: `Error: MCP server "files" is not available: ${message}.` });
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'failed', error: message });
  });

  it('spawns nothing when it is closed while it checks the cwd of a server that is starting', async () => {
    const connection = new McpConnection('files', filesystemServer(dir.path, { cwd: dir.path }) as McpStdioServerConfig);
    const started = connection.start();

    await connection.close();
    await started;

    expect(connection.status()).toMatchObject({ state: 'closed' });
    expect(connection.status().pid).toBeUndefined();
  });

  it('keeps a token of a server\'s env out of events when the server quotes it as it fails', async () => {
    const token = 'ghp_0123456789abcdefghij';
    const model = scripted([callTools(toolCall('gh:issues', {})), 'No GitHub.']);
    const quoting = 'console.error("refused token " + process.env.GITHUB_TOKEN); process.exit(1)';
    const runtime = runtimeWith({
      model,
      agents: [agent('dev', ['gh:*'])],
      mcpServers: { gh: { command: process.execPath, args: ['-e', quoting], env: { GITHUB_TOKEN: token } } },
    });
    const events: TroupeEvent[] = [];
    runtime.events$.subscribe((event) => events.push(event));

    await runtime.run('dev', 'List the issues.');

    const result = events.find((event) => event.type === 'tool.result');
    expect(result).toMatchObject({ status: 'error', error: expect.stringContaining('refused token [redacted]') });
    expect(JSON.stringify(events)).not.toContain(token);
  });

  it('gives up on a server that does not answer within timeoutMs, and ends its process', async () => {
    const model = scripted([callTools(toolCall('slow:anything', {})), 'Moved on.']);
    const runtime = createRuntime({
      model,
      projectAgentDir: false,
      agents: [agent('waiter', ['slow:*'])],
      mcpServers: { slow: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], timeoutMs: 300 } },
    });

    expect(await runtime.run('waiter', 'Wait.')).toMatchObject({ status: 'completed', output: 'Moved on.' });
    const [status] = runtime.mcpServers();
    expect(status).toMatchObject({ state: 'failed', error: 'failed to start: it did not answer within 300 ms (timeoutMs)' });
    await until(() => !isRunning(status!.pid!));
    await runtime.shutdown();
  });

  it('says, when a server times out at start, that it wrote what is not MCP on its stdout (a log line)', async () => {
    const model = scripted([callTools(toolCall('chatty:anything', {})), 'Moved on.']);
    const banner = 'console.log("Server listening on stdio"); setInterval(() => {}, 1000)';
    const runtime = createRuntime({
      model,
      projectAgentDir: false,
      agents: [agent('waiter', ['chatty:*'])],
      // Long enough for a Node process to start and print its banner on a loaded machine (at 300 ms it sometimes had not).
      mcpServers: { chatty: { command: process.execPath, args: ['-e', banner], timeoutMs: 2_000 } },
    });

    expect(await runtime.run('waiter', 'Wait.')).toMatchObject({ status: 'completed', output: 'Moved on.' });
    const [status] = runtime.mcpServers();
    expect(status).toMatchObject({
      state: 'failed',
      error: expect.stringMatching(/^failed to start: it did not answer within 2000 ms \(timeoutMs\); it wrote what is not MCP on its stdout \(.*"Server lis/),
    });
    await until(() => !isRunning(status!.pid!));
    await runtime.shutdown();
  });

  it('ends a server that is still starting when the runtime shuts down, and fails the turn that waits for it no further', async () => {
    const model = scripted([]);
    const runtime = createRuntime({
      model,
      projectAgentDir: false,
      agents: [agent('waiter', ['slow:*'])],
      mcpServers: { slow: { command: process.execPath, args: ['-e', 'setInterval(() => {}, 1000)'], timeoutMs: 60_000 } },
    });
    const handle = runtime.spawn('waiter', 'Wait.');
    await until(() => runtime.mcpServers()[0]!.state === 'starting');

    await runtime.shutdown();

    const [status] = runtime.mcpServers();
    expect(status).toMatchObject({ state: 'closed', pid: expect.any(Number) });
    expect(isRunning(status!.pid!)).toBe(false);
    expect(await handle.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
  });

  it('starts a server on the first turn of an agent that needs it, shares it between agents, and ends its process at shutdown', async () => {
    const model = scripted(['one', 'two']);
    const runtime = createRuntime({
      model,
      projectAgentDir: false,
      agents: [agent('a', ['files:list_directory']), agent('b', ['files:*']), agent('c', [])],
      mcpServers: { files: filesystemServer(dir.path) },
    });
    expect(runtime.mcpServers()).toEqual([expect.objectContaining({ name: 'files', state: 'idle' })]);

    await runtime.run('a', 'Go.');
    await runtime.run('b', 'Go.');
    const [status] = runtime.mcpServers();
    expect(runtime.mcpServers()).toHaveLength(1);
    expect(status).toMatchObject({ state: 'ready' });
    expect(isRunning(status!.pid!)).toBe(true);

    await runtime.shutdown();

    expect(isRunning(status!.pid!)).toBe(false);
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'closed' });
  });
});

describe('MCP servers that misbehave', () => {
  it('offers the valid tools of a server that lists one with a bad input schema, and says why a call to that one is refused', async () => {
    const offered = offeredTools();
    const last = lastRequest();
    const model = scripted([
      offered.then(toolCall('odd:bad', {}, 'bad')),
      callTools(toolCall('odd:echo', { text: 'hi' }, 'echo')),
      last.answer('done'),
    ]);
    const runtime = runtimeWith({ model, agents: [agent('user', ['odd:*'])], mcpServers: { odd: scriptedStdioServer('bad-schema') } });

    expect(await runtime.run('user', 'Use the odd server.')).toMatchObject({ status: 'completed', output: 'done' });

    expect(offered.names).toEqual(['odd:echo', 'odd:fail', 'odd:crash', 'odd:hang']);
    const [bad, echo] = toolMessages(last.request);
    expect(bad).toMatchObject({
      isError: true,
      content: 'Error: MCP server "odd" listed the tool "bad" with an entry that is not valid (inputSchema.type: Invalid input: expected "object"), so it is not offered.',
    });
    expect(echo).toMatchObject({ content: '{"text":"hi"}' });
    expect(runtime.mcpServers()[0]).toMatchObject({
      state: 'ready',
      tools: ['echo', 'fail', 'crash', 'hang'],
      refusedTools: [{ name: 'bad', reason: 'inputSchema.type: Invalid input: expected "object"' }],
    });
  });
  it('ends a call that passes toolTimeoutMs as a tool time-out that names the limit, and the server answers the next call', async () => {
    const last = lastRequest();
    const model = scripted([callTools(toolCall('slow:hang', {}, 'hang')), callTools(toolCall('slow:echo', { after: true }, 'echo')), last.answer('done')]);
    const runtime = runtimeWith({ model, agents: [agent('user', ['slow:*'])], mcpServers: { slow: scriptedStdioServer('normal', { toolTimeoutMs: 300 }) } });

    expect(await runtime.run('user', 'Call the slow tool.')).toMatchObject({ status: 'completed', output: 'done' });

    const [hang, echo] = toolMessages(last.request);
    expect(hang).toMatchObject({ isError: true, content: 'Error: Tool "slow:hang" timed out after 300 ms.' });
    expect(echo).toMatchObject({ content: '{"after":true}' });
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'ready' });
  });

  it("cuts an answer longer than the server's maxResultChars, and says how long it was", async () => {
    const last = lastRequest();
    const model = scripted([callTools(toolCall('big:echo', { text: 'x'.repeat(100) }, 'big'), toolCall('big:echo', { n: 1 }, 'small')), last.answer('done')]);
    const runtime = runtimeWith({ model, agents: [agent('user', ['big:*'])], mcpServers: { big: scriptedStdioServer('normal', { maxResultChars: 20 }) } });

    expect(await runtime.run('user', 'Call it.')).toMatchObject({ status: 'completed', output: 'done' });

    const [big, small] = toolMessages(last.request);
    expect(big?.content).toBe(`{"text":"${'x'.repeat(11)}\n[cut: the answer had 111 characters; the first 20 are shown (the server's maxResultChars)]`);
    expect(small?.content).toBe('{"n":1}');
  });

  it('shows the model an answer with a block MCP does not define: its text, and the other blocks as JSON', async () => {
    const last = lastRequest();
    const model = scripted([callTools(toolCall('raw:odd', {})), last.answer('done')]);
    const runtime = runtimeWith({ model, agents: [agent('user', ['raw:*'])], mcpServers: { raw: rawStdioServer() } });

    expect(await runtime.run('user', 'Use the raw server.')).toMatchObject({ status: 'completed', output: 'done' });

    const [odd] = toolMessages(last.request);
    expect(odd).toMatchObject({ content: 'Here it is:\n{"type":"widget","size":3}\n{"type":"image"}' });
    expect(odd?.isError).not.toBe(true);
  });
});

describe('MCP servers in simulated time', () => {
  it('lets runUntilIdle wait, in real time, for a server to start and answer before an idle timeout may fire', async () => {
    const clock = simulatedClock();
    const last = lastRequest();
    const model = scripted([callTools(toolCall('files:list_allowed_directories', {})), last.answer('ok')]);
    const runtime = runtimeWith({ model, clock, agents: [agent('a', ['files:*'])], mcpServers: { files: filesystemServer(dir.path) } });

    const result = runtime.run('a', 'Where may you look?');
    await runtime.runUntilIdle();

    expect(await result).toMatchObject({ status: 'completed', output: 'ok' });
    expect(toolMessages(last.request)[0]?.content).toContain(dir.path);
  });
});

describe('MCP servers in agent definitions and agent files', () => {
  it('gives an agent every tool of the servers in its own mcpServers, in either of Claude Code shapes', async () => {
    const offered: Record<string, string[]> = {};
    const model = scripted([
      (request) => ((offered[request.agentName] = request.tools.map((tool) => tool.name)), 'ok'),
      (request) => ((offered[request.agentName] = request.tools.map((tool) => tool.name)), 'ok'),
    ]);
    const agentsDir = join(dir.path, 'agents');
    mkdirSync(agentsDir);
    const server = filesystemServer(dir.path) as McpStdioServerConfig;
    const disk = `  disk:\n    command: ${JSON.stringify(server.command)}\n    args: ${JSON.stringify(server.args)}`;
    writeFileSync(join(agentsDir, 'mapped.md'), `---\nname: mapped\ndescription: Has its own server.\nmcpServers:\n${disk}\n---\nYou read files.\n`);
    writeFileSync(join(agentsDir, 'listed.md'), `---\nname: listed\ndescription: Names the runtime's server.\nmcpServers:\n  - files\n---\nYou read files.\n`);
    const runtime = runtimeWith({ model, agentDirs: [agentsDir], mcpServers: { files: server } });
    expect(runtime.agentFileErrors).toEqual([]);

    await runtime.run('mapped', 'Go.');
    await runtime.run('listed', 'Go.');

    expect(offered.mapped).toEqual(expect.arrayContaining(['disk:read_text_file', 'disk:write_file']));
    expect(offered.listed).toEqual(expect.arrayContaining(['files:read_text_file']));
  });

  it('refuses, when the runtime is made, an agent that lists a tool of a server nobody defines, and bad server options', () => {
    expect(() => createRuntime({ projectAgentDir: false, model: scripted([]), agents: [agent('a', ['nope:*'])] })).toThrow(ConfigurationError);
    expect(() => createRuntime({ projectAgentDir: false, model: scripted([]), agents: [agent('a', ['nope:*'])] })).toThrow(
      /lists the tool "nope:\*", but there is no MCP server "nope"/,
    );
    expect(() => createRuntime({ projectAgentDir: false, mcpServers: { 'bad name': { command: 'x' } } })).toThrow(ConfigurationError);
    // The name's rule, not zod's "Invalid key in record".
    expect(() => createRuntime({ projectAgentDir: false, mcpServers: { 'bad name': { command: 'x' } } })).toThrow(
      'mcpServers.bad name: an MCP server name must be 1-64 letters, digits, "_" or "-"',
    );
    expect(() => createRuntime({ projectAgentDir: false, mcpServers: { files: { command: '' } } })).toThrow(/mcpServers\.files/);
    expect(() => createRuntime({ projectAgentDir: false, mcpServers: { old: { type: 'sse', url: 'http://x' } as never } })).toThrow(/SSE transport is not supported/);
  });

  it('refuses a server URL with a user name and password, without quoting them (fetch refused it at start, quoting the password to the model)', () => {
    const agentsDir = join(dir.path, 'agents');
    mkdirSync(agentsDir);
    writeFileSync(join(agentsDir, 'web.md'), `---\nname: web\ndescription: Web.\nmcpServers:\n  search:\n    type: http\n    url: http://ada:hunter22@127.0.0.1:9/mcp\n---\nYou.\n`);
    const runtime = runtimeWith({ model: scripted([]), agentDirs: [agentsDir] });
    const refusal = 'url: must not hold a user name or password (fetch refuses such a URL): give them in headers, such as Authorization';

    expect(runtime.agentFileErrors.map((error) => error.message)).toEqual([expect.stringContaining(`mcpServers.search: ${refusal}`)]);
    expect(runtime.agentFileErrors[0]?.message).not.toContain('hunter22');
    const make = () => createRuntime({ projectAgentDir: false, mcpServers: { search: { type: 'http', url: 'http://ada:hunter22@127.0.0.1:9/mcp' } } });
    expect(make).toThrow(ConfigurationError);
    expect(make).toThrow(`mcpServers.search: ${refusal}`);
  });

  it('says what is wrong in a server definition that names its transport, not only which two shapes there are', () => {
    const agentsDir = join(dir.path, 'agents');
    mkdirSync(agentsDir);
    writeFileSync(join(agentsDir, 'envs.md'), `---\nname: envs\ndescription: Bad env.\nmcpServers:\n  notes:\n    command: node\n    env: { PORT: 8080 }\n---\nYou.\n`);
    writeFileSync(join(agentsDir, 'web.md'), `---\nname: web\ndescription: No url.\nmcpServers:\n  - search:\n      type: http\n---\nYou.\n`);
    const runtime = runtimeWith({ model: scripted([]), agentDirs: [agentsDir] });

    expect(runtime.agentFileErrors.map((error) => error.message)).toEqual([
      expect.stringContaining('mcpServers.notes: env.PORT: Invalid input: expected string, received number'),
      expect.stringContaining('mcpServers.0.search: url: Invalid input: expected string, received undefined'),
    ]);
    expect(() => createRuntime({ projectAgentDir: false, mcpServers: { files: { command: 'node', args: 'server.js' } as never } })).toThrow(
      'mcpServers.files: args: Invalid input: expected array, received string',
    );
  });

  it('refuses a misspelled field of a server definition (it was dropped without a word), and passes fields of other tools', () => {
    const make = (files: object) => () => createRuntime({ projectAgentDir: false, model: scripted([]), mcpServers: { files: files as never } });
    expect(make({ command: 'node', arg: ['server.js'] })).toThrow(ConfigurationError);
    expect(make({ command: 'node', arg: ['server.js'] })).toThrow('mcpServers.files: unknown field "arg" (did you mean "args"?)');
    // Cline's timeout (60: seconds) and Gemini CLI's limit each call: not pointed at timeoutMs, a start's limit in ms.
    expect(make({ command: 'node', timeout: 60 })).toThrow(
      'mcpServers.files: unknown field "timeout": troupe reads timeoutMs (how long the server may take to start) and toolTimeoutMs (how long one call may take), both in ms',
    );
    expect(make({ type: 'http', url: 'http://127.0.0.1:9/mcp', header: { Authorization: 'Bearer x' } })).toThrow('(did you mean "headers"?)');
    // A field far from every field troupe reads is another tool's (Cline's autoApprove, disabled): it is left alone.
    expect(make({ command: 'node', autoApprove: [], disabled: false })).not.toThrow();
    // VS Code's dev (its development mode) is two edits from env, and no misspelling of it.
    expect(make({ type: 'stdio', command: 'node', envFile: '.env', dev: { watch: 'build/**/*.js' } })).not.toThrow();

    const agentsDir = join(dir.path, 'agents');
    mkdirSync(agentsDir);
    writeFileSync(join(agentsDir, 'envs.md'), `---\nname: envs\ndescription: Typo.\nmcpServers:\n  - notes:\n      command: node\n      envs: { A: b }\n---\nYou.\n`);
    const runtime = runtimeWith({ model: scripted([]), agentDirs: [agentsDir] });
    expect(runtime.agentFileErrors.map((error) => error.message)).toEqual([
      expect.stringContaining('mcpServers.0.notes: unknown field "envs" (did you mean "env"?)'),
    ]);
  });

  it('refuses an agent file that names an MCP server nobody defines, and loads the others', () => {
    const agentsDir = join(dir.path, 'agents');
    mkdirSync(agentsDir);
    writeFileSync(join(agentsDir, 'lost.md'), `---\nname: lost\ndescription: Lost.\ntools: ["nowhere:*"]\n---\nYou are lost.\n`);
    writeFileSync(join(agentsDir, 'fine.md'), `---\nname: fine\ndescription: Fine.\ntools: ["files:*"]\n---\nYou are fine.\n`);
    const runtime = runtimeWith({ model: scripted([]), agentDirs: [agentsDir], mcpServers: { files: filesystemServer(dir.path) } });

    expect(runtime.agentNames).toEqual(['fine']);
    expect(runtime.agentFileErrors.map((error) => error.message)).toEqual([expect.stringMatching(/no MCP server "nowhere"/)]);
    // `files:*` is not taken for a tool the runtime lacks (agent files drop those with a warning).
    expect(runtime.agentFileWarnings).toEqual([]);
  });

  it('gives the default agent every tool of every runtime server', async () => {
    let offered: string[] = [];
    const model = scripted([(request) => ((offered = request.tools.map((tool) => tool.name)), 'ok')]);
    const runtime = runtimeWith({ model, mcpServers: { files: filesystemServer(dir.path) } });

    await runtime.run('general-purpose', 'Go.');

    expect(offered).toEqual(expect.arrayContaining(['files:read_text_file', 'files:write_file']));
  });
});

describe('MCP servers over streamable HTTP', () => {
  it('lists and calls the tools of a server at a URL', async () => {
    const server = await httpMcpServer();
    try {
      const last = lastRequest();
      const model = scripted([
        callTools(toolCall('calc:add', { a: 2, b: 3 }, 'add'), toolCall('calc:shout', { text: 'hi' }, 'shout')),
        last.answer('5 and HI'),
      ]);
      const runtime = runtimeWith({ model, agents: [agent('calc', ['calc:*'])], mcpServers: { calc: { type: 'http', url: server.url } } });

      expect(await runtime.run('calc', 'Add and shout.')).toMatchObject({ status: 'completed' });

      expect(toolMessages(last.request).map((message) => message.content)).toEqual(['5', 'HI']);
      expect(runtime.mcpServers()[0]).toMatchObject({ name: 'calc', transport: 'http', state: 'ready', tools: ['add', 'shout'] });
      await runtime.shutdown();
    } finally {
      await server.close();
    }
  });

  it('names the HTTP status a server at a URL refused the start with (401: check its headers)', async () => {
    const refusing = createHttpServer((_request, response) => response.writeHead(401, { 'content-type': 'application/json' }).end('{"error":"no token"}'));
    await new Promise<void>((resolve) => refusing.listen(0, '127.0.0.1', resolve));
    try {
      const { port } = refusing.address() as AddressInfo;
      const model = scripted([callTools(toolCall('calc:add', { a: 1, b: 2 })), 'No calculator.']);
      const runtime = runtimeWith({ model, agents: [agent('calc', ['calc:*'])], mcpServers: { calc: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } });

      await runtime.run('calc', 'Add.');

      expect(runtime.mcpServers()[0]).toMatchObject({
        state: 'failed',
        error: 'failed to start: HTTP 401 (check its headers: Authorization): Streamable HTTP error: Error POSTing to endpoint: {"error":"no token"}',
      });
    } finally {
      refusing.closeAllConnections();
      await new Promise<void>((resolve) => refusing.close(() => resolve()));
    }
  });

  it('says why a server at a URL cannot be reached (the connection refused), not only "fetch failed"', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const last = lastRequest();
    const model = scripted([callTools(toolCall('calc:add', { a: 1, b: 2 })), last.answer('No calculator.')]);
    const runtime = runtimeWith({ model, agents: [agent('calc', ['calc:*'])], mcpServers: { calc: { type: 'http', url: `http://127.0.0.1:${port}/mcp` } } });

    expect(await runtime.run('calc', 'Add.')).toMatchObject({ status: 'completed', output: 'No calculator.' });

    const message = `failed to start: fetch failed (connect ECONNREFUSED 127.0.0.1:${port})`;
    expect(toolMessages(last.request)[0]).toMatchObject({ isError: true, content: `Error: MCP server "calc" is not available: ${message}.` });
    expect(runtime.mcpServers()[0]).toMatchObject({ state: 'failed', error: message });
  });
});

/** A step that makes tool calls and keeps the names of the tools the model was offered. */
function offeredTools() {
  let names: string[] = [];
  return {
    then: (call: ToolCall) => (request: ModelRequest) => ((names = request.tools.map((tool) => tool.name)), callTools(call)),
    get names(): string[] {
      return names;
    },
  };
}

/** A step that answers with `text` and keeps the request it answered (whose conversation holds the last results). */
function lastRequest() {
  let kept: ModelRequest | undefined;
  return {
    answer: (text: string) => (request: ModelRequest) => ((kept = request), text),
    get request(): ModelRequest {
      if (!kept) throw new Error('The model was not asked for the last answer.');
      return kept;
    },
  };
}

/** Waits (in real time, at most 5 s) until `done` holds. */
async function until(done: () => boolean): Promise<void> {
  for (let waited = 0; !done(); waited += 20) {
    if (waited > 5_000) throw new Error('Timed out waiting.');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
