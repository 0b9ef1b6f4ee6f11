// A session's owner is a process (pid, host, start): a pid that runs again in a later process (pids are reused, and
// start over after a reboot) is not the owner, so its sessions read as interrupted. Linux only: elsewhere a process's
// start cannot be read, and a running pid is taken for the owner.
import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, JsonFileMemory, SESSIONS_KEY } from 'troupe';
import { processStartTime } from '../../src/memory/processStart.js';
import { eachTestTempDir } from '../support/tempDir.js';

const scratch = eachTestTempDir();
const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.' });
let child: ChildProcess | undefined;
afterEach(() => child?.kill());

/** A store file holding one running session of this process, as a real run writes it; returns its file and id. */
async function runningSession(): Promise<{ file: string; id: string; stored: Record<string, unknown> }> {
  const file = join(scratch.path, 'live.json');
  const runtime = createRuntime({ model: { name: 'stuck', complete: () => new Promise<never>(() => {}) }, agents: [clerk], store: new JsonFileMemory(file), projectAgentDir: false });
  const { id } = runtime.spawn('clerk', 'Sell a tea.');
  await runtime.flush();
  const stored = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
  await runtime.shutdown();
  return { file: join(scratch.path, 'store.json'), id, stored };
}

/** The session's state read by a runtime of this process, once its owner is `owner`. */
async function stateWithOwner(owner: { pid: number; startedAt: number }): Promise<string | undefined> {
  const { file, id, stored } = await runningSession();
  const sessions = stored[SESSIONS_KEY] as Record<string, { owner: { pid: number; startedAt: number } }>;
  Object.assign(sessions[id]!.owner, owner);
  writeFileSync(file, JSON.stringify(stored));
  const runtime = createRuntime({ model: { name: 'stuck', complete: () => new Promise<never>(() => {}) }, agents: [clerk], store: new JsonFileMemory(file), projectAgentDir: false });
  const state = (await runtime.sessions.get(id))?.state;
  await runtime.shutdown();
  return state;
}

describe.skipIf(process.platform !== 'linux')('a session whose owner pid runs another process', () => {
  it('reads as interrupted when the process with that pid started at another time, and running when it is the owner', async () => {
    child = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60_000)'], { stdio: 'ignore' });
    const pid = child.pid!;
    let started: number | undefined;
    while ((started = processStartTime(pid)) === undefined) await new Promise((resolve) => setTimeout(resolve, 10));

    expect(await stateWithOwner({ pid, startedAt: started })).toBe('running'); // the owner runs
    expect(await stateWithOwner({ pid, startedAt: started - 3_600_000 })).toBe('interrupted'); // its pid, an hour later
  });
});
