// A session whose process died while it ran: its record names its owner, so another process sees it `interrupted`
// and may resume it from its last saved turn. A call that was in flight is not run again (it may have taken effect)
// unless its tool is idempotent, and the model is told what happened.
import { spawn } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, JsonFileMemory, type ModelRequest } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { eachTestTempDir } from '../support/tempDir.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const scratch = eachTestTempDir();

/** Runs the worker until its turn is saved, kills it with SIGKILL, and returns the id of its agent. */
async function killMidRun(file: string, when: 'mid-turn' | 'before-answer' | 'resumed-before-answer' | 'delegating' = 'mid-turn'): Promise<string> {
  const worker = when === 'delegating' ? 'test/support/interruptDelegation.ts' : 'test/support/interruptWorker.ts';
  const args = ['--import', 'tsx', worker, file, ...(when === 'mid-turn' || when === 'delegating' ? [] : [when])];
  const child = spawn(process.execPath, args, { cwd: root, stdio: ['ignore', 'pipe', 'inherit'] });
  const id = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      if (out.includes('\n')) resolve(out.trim());
    });
    child.on('exit', (code) => reject(new Error(`The worker exited (${code}) before its turn was saved.`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
  return id;
}

describe('a session whose process died', () => {
  it('is interrupted, and resumes from its last turn: the write in flight is not run again, the read may be', async () => {
    const file = join(scratch.path, 'store.json');
    const id = await killMidRun(file);

    const runs = { charge: 0, lookup: 0 };
    const charge = defineTool({ name: 'charge', description: 'Charges a card.', parameters: z.object({ cents: z.number() }), kind: 'write', execute: () => `charged ${++runs.charge}` });
    const lookup = defineTool({ name: 'lookup', description: 'Looks a price up.', parameters: z.object({ item: z.string() }), kind: 'read', idempotent: true, execute: () => `price ${++runs.lookup}` });
    const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.', tools: ['charge', 'lookup'] });
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => (seen.push(request), 'I will check the card before charging again.'));
    const runtime = createRuntime({ model, agents: [clerk], tools: [charge, lookup], store: new JsonFileMemory(file), projectAgentDir: false });

    expect((await runtime.sessions.get(id))?.state).toBe('interrupted');
    expect((await runtime.sessions.get(id))?.owner?.pid).toBeGreaterThan(0);
    expect(await runtime.sessions.recover()).toEqual([id]);
    const handle = await runtime.resume(id, 'Go on.');
    const result = await handle.result;

    expect(result).toMatchObject({ id, status: 'completed' });
    expect(runs).toEqual({ charge: 0, lookup: 0 }); // nothing run again behind the model's back
    const messages = seen[0]!.messages;
    const answers = messages.filter((message) => message.role === 'tool');
    expect(answers).toEqual([
      expect.objectContaining({ toolCallId: 'pay', isError: true, content: expect.stringMatching(/not run again: it may or may not have taken effect/) }),
      expect.objectContaining({ toolCallId: 'price', isError: true, content: expect.stringMatching(/safe to call it again/) }),
    ]);
    expect(messages.at(-2)).toMatchObject({ role: 'user', content: expect.stringMatching(/was interrupted/) });
    expect(messages.at(-1)).toMatchObject({ role: 'user', content: 'Go on.' });
    await runtime.flush();
    expect((await runtime.sessions.get(id))?.state).toBe('completed');
    await runtime.shutdown();
  });

  it('tells a lead resumed after its process died what its sub-agents did: the answer of one that finished, the id of one to resume', async () => {
    const file = join(scratch.path, 'store.json');
    const id = await killMidRun(file, 'delegating');

    const agents = ['counter', 'slowpoke'].map((name) => defineAgent({ name, description: `The ${name}.`, systemPrompt: 'Work.' }));
    const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'You lead.', tools: ['assign_task'], subagents: ['counter', 'slowpoke'] });
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => (seen.push(request), 'The counter found 3 files; I will resume the slowpoke.'));
    const runtime = createRuntime({ model, agents: [lead, ...agents], store: new JsonFileMemory(file), projectAgentDir: false });
    const started = await runtime.sessions.byParent(id);
    const counter = started.find((session) => session.agentType === 'counter')!;
    const slowpoke = started.find((session) => session.agentType === 'slowpoke')!;
    expect([counter.state, slowpoke.state]).toEqual(['completed', 'interrupted']);

    expect(await (await runtime.resume(id, 'Go on.')).result).toMatchObject({ status: 'completed' });
    const answers = seen[0]!.messages.filter((message) => message.role === 'tool');
    expect(answers.map((message) => [message.role === 'tool' && message.toolCallId, message.content])).toEqual([
      ['count', expect.stringContaining(`It had started ${counter.id}, which completed with this answer: There are 3 files.`)],
      ['think', expect.stringContaining(`It had started ${slowpoke.id}, which did not finish (interrupted): to go on with its work, delegate with resume: "${slowpoke.id}".`)],
    ]);
    await runtime.shutdown();
  });

  it('owned by another host is left running, unless recover is told other hosts are gone too (a replaced container)', async () => {
    const file = join(scratch.path, 'store.json');
    const id = await killMidRun(file);
    // The process ran on another host: troupe cannot tell whether it still runs.
    const stored = JSON.parse(readFileSync(file, 'utf8'));
    stored.__agent_sessions__[id].owner.host = 'container-gone';
    writeFileSync(file, JSON.stringify(stored));

    const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.', tools: ['charge', 'lookup'] });
    const tools = ['charge', 'lookup'].map((name) => defineTool({ name, description: 'A tool.', parameters: z.object({}).passthrough(), kind: 'read', execute: () => 'done' }));
    const runtime = createRuntime({ model: new ScriptedModel(['Sold.']), agents: [clerk], tools, store: new JsonFileMemory(file), projectAgentDir: false });
    expect((await runtime.sessions.get(id))?.state).toBe('running');
    await expect(runtime.resume(id, 'Go on.')).rejects.toMatchObject({ reason: 'still_running' });
    expect(await runtime.sessions.recover()).toEqual([]);
    expect(await runtime.sessions.recover({ otherHosts: true })).toEqual([id]);
    expect((await runtime.sessions.get(id))?.state).toBe('interrupted');
    expect(await (await runtime.resume(id, 'Go on.')).result).toMatchObject({ id, status: 'completed', output: 'Sold.' });
    await runtime.shutdown();
  });

  it('resumes from its task when it died before its first turn was saved', async () => {
    const file = join(scratch.path, 'store.json');
    const id = await killMidRun(file, 'before-answer');

    const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.' });
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => (seen.push(request), 'Sold.'));
    const runtime = createRuntime({ model, agents: [clerk], store: new JsonFileMemory(file), projectAgentDir: false });
    expect((await runtime.sessions.get(id))?.state).toBe('interrupted');
    const result = await (await runtime.resume(id, 'Go on.')).result;

    expect(result).toMatchObject({ id, status: 'completed', output: 'Sold.' });
    // The model is told the task it was given, then what happened, then what to do now.
    expect(seen[0]!.messages.map((message) => [message.role, message.content])).toEqual([
      ['system', expect.stringContaining('You sell.')],
      ['user', 'Sell a tea for 5 euros.'],
      ['user', expect.stringMatching(/was interrupted/)],
      ['user', 'Go on.'],
    ]);
    await runtime.shutdown();
  });

  it('a resumed session that died before its first turn was saved goes on with the task it was resumed with', async () => {
    const file = join(scratch.path, 'store.json');
    const id = await killMidRun(file, 'resumed-before-answer');

    const clerk = defineAgent({ name: 'clerk', description: 'Sells.', systemPrompt: 'You sell.' });
    const seen: ModelRequest[] = [];
    const model = new ScriptedModel((request) => (seen.push(request), 'Sold a coffee.'));
    const runtime = createRuntime({ model, agents: [clerk], store: new JsonFileMemory(file), projectAgentDir: false });
    expect((await runtime.sessions.get(id))?.state).toBe('interrupted');
    await (await runtime.resume(id, 'Go on.')).result;

    expect(seen[0]!.messages.map((message) => [message.role, message.content])).toEqual([
      ['system', expect.stringContaining('You sell.')],
      ['user', 'Sell a tea for 5 euros.'],
      ['assistant', 'Sold a tea.'],
      ['user', 'Now sell a coffee.'],
      ['user', expect.stringMatching(/was interrupted/)],
      ['user', 'Go on.'],
    ]);
    await runtime.shutdown();
  });

  it('is not judged interrupted while its process lives', async () => {
    const file = join(scratch.path, 'store.json');
    const forever = defineTool({ name: 'wait', description: 'Waits.', parameters: z.object({}), kind: 'read', execute: () => new Promise<never>(() => {}) });
    const model = new ScriptedModel([{ content: '', toolCalls: [{ id: 'w', name: 'wait', arguments: '{}' }] }]);
    const agent = defineAgent({ name: 'waiter', description: 'Waits.', systemPrompt: 'Wait.', tools: ['wait'] });
    const runtime = createRuntime({ model, agents: [agent], tools: [forever], store: new JsonFileMemory(file), projectAgentDir: false });
    const handle = runtime.spawn('waiter', 'Wait.');
    await new Promise((resolve) => setTimeout(resolve, 50));
    await runtime.flush();
    const other = createRuntime({ model, agents: [agent], tools: [forever], store: new JsonFileMemory(file), projectAgentDir: false });
    expect((await other.sessions.get(handle.id))?.state).toBe('running'); // its owner, this process, runs
    await expect(other.resume(handle.id, 'Again.')).rejects.toThrow(/still marked running/);
    await other.shutdown();
    await runtime.shutdown();
  });
});
