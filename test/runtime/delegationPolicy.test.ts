import { describe, expect, it } from 'vitest';
import { createRuntime, UnknownRequestError, type DelegationRequest, type TroupeEvent } from 'troupe';
import { assignCall, callTools } from 'troupe/testing';
import { collect, lastToolMessage, leader, ofType, scriptedPerAgent, tick, worker } from '../stubs.js';

const deploy = callTools(assignCall('deployer', 'Deploy to production.', { id: 'deploy' }));

/** The lead delegates a deploy and reports the outcome; the deployer answers only when the delegation is let through. */
const scripts = ({ denied = false } = {}) =>
  scriptedPerAgent({
    lead: [deploy, (request) => `Outcome: ${lastToolMessage(request)?.content}`],
    deployer: denied ? [] : ['Deployed.'],
  });

/** Waits until an event of this type has been seen. */
async function until(events: TroupeEvent[], type: TroupeEvent['type']): Promise<void> {
  for (let i = 0; i < 100 && !events.some((event) => event.type === type); i++) await tick();
}

describe('the delegation policy', () => {
  it('is asked with the caller, agent, task and depth, and allow lets the delegation run', async () => {
    const asked: DelegationRequest[] = [];
    const runtime = createRuntime({
      model: scripts(),
      agents: [leader(), worker('deployer')],
      delegationPolicy: (request) => (asked.push(request), 'allow'),
    });

    const result = await runtime.run('lead', 'Ship it.');

    expect(asked).toEqual([
      { caller: { id: result.id, name: 'lead', depth: 0 }, agent: 'deployer', task: 'Deploy to production.', depth: 1, background: false },
    ]);
    expect(result.output).toContain('Deployed.');
    await runtime.shutdown();
  });

  it('deny gives the caller an error result and leaves a failed, denied sub-agent', async () => {
    const model = scripts({ denied: true });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('deployer')],
      delegationPolicy: () => ({ decision: 'deny', reason: 'No deploys on Fridays.' }),
    });
    const events = collect(runtime.events$);

    await runtime.run('lead', 'Ship it.');

    const message = lastToolMessage(model.calls.at(-1)!)!;
    expect(message.isError).toBe(true);
    expect(message.content).toMatch(/failed \(denied\): No deploys on Fridays\./);
    const failed = ofType(events, 'agent.failed').find((event) => event.name === 'deployer');
    expect(failed).toMatchObject({ reason: 'denied', error: { code: 'denied', fault: 'user', message: 'No deploys on Fridays.' } });
    expect(ofType(events, 'approval.denied')[0]).toMatchObject({ requestId: null, reason: 'No deploys on Fridays.' });
    expect(model.calls.some((request) => request.agentName === 'deployer')).toBe(false);
    await runtime.shutdown();
  });

  it('a policy that throws denies, naming the failure', async () => {
    const model = scripts({ denied: true });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('deployer')],
      delegationPolicy: () => {
        throw new Error('policy file missing');
      },
    });
    await runtime.run('lead', 'Ship it.');
    expect(lastToolMessage(model.calls.at(-1)!)!.content).toMatch(/denied.*policy failed.*policy file missing/);
    await runtime.shutdown();
  });
});

describe('approval by a person', () => {
  it('ask holds the sub-agent pending until approve, then it runs', async () => {
    const model = scripts();
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('deployer')],
      delegationPolicy: () => ({ decision: 'ask', risk: 'high', reason: 'Touches production.' }),
    });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Ship it.');
    await until(events, 'approval.requested');

    const [request] = ofType(events, 'approval.requested');
    expect(request).toMatchObject({ name: 'deployer', task: 'Deploy to production.', risk: 'high', reason: 'Touches production.', parentId: lead.id });
    expect(runtime.pendingApprovals()).toEqual([
      expect.objectContaining({ requestId: request!.requestId, agentId: request!.agentId, callerId: lead.id, risk: 'high' }),
    ]);
    expect(runtime.record(request!.agentId)?.state).toBe('pending');
    expect(model.calls.some((call) => call.agentName === 'deployer')).toBe(false);

    runtime.approve(request!.requestId);
    const result = await lead.result;

    expect(result.output).toContain('Deployed.');
    expect(ofType(events, 'approval.granted')).toHaveLength(1);
    expect(runtime.pendingApprovals()).toEqual([]);
    expect(() => runtime.approve(request!.requestId)).toThrow(UnknownRequestError);
    await runtime.shutdown();
  });

  it('deny by a person fails the sub-agent with denied and gives the caller an error result', async () => {
    const model = scripts({ denied: true });
    const runtime = createRuntime({
      model,
      agents: [leader(), worker('deployer')],
      delegationPolicy: () => ({ decision: 'ask', risk: 'medium' }),
    });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Ship it.');
    await until(events, 'approval.requested');
    const [request] = ofType(events, 'approval.requested');

    runtime.deny(request!.requestId, 'Not without a rollback plan.');
    await lead.result;

    const message = lastToolMessage(model.calls.at(-1)!)!;
    expect(message).toMatchObject({ isError: true });
    expect(message.content).toMatch(/failed \(denied\): Not without a rollback plan\./);
    expect(ofType(events, 'approval.denied')[0]).toMatchObject({ requestId: request!.requestId, reason: 'Not without a rollback plan.' });
    expect(runtime.record(request!.agentId)?.state).toBe('failed');
    expect(() => runtime.deny('approval:unknown')).toThrow(UnknownRequestError);
    await runtime.shutdown();
  });

  it('shutdown while a delegation awaits approval cancels it and leaves nothing pending', async () => {
    const runtime = createRuntime({
      model: scriptedPerAgent({ lead: [deploy], deployer: [] }), // the lead is cancelled while it waits
      agents: [leader(), worker('deployer')],
      delegationPolicy: () => ({ decision: 'ask', risk: 'low' }),
    });
    const events = collect(runtime.events$);
    const lead = runtime.spawn('lead', 'Ship it.');
    await until(events, 'approval.requested');

    await runtime.shutdown();

    expect(await lead.result).toMatchObject({ status: 'failed', reason: 'cancelled' });
    expect(runtime.pendingApprovals()).toEqual([]);
  });
});
