// A long-lived runtime keeps its memory bounded: past `retainFinished` finished agents, the oldest finished runs are
// forgotten whole (records, results, metrics entries), and their sessions stay in a store the user gave.
import { describe, expect, it } from 'vitest';
import { createRuntime, InMemoryMemory, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools } from 'troupe/testing';
import { leader, worker } from '../stubs.js';

/** A lead hands two tasks to workers, then answers: a run of three agents. */
const model = () =>
  new ScriptedModel(
    (request: ModelRequest) => {
      if (request.agentName === 'worker') return 'part done';
      return request.messages.some((message) => message.role === 'tool') ? 'all done' : callTools(assignCall('worker', 'A.', { id: 'a' }), assignCall('worker', 'B.', { id: 'b' }));
    },
    { record: false },
  );

describe('retainFinished', () => {
  it('forgets the oldest finished runs whole once more finished agents than it keeps, and keeps the newest', async () => {
    const runtime = createRuntime({ model: model(), agents: [leader(), worker()], retainFinished: 30 });
    const runs: string[] = [];
    for (let i = 0; i < 100; i++) runs.push((await runtime.run('lead', `Run ${i}.`)).id);
    await runtime.flush();
    const known = Object.keys(runtime.metrics().agents);
    // 100 runs of 3 agents: at most 30 finished agents kept (whole runs), and never a child without its lead.
    expect(known.length).toBeLessThanOrEqual(30);
    expect(known.length).toBeGreaterThan(25);
    for (const id of known) {
      const parent = runtime.record(id)?.parentId;
      expect(runtime.record(id)).toBeDefined();
      if (parent) expect(known).toContain(parent);
    }
    expect(runtime.record(runs[0]!)).toBeUndefined();
    expect(runtime.record(runs[99]!)?.state).toBe('completed');
    // The runtime's own in-memory store forgets them too.
    const sessions = await runtime.sessions.list();
    expect(sessions.length).toBeLessThanOrEqual(30);
    expect(sessions.map((session) => session.id)).not.toContain(runs[0]);
    // Conversations with them: the forgotten runs' are gone, the kept runs' are there.
    expect(await runtime.sessions.conversation(runs[0]!)).toBeUndefined();
    expect(await runtime.sessions.conversation(runs[98]!)).toBeDefined();
    expect(await runtime.sessions.conversation(runs[99]!)).toEqual(expect.arrayContaining([expect.objectContaining({ role: 'assistant' })]));
    // The figures of the whole run are kept.
    expect(runtime.metrics().total.agentsCompleted).toBe(300);
    await runtime.shutdown();
  });

  it('keeps the sessions of forgotten agents in a store it was given, and resumes them from it', async () => {
    const store = new InMemoryMemory();
    const runtime = createRuntime({ model: model(), agents: [leader(), worker()], retainFinished: 5, store });
    const first = await runtime.run('lead', 'First.');
    for (let i = 0; i < 5; i++) await runtime.run('lead', `Run ${i}.`);
    await runtime.flush();
    expect(runtime.record(first.id)).toBeUndefined();
    expect((await runtime.sessions.get(first.id))?.state).toBe('completed');
    expect(await runtime.sessions.byParent(first.id)).toHaveLength(2); // its workers, in the store
    const resumed = await runtime.resume(first.id, 'Once more.');
    const again = await resumed.result;
    expect(again).toMatchObject({ id: first.id, status: 'completed', output: 'all done' });
    await runtime.shutdown();
  });

  it('never forgets a run that is still going, however many others end', async () => {
    const slow = new ScriptedModel(
      (request: ModelRequest) => (request.agentName === 'worker' ? 'part done' : request.messages.some((message) => message.role === 'tool') ? 'all done' : callTools(assignCall('worker', 'A.', { id: 'a', background: true }))),
      { record: false },
    );
    const runtime = createRuntime({ model: slow, agents: [leader(), worker()], retainFinished: 2 });
    // A resident worker answers and waits for messages: its run goes on while ten others start and end.
    const long = runtime.spawn('worker', 'Keep going.', { resident: true });
    for (let i = 0; i < 10; i++) await runtime.run('lead', `Run ${i}.`);
    expect(runtime.record(long.id)?.state).toBe('running');
    runtime.stop(long.id);
    expect(await long.result).toMatchObject({ status: 'completed', output: 'part done' });
    expect(runtime.record(long.id)?.state).toBe('completed'); // the newest finished run stays
    await runtime.shutdown();
  });
});
