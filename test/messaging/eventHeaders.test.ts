// what events say about messaging and resident agents.
import { describe, expect, it } from 'vitest';
import { AgentSpawned, createRuntime } from 'troupe';
import { assignCall, callTools, toolCall } from 'troupe/testing';
import { collect, ofType, resident, scripted, scriptedPerAgent, simulatedClock } from '../stubs.js';

describe('events', () => {
  it('agent.spawned says resident: true for a resident agent (the schema has the field)', async () => {
    const clock = simulatedClock();
    const model = scripted(['ready']);
    const runtime = createRuntime({ model, agents: [resident('echo')], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    const echo = runtime.spawn('echo', 'Wait for mail.');
    await runtime.runUntilIdle();
    const spawned = ofType(events, 'agent.spawned').find((event) => event.agentId === echo.id)!;
    expect(AgentSpawned.shape.resident).toBeDefined();
    expect(spawned.resident).toBe(true);
    await runtime.shutdown();
  });
});

import { leader, worker } from '../stubs.js';

describe('event headers of a sub-agent', () => {
  it('message and blackboard events carry the same header (parentId, toolCallId) as the agent’s other events', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent({
      lead: [callTools(assignCall('talker', 'Talk.', { id: 'call_talk' })), 'lead done'],
      talker: [
        callTools(toolCall('send_message', { to: 'runtime', content: 'hi' }, 's1'), toolCall('blackboard_write', { key: 'k', value: 1 }, 'b1')),
        'talked',
      ],
    });
    const runtime = createRuntime({
      model,
      agents: [leader('lead'), worker('talker', ['send_message', 'blackboard_write'])],
      clock,
      projectAgentDir: false,
    });
    const events = collect(runtime.events$);
    await runtime.run('lead', 'Go.');
    await runtime.runUntilIdle();
    const talker = ofType(events, 'agent.started').find((event) => event.name === 'talker')!;
    expect(talker.toolCallId).toBe('call_talk');
    const ownEvents = events.filter((event) => event.agentId === talker.agentId);
    const headers = new Set(ownEvents.map((event) => `${event.type} ${event.parentId} ${event.toolCallId}`.replace(/^\S+ /, '')));
    expect([...headers]).toEqual([`${talker.parentId} call_talk`]);
    await runtime.shutdown();
  });
});
