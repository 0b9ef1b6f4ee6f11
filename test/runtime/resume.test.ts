import { describe, expect, it } from 'vitest';
import { createRuntime, DelegationError, defineAgent } from 'troupe';
import { advanceUntilSettled, assignCall, callTools } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scriptedPerAgent, simulatedClock, worker } from '../stubs.js';

/** The sub-agent id in an assign_task answer. */
const idIn = (content: string | undefined) => /\[agent_id: (agent:[^.\s]+)/.exec(content ?? '')?.[1] ?? 'missing';

describe('resuming a sub-agent', () => {
  it("continues its session under the same id, with the first task's whole conversation in the model request", async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'List the modules in src/.', { id: 'first' })),
        (request) => callTools(assignCall('analyst', 'Which of those has no tests?', { resume: idIn(lastToolMessage(request)?.content), id: 'second' })),
        (request) => `Answer: ${lastToolMessage(request)?.content}`,
      ],
      analyst: ['Modules: core, cli, views.', 'The cli module has no tests.'],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('analyst')] });
    const events = collect(runtime.events$);

    const result = await runtime.run('lead', 'Find untested modules.');

    const analystCalls = model.calls.filter((request) => request.agentName === 'analyst');
    expect(analystCalls).toHaveLength(2);
    expect(analystCalls[1]!.agentId).toBe(analystCalls[0]!.agentId);
    expect(analystCalls[1]!.messages.map((message) => [message.role, message.content])).toEqual([
      ['system', 'You are the analyst.'],
      ['user', 'List the modules in src/.'],
      ['assistant', 'Modules: core, cli, views.'],
      ['user', 'Which of those has no tests?'],
    ]);
    expect(result.output).toContain('The cli module has no tests.');
    const spawns = ofType(events, 'agent.spawned').filter((event) => event.name === 'analyst');
    expect(spawns.map((event) => event.resumed ?? false)).toEqual([false, true]);
    const metrics = runtime.metrics();
    expect(metrics.total).toMatchObject({ agentsSpawned: 2, agentsCompleted: 2 });
    expect(metrics.agents[spawns[0]!.agentId]!.own.modelCalls).toBe(2);
    await runtime.shutdown();
  });

  it('refuses to resume an unknown id, or an agent of another name, with an error result', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'Go on.', { resume: 'agent:analyst:nope', id: 'a' })),
        callTools(assignCall('analyst', 'Look.', { id: 'b' })),
        (request) => callTools(assignCall('critic', 'Go on.', { resume: idIn(lastToolMessage(request)?.content), id: 'c' })),
        'done',
      ],
      analyst: ['Looked.'],
    });
    const runtime = createRuntime({ model, agents: [leader(), worker('analyst'), worker('critic')] });

    await runtime.run('lead', 'Try.');

    const leadCalls = model.calls.filter((request) => request.agentName === 'lead');
    expect(lastToolMessage(leadCalls[1]!)).toMatchObject({ isError: true, content: expect.stringMatching(/No agent session has the id "agent:analyst:nope"/) });
    expect(lastToolMessage(leadCalls[3]!)).toMatchObject({ isError: true, content: expect.stringMatching(/is a "analyst", not a "critic"/) });
    await runtime.shutdown();
  });

  it('refuses to resume an agent that is still running', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'Take your time.', { background: true, id: 'bg' })),
        (request) => {
          const id = /\((agent:[^)]+)\)/.exec(lastToolMessage(request)?.content ?? '')?.[1] ?? '';
          return callTools(assignCall('analyst', 'Hurry.', { resume: id, id: 'again' }));
        },
        'done',
      ],
      analyst: ['finally'],
    }, { latencyMs: (request) => (request.agentName === 'analyst' ? 1_000 : 0) });
    const clock = simulatedClock();
    const runtime = createRuntime({ model, agents: [leader(), worker('analyst')], clock });

    await advanceUntilSettled(clock, runtime.run('lead', 'Try.'));

    const message = lastToolMessage(model.calls.filter((request) => request.agentName === 'lead').at(-1)!)!;
    expect(message).toMatchObject({ isError: true });
    expect(message.content).toMatch(/is still running/);
    await advanceUntilSettled(clock, runtime.idle());
    await runtime.shutdown();
  });

  it('resumes from code with runtime.resume, and refuses what cannot be resumed', async () => {
    const model = scriptedPerAgent({ writer: ['Draft one.', 'Draft two, shorter.'] });
    const writer = defineAgent({ name: 'writer', description: 'Writes.', systemPrompt: 'Write.' });
    const runtime = createRuntime({ model, agents: [writer] });
    const first = await runtime.run('writer', 'Write a draft.');

    const second = await runtime.resume(first.id, 'Make it shorter.');
    expect(second.id).toBe(first.id);
    await expect(runtime.resume(first.id, 'Again, at once.')).rejects.toBeInstanceOf(DelegationError);
    const result = await second.result;

    expect(result).toMatchObject({ id: first.id, status: 'completed', output: 'Draft two, shorter.', turns: 1 });
    expect(result.metrics.subtree.modelCalls).toBe(1);
    expect(model.calls[1]!.messages.map((message) => message.content)).toEqual(['Write.', 'Write a draft.', 'Draft one.', 'Make it shorter.']);
    await expect(runtime.resume('agent:writer:unknown', 'x')).rejects.toThrow(/No agent session/);
    await runtime.shutdown();
  });
  it('keeps the conversation as it was when a resume is denied before it ran: a later resume never sees the denied task', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'List the modules.', { id: 'first' })),
        (request) => callTools(assignCall('analyst', 'Delete the cli module.', { resume: idIn(lastToolMessage(request)?.content), id: 'denied' })),
        (request) => callTools(assignCall('analyst', 'Which has no tests?', { resume: /\((agent:[^)]+)\)/.exec(lastToolMessage(request)?.content ?? '')?.[1], id: 'third' })),
        'done',
      ],
      analyst: ['Modules: core, cli.', 'The cli module has no tests.'],
    });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('analyst')],
      delegationPolicy: (request) => (request.task.startsWith('Delete') ? { decision: 'deny', reason: 'No deletions.' } : 'allow'),
    });

    await runtime.run('lead', 'Find untested modules.');

    const leadCalls = model.calls.filter((request) => request.agentName === 'lead');
    expect(lastToolMessage(leadCalls[2]!)).toMatchObject({ isError: true, content: expect.stringMatching(/denied/) });
    const analystCalls = model.calls.filter((request) => request.agentName === 'analyst');
    expect(analystCalls[1]!.messages.map((message) => message.content)).toEqual([
      'You are the analyst.',
      'List the modules.',
      'Modules: core, cli.',
      'Which has no tests?',
    ]);
    await runtime.shutdown();
  });
  it('never hands the model the task of a delegation that was denied, when the denied agent is resumed', async () => {
    const model = scriptedPerAgent({
      lead: [
        callTools(assignCall('analyst', 'Delete the cli module.', { id: 'denied' })),
        (request) => callTools(assignCall('analyst', 'List the modules.', { resume: /\((agent:[^)]+)\)/.exec(lastToolMessage(request)?.content ?? '')?.[1], id: 'again' })),
        'done',
      ],
      analyst: ['Modules: core, cli.'],
    });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('analyst')],
      delegationPolicy: (request) => (request.task.startsWith('Delete') ? { decision: 'deny', reason: 'No deletions.' } : 'allow'),
    });

    await runtime.run('lead', 'Tidy up.');

    const analystCalls = model.calls.filter((request) => request.agentName === 'analyst');
    expect(analystCalls[0]!.messages.map((message) => message.content)).toEqual(['You are the analyst.', 'List the modules.']);
    await runtime.shutdown();
  });
});
