// `troupe run … --ui` and `troupe ui FILE`: the run in troupe's web inspector, its page kept until Ctrl-C; a saved run
// served to scrub through. The command runs as a child process from the source, offline; the page is read as a
// browser's EventSource would read it.
import { createServer, type AddressInfo } from 'node:net';
import { appendFileSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { createRuntime, readRecording, type TroupeEvent } from 'troupe';
import { scripted, worker } from '../stubs.js';
import { killStartedTroupes, startTroupe, troupe } from '../support/cli.js';
import { readEvents } from '../support/sse.js';
import { tempDir } from '../support/tempDir.js';

const scratch = tempDir();
afterEach(killStartedTroupes);
afterAll(() => scratch.remove());

async function eventsAt(url: string): Promise<{ hello: unknown; events: TroupeEvent[] }> {
  const reader = await readEvents(`${url}api/events`);
  await reader.until((event) => event.event === 'end');
  reader.close();
  return {
    hello: JSON.parse(reader.events[0]!.data),
    events: reader.events.filter((event) => event.event === 'message').flatMap((event) => JSON.parse(event.data) as TroupeEvent[]),
  };
}

describe('troupe run --ui', () => {
  it('prints the page to open, serves the whole run there after it ended until Ctrl-C, then exits with the run', async () => {
    const trace = join(scratch.path, 'run.jsonl');
    const command = startTroupe(['run', 'examples/scenario.ts', '--ui', '--quiet', '--trace', trace, '--store', join(scratch.path, 's.json')]);
    const [, url] = await command.waitForStderr(/watch the run in the web inspector: open (http:\/\/127\.0\.0\.1:\d+\/)\n/);
    await command.waitForStderr(/the run has ended; the web inspector still shows it at (\S+) \(Ctrl-C to exit\)\n/);
    expect(command.stdout()).toMatch(/^Lisbon it is\./);
    const live = await eventsAt(url!);
    expect(live.hello).toEqual({ title: 'troupe run', mode: 'live', instance: expect.any(String) });
    const names = live.events.filter((event) => event.type === 'agent.completed').map((event) => (event.type === 'agent.completed' ? event.name : ''));
    expect(names.sort()).toEqual(['accountant', 'meteorologist', 'planner']);
    command.child.kill('SIGINT');
    expect(await command.exited).toBe(0);

    // The same run, saved with --trace, served by `troupe ui`.
    const replay = startTroupe(['ui', trace]);
    const [, replayUrl] = await replay.waitForStderr(/the saved run is in the web inspector: open (http:\/\/127\.0\.0\.1:\d+\/) \(Ctrl-C to exit\)\n/);
    const saved = await eventsAt(replayUrl!);
    expect(saved.hello).toEqual({ title: 'run.jsonl', mode: 'replay', instance: expect.any(String) });
    expect(saved.events).toEqual(live.events);
    replay.child.kill('SIGINT');
    expect(await replay.exited).toBe(0);
  });

  it('listens on the port given', async () => {
    const free = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port } = server.address() as AddressInfo;
        server.close(() => resolve(port));
      });
    });
    const command = startTroupe(['run', 'examples/scenario.ts', `--ui`, String(free), '--quiet', '--store', join(scratch.path, 'p.json')]);
    const [, port] = await command.waitForStderr(/web inspector: open http:\/\/127\.0\.0\.1:(\d+)\//);
    expect(Number(port)).toBe(free);
    await command.waitForStderr(/the run has ended/);
    command.child.kill('SIGINT');
    expect(await command.exited).toBe(0);
  });
});

describe('troupe ui', () => {
  it('refuses a file it cannot read, in one line, with exit code 2', async () => {
    const missing = await troupe(['ui', join(scratch.path, 'missing.jsonl')]);
    expect(missing.code).toBe(2);
    expect(missing.stderr).toMatch(/^troupe ui: cannot read .*missing\.jsonl: .*\n$/);
    const bad = await troupe(['run', 'examples/scenario.ts', '--ui', 'eighty']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--ui.*must be a port number/);
  });

  it('serves a run whose last line a crash cut short without it, and says so', async () => {
    const file = join(scratch.path, 'torn.jsonl');
    const runtime = createRuntime({ model: scripted(['Hi.']), agents: [worker('greeter')], record: file, projectAgentDir: false });
    await runtime.run('greeter', 'Greet.');
    await runtime.shutdown();
    const whole = await readRecording(file);
    const lines = readFileSync(file, 'utf8').split('\n').length; // the last line is empty: the torn one takes its number
    appendFileSync(file, '{"type":"agent.sta');
    const replay = startTroupe(['ui', file]);
    await replay.waitForStderr(new RegExp(`troupe: line ${lines} of .*torn\\.jsonl, its last, was cut short, as by a crash, and is left out\n`));
    const [, url] = await replay.waitForStderr(/open (http:\/\/127\.0\.0\.1:\d+\/) \(Ctrl-C to exit\)\n/);
    expect((await eventsAt(url!)).events).toEqual(whole.events);
    replay.child.kill('SIGINT');
    expect(await replay.exited).toBe(0);
  });

  it('says that a port taken is the port, not the file, in one line with exit code 2', async () => {
    const file = join(scratch.path, 'replay.jsonl');
    writeFileSync(file, '{"type":"recording","schemaVersion":2,"runId":"r1"}\n');
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, '127.0.0.1', resolve));
    const { port } = taken.address() as AddressInfo;
    try {
      const { code, stderr } = await troupe(['ui', file, '--port', String(port)]);
      expect(code).toBe(2);
      expect(stderr).toMatch(new RegExp(`^troupe ui: cannot start the web inspector: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}\n$`));
      // With the Stately inspector asked for too, the run stops with that one line, before any page was printed.
      const both = await troupe(['run', 'examples/scenario.ts', '--inspect', '--ui', String(port), '--store', join(scratch.path, 'both.json')]);
      expect(both.code).toBe(2);
      expect(both.stderr).toMatch(new RegExp(`^troupe: cannot start the web inspector: listen EADDRINUSE: address already in use 127\\.0\\.0\\.1:${port}\n$`));
    } finally {
      await new Promise((resolve) => taken.close(resolve));
    }
  });
});
