// The runtime's metrics as a user reads them: `metrics$` (a snapshot after every event, the latest replayed to a late
// subscriber) and `metrics()`; the runtime folds events in place, so these check that what it hands out keeps still.
import { describe, expect, it } from 'vitest';
import { createRuntime, type MetricsSnapshot } from 'troupe';
import { ScriptedModel, callTools, toolCall } from 'troupe/testing';
import { echoTool, worker } from '../stubs.js';

function twoTurns() {
  const { tool } = echoTool();
  const model = new ScriptedModel([callTools(toolCall('echo', { text: 'hi' })), 'Done.']);
  return createRuntime({ model, agents: [worker('worker', ['echo'])], tools: [tool] });
}

describe('runtime metrics', () => {
  it('gives a snapshot after every event, each with the figures so far, which later events leave as they were', async () => {
    const runtime = twoTurns();
    const snapshots: MetricsSnapshot[] = [];
    const types: string[] = [];
    runtime.events$.subscribe((event) => types.push(event.type));
    runtime.metrics$.subscribe((snapshot) => snapshots.push(snapshot));

    await runtime.run('worker', 'Say hi.');

    expect(snapshots).toHaveLength(types.length);
    // The model calls counted so far, snapshot by snapshot: each kept its own total.
    const calls = snapshots.map((snapshot) => snapshot.total.modelCalls);
    const expected = types.map((_, index) => types.slice(0, index + 1).filter((type) => type === 'model.response').length);
    expect(calls).toEqual(expected);
    expect(snapshots[snapshots.length - 1]!.total).toMatchObject({ modelCalls: 2, toolCalls: 1, agentsCompleted: 1 });
    await runtime.shutdown();
  });

  it('gives a late subscriber the latest snapshot at once, and nothing before the first event', async () => {
    const runtime = twoTurns();
    const early: MetricsSnapshot[] = [];
    const before = runtime.metrics$.subscribe((snapshot) => early.push(snapshot));
    expect(early).toEqual([]);
    before.unsubscribe();

    await runtime.run('worker', 'Say hi.');
    const late: MetricsSnapshot[] = [];
    runtime.metrics$.subscribe((snapshot) => late.push(snapshot));

    expect(late).toHaveLength(1);
    expect(late[0]!.total).toEqual(runtime.metrics().total);
    expect(late[0]!.total.modelCalls).toBe(2);
    await runtime.shutdown();
  });

  it('hands out a total of its own from metrics(): one read earlier stays as it was', async () => {
    const runtime = twoTurns();
    const start = runtime.metrics();

    await runtime.run('worker', 'Say hi.');
    const end = runtime.metrics();

    expect(start.total.modelCalls).toBe(0);
    expect(end.total.modelCalls).toBe(2);
    expect(end.total).not.toBe(runtime.metrics().total);
    await runtime.shutdown();
  });

  it('completes metrics$ when the runtime shuts down', async () => {
    const runtime = twoTurns();
    let completed = false;
    runtime.metrics$.subscribe({ complete: () => (completed = true) });
    await runtime.run('worker', 'Say hi.');
    await runtime.shutdown();
    expect(completed).toBe(true);
  });
});
