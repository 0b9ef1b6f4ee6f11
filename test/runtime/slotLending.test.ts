// Slot accounting under maxParallel when agents wait for sub-agents: lending, giving back, and the edge cases
// around cancelling, resuming and approval.
import { describe, expect, it } from 'vitest';
import { createRuntime, type Runtime, type TroupeEvent } from 'troupe';
import { advanceUntilSettled, assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scriptedPerAgent, simulatedClock, tick, worker } from '../stubs.js';

/** The id a background assign_task returned. */
const startedId = (content: string | undefined) => /\((agent:[^)]+)\)/.exec(content ?? '')?.[1] ?? 'missing';
/** The sub-agent id in an assign_task answer. */
const answerId = (content: string | undefined) => /\[agent_id: (agent:[^.\s]+)/.exec(content ?? '')?.[1] ?? 'missing';

/** Counts, after every event, how many agents hold a slot; returns the highest count seen. */
function watchSlots(runtime: Runtime, events: TroupeEvent[]): () => number {
  let peak = 0;
  runtime.events$.subscribe(() => {
    const ids = new Set(events.map((event) => event.agentId));
    peak = Math.max(peak, [...ids].filter((id) => runtime.record(id)?.holdsSlot).length);
  });
  return () => peak;
}

describe('slot lending', () => {
  it('a blocking task_output lends the slot to the background agent, and never holds two under a cap of one', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        lead: [
          callTools(assignCall('slow', 'Slow.', { background: true })),
          (request) => callTools(toolCall('task_output', { agent_id: startedId(lastToolMessage(request)?.content), blocking: true, timeout_ms: 1_000 }, 'w')),
          'done',
        ],
        slow: ['slow done'],
      },
      { latencyMs: (request) => (request.agentName === 'slow' ? 5_000 : 0) },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker('slow')], clock, maxParallel: 1 });
    const events = collect(runtime.events$);
    const peak = watchSlots(runtime, events);

    const result = await advanceUntilSettled(clock, runtime.run('lead', 'Go.'));

    const slowStart = ofType(events, 'agent.started').find((event) => event.name === 'slow')!;
    expect(slowStart.at).toBe(0); // it ran while the lead waited: the lead lent it its only slot
    expect(lastToolMessage(model.calls.at(-1)!)!.content).toMatch(/still running after waiting 1000 ms/);
    // The wait timed out at 1 s, but the slot was the slow agent's until it ended at 5 s: the lead thinks after that.
    expect(ofType(events, 'model.request').filter((event) => event.agentId === result.id).map((event) => event.at)).toEqual([0, 0, 5_000]);
    expect(peak()).toBe(1);
    await runtime.shutdown();
  });

  it('cancelling an agent that waits for its sub-agent frees every slot; queued agents still run', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      // The lead is cancelled while it waits, and slow while its reply is on the way: neither answers again.
      { lead: [callTools(assignCall('slow', 'Slow.'))], slow: [], other: ['other done'] },
      { latencyMs: (request) => (request.agentName === 'slow' ? 5_000 : 10) },
    );
    const runtime = createRuntime({ model, agents: [leader(), worker('slow'), worker('other')], clock, maxParallel: 1 });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Go.');
    const others = [runtime.spawn('other', 'a'), runtime.spawn('other', 'b')];
    clock.increment(10);
    for (let i = 0; i < 5; i++) await tick();

    runtime.cancel(lead.id);
    const results = await advanceUntilSettled(clock, Promise.all(others.map((handle) => handle.result)));

    expect(results.map((result) => result.status)).toEqual(['completed', 'completed']);
    const ids = new Set(events.map((event) => event.agentId));
    expect([...ids].filter((id) => runtime.record(id)?.holdsSlot)).toEqual([]);
    await runtime.shutdown();
  });

  it('starts a resumed agent held for approval only once approved, not from the queue entry of its cancelled run', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        lead: [
          callTools(assignCall('helper', 'First.', { background: true, id: 'bg' })),
          (request) => callTools(assignCall('helper', 'Again.', { resume: startedId(lastToolMessage(request)?.content), id: 'again' })),
          'done',
        ],
        helper: ['helper answer'],
      },
      { latencyMs: (request) => (request.agentName === 'lead' && request.messages.length === 4 ? 1_000 : 0) },
    );
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('helper')],
      clock,
      maxParallel: 1,
      delegationPolicy: (request) => (request.resume ? { decision: 'ask', risk: 'low' } : 'allow'),
    });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Go.');
    for (let i = 0; i < 5; i++) await tick();
    const helper = ofType(events, 'agent.spawned').find((event) => event.name === 'helper')!;
    expect(runtime.record(helper.agentId)?.state).toBe('pending'); // queued behind the lead's only slot
    runtime.cancel(helper.agentId);
    clock.increment(1_000); // the lead's next turn resumes the helper; the policy asks
    for (let i = 0; i < 10; i++) await tick();
    const [approval] = runtime.pendingApprovals();
    expect(runtime.record(helper.agentId)).toMatchObject({ state: 'pending', held: true });

    runtime.approve(approval!.requestId);
    const result = await advanceUntilSettled(clock, lead.result);

    expect(result).toMatchObject({ status: 'completed', output: 'done' });
    expect(lastToolMessage(model.calls.at(-1)!)!.content).toContain('helper answer');
    await runtime.shutdown();
  });

  it('refuses a second resume of the same session in the same reply, and runs the first', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'First.', { id: 'first' })),
        (request) => {
          const id = answerId(lastToolMessage(request)?.content);
          return callTools(assignCall('analyst', 'Second A.', { resume: id, id: 'ra' }), assignCall('analyst', 'Second B.', { resume: id, id: 'rb' }));
        },
        'done',
      ],
      // A resumed agent goes on with its own script: one answer a run.
      analyst: [(request) => `answer to ${request.messages.at(-1)?.content}`, (request) => `answer to ${request.messages.at(-1)?.content}`],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('analyst')], maxParallel: 2 });

    await runtime.run('lead', 'Go.');

    const answers = model.calls.at(-1)!.messages.filter((message) => message.role === 'tool').slice(1);
    expect(answers[0]).toMatchObject({ content: expect.stringContaining('answer to Second A.') });
    expect(answers[1]).toMatchObject({ isError: true, content: expect.stringMatching(/still marked pending: it runs elsewhere \(.*another resume of it here\)/) });
    await runtime.shutdown();
  });
});

describe('whose sub-agents a caller may touch', () => {
  it('task_output refuses an agent outside the caller subtree', async () => {
    const model = scriptedPerAgent({
      stranger: [() => new Promise<string>(() => {})],
      lead: [(request) => callTools(toolCall('task_output', { agent_id: String(request.messages[1]?.content) }, 'peek')), 'ok'],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('stranger')] });
    const stranger = runtime.spawn('stranger', 'Work alone.');

    await runtime.run('lead', stranger.id);

    expect(lastToolMessage(model.calls.at(-1)!)).toMatchObject({ isError: true, content: expect.stringMatching(/not one of the sub-agents/) });
    runtime.cancel(stranger.id);
    await runtime.shutdown();
  });

  it('resume refuses a session another live agent owns, and adopts one whose owner has ended', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        owner: [callTools(assignCall('analyst', 'Find it.')), 'owner done'],
        thief: [(request) => callTools(assignCall('analyst', 'Tell me too.', { resume: String(request.messages[1]?.content) })), 'thief done'],
        analyst: [(request) => `found for: ${request.messages.at(-1)?.content}`, (request) => `found for: ${request.messages.at(-1)?.content}`],
      },
      { latencyMs: (request) => (request.agentName === 'owner' && request.messages.length > 2 ? 1_000 : 0) },
    );
    const runtime = createRuntime({ model, agents: [leader('owner'), leader('thief'), worker('analyst')], clock });
    const events = collect(runtime.events$);
    const owner = runtime.spawn('owner', 'Own a session.');
    for (let i = 0; i < 10; i++) await tick();
    const analyst = ofType(events, 'agent.completed').find((event) => event.name === 'analyst')!;

    await advanceUntilSettled(clock, runtime.run('thief', analyst.agentId));
    const refused = lastToolMessage(model.calls.at(-1)!)!;
    await advanceUntilSettled(clock, owner.result);
    await advanceUntilSettled(clock, runtime.run('thief', analyst.agentId));
    const adopted = lastToolMessage(model.calls.at(-1)!)!;

    expect(refused).toMatchObject({ isError: true, content: expect.stringMatching(/belongs to another running agent/) });
    expect(adopted.content).toContain('found for: Tell me too.');
    await runtime.shutdown();
  });

  it('a policy answer that is not allowed (ask without a valid risk) denies', async () => {
    const model = scriptedPerAgent({ lead: [callTools(assignCall('helper', 'Go.')), 'ok'], helper: [] });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('helper')],
      delegationPolicy: () => ({ decision: 'ask', risk: 'extreme' }) as never,
    });
    await runtime.run('lead', 'Go.');
    expect(lastToolMessage(model.calls.at(-1)!)).toMatchObject({ isError: true, content: expect.stringMatching(/denied.*may not give/) });
    await runtime.shutdown();
  });
});
