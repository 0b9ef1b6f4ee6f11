// The blackboard: JSON values copied in and out, anything else refused, every change an event; its two tools.
import { describe, expect, it } from 'vitest';
import { Blackboard, ConfigurationError, createRuntime, type BlackboardChange } from 'troupe';
import { callTools, toolCall } from 'troupe/testing';
import { collect, ofType, scriptedPerAgent, simulatedClock, toolMessageFor, worker } from '../stubs.js';

describe('Blackboard', () => {
  it('copies values in and out: changing what was written or read changes nothing on the board', () => {
    const board = new Blackboard();
    const plan = { steps: ['draft', 'review'], owner: { name: 'alice' } };
    board.set('plan', plan);
    plan.steps.push('ship');
    plan.owner.name = 'mallory';
    const read = board.get('plan') as { steps: string[] };
    read.steps.length = 0;

    expect(board.get('plan')).toEqual({ steps: ['draft', 'review'], owner: { name: 'alice' } });
    expect(board.get('plan')).not.toBe(board.get('plan'));
    const all = board.toJSON();
    (all.plan as { owner: { name: string } }).owner.name = 'eve';
    expect(board.toJSON()).toEqual({ plan: { steps: ['draft', 'review'], owner: { name: 'alice' } } });
  });

  it('refuses what is not JSON, and writes nothing for it', () => {
    const changes: BlackboardChange[] = [];
    const board = new Blackboard((change) => changes.push(change));
    const notJson: unknown[] = [undefined, () => 1, Number.NaN, Number.POSITIVE_INFINITY, 10n, Symbol('s'), new Date(0), new Map(), { nested: undefined }, [1, () => 2]];
    const cycle: Record<string, unknown> = { name: 'loop' };
    cycle.self = cycle;
    notJson.push(cycle);

    for (const value of notJson) expect(() => board.set('bad', value), String(value)).toThrow(ConfigurationError);
    expect(() => board.set('', 1)).toThrow(ConfigurationError);

    expect(board.has('bad')).toBe(false);
    expect(board.keys()).toEqual([]);
    expect(changes).toEqual([]);
  });

  it('gives every key in toJSON, even one named like a property of every object (__proto__)', () => {
    const board = new Blackboard();
    board.set('__proto__', { polluted: true });
    board.set('constructor', 'c');

    const all = board.toJSON();

    expect(Object.keys(all)).toEqual(['__proto__', 'constructor']);
    expect(JSON.parse(JSON.stringify(all))).toEqual(JSON.parse('{"__proto__":{"polluted":true},"constructor":"c"}'));
    expect((all as { polluted?: boolean }).polluted).toBeUndefined();
  });

  it('keeps keys in the order first written, and reports every write and delete with who made it', () => {
    const changes: BlackboardChange[] = [];
    const board = new Blackboard((change) => changes.push(change));
    board.set('b', 1);
    board.set('a', null, 'agent:writer:w');
    board.set('b', [true, 'x']);

    expect(board.keys()).toEqual(['b', 'a']);
    expect(board.delete('a')).toBe(true);
    expect(board.delete('a')).toBe(false);
    expect(board.has('a')).toBe(false);
    expect(board.get('a')).toBeUndefined();
    expect(changes).toEqual([
      { key: 'b', value: 1, by: 'runtime' },
      { key: 'a', value: null, by: 'agent:writer:w' },
      { key: 'b', value: [true, 'x'], by: 'runtime' },
      { key: 'a', deleted: true, by: 'runtime' },
    ]);
  });

  it('is shared by a run’s agents through blackboard_write and blackboard_read, and every change is an event', async () => {
    const clock = simulatedClock();
    const model = scriptedPerAgent(
      {
        writer: [callTools(toolCall('blackboard_write', { key: 'plan', value: { steps: ['draft', 'review'], done: false } }, 'w')), 'written'],
        reader: [
          callTools(toolCall('blackboard_read', { key: 'plan' }, 'plan'), toolCall('blackboard_read', { key: 'missing' }, 'missing'), toolCall('blackboard_read', {}, 'keys')),
          'read',
        ],
      },
      { latencyMs: (request) => (request.agentName === 'reader' ? 100 : 10) },
    );
    const runtime = createRuntime({ model, agents: [worker('writer', ['blackboard_write']), worker('reader', ['blackboard_read'])], clock, projectAgentDir: false });
    const events = collect(runtime.events$);
    runtime.blackboard.set('mood', 'calm');

    const writer = runtime.spawn('writer', 'Write the plan.');
    const reader = runtime.spawn('reader', 'Read the plan.');
    await runtime.runUntilIdle();
    runtime.blackboard.delete('mood');

    expect((await reader.result).status).toBe('completed');
    const request = model.calls.filter((r) => r.agentId === reader.id)[1]!;
    expect(JSON.parse(toolMessageFor(request, 'plan')!.content)).toEqual({ key: 'plan', value: { steps: ['draft', 'review'], done: false } });
    expect(toolMessageFor(request, 'missing')!.content).toBe('The key "missing" is not set.');
    expect(JSON.parse(toolMessageFor(request, 'keys')!.content)).toEqual({ keys: ['mood', 'plan'] });
    expect(runtime.blackboard.get('plan')).toEqual({ steps: ['draft', 'review'], done: false });
    expect(ofType(events, 'blackboard.changed').map(({ agentId, key, value, deleted }) => ({ agentId, key, value, deleted }))).toEqual([
      { agentId: 'runtime', key: 'mood', value: 'calm', deleted: undefined },
      { agentId: writer.id, key: 'plan', value: { steps: ['draft', 'review'], done: false }, deleted: undefined },
      { agentId: 'runtime', key: 'mood', value: undefined, deleted: true },
    ]);
    await runtime.shutdown();
  });
});
