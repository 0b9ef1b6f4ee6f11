// `troupe run … --inspect`: the run is shown in the Stately inspector, whose page stays up after the run until Ctrl-C.
// A WebSocket client stands in for the page; the command runs as a child process from the source, offline.
import { join } from 'node:path';
import WebSocket from 'ws';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { killStartedTroupes, startTroupe } from '../support/cli.js';
import { tempDir } from '../support/tempDir.js';

const scratch = tempDir();
afterEach(killStartedTroupes);
afterAll(() => scratch.remove());

interface Seen {
  type: string;
  sessionId: string;
  name?: string;
  sourceId?: string;
  snapshot?: { value?: unknown };
}

describe('troupe run --inspect', () => {
  it('prints the page to open, shows every agent there, keeps it after the run until Ctrl-C, then exits with the run', async () => {
    const command = startTroupe(['run', 'examples/scenario.ts', '--inspect', '--quiet', '--store', join(scratch.path, 's.json')]);
    const { child, exited } = command;
    const [, url, port] = await command.waitForStderr(/open (http:\/\/127\.0\.0\.1:(\d+)\/)\n/);
    expect(url).toBe(`http://127.0.0.1:${port}/`);
    await command.waitForStderr(/the run has ended; the Stately inspector still shows it at (\S+) \(Ctrl-C to exit\)\n/);
    expect(command.stdout()).toMatch(/^Lisbon it is\./);

    // A page opened after the run: every actor, in its last state, and nothing else.
    const socket = new WebSocket(`ws://127.0.0.1:${port}`);
    const seen: Seen[] = [];
    socket.on('message', (data: unknown) => seen.push(JSON.parse(String(data)) as Seen));
    const closed = new Promise((resolve) => socket.once('close', resolve));
    await new Promise((resolve) => socket.once('open', resolve));
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    await closed;

    expect(seen.every((message) => message.type === '@xstate.actor')).toBe(true);
    const names = seen.map((message) => message.name!);
    expect(names[0]).toBe('supervisor');
    expect(names.filter((name) => name.startsWith('agent:')).map((name) => name.split(':')[1]).sort()).toEqual(['accountant', 'meteorologist', 'planner']);
    for (const message of seen.slice(1)) expect(message.snapshot?.value).toBe('completed');
  });
});
