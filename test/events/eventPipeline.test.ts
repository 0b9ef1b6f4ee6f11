// The event pipeline on its own: the order in which its consumers are told, redaction once per event, and its end.
import { describe, expect, it } from 'vitest';
import type { TroupeEvent } from 'troupe';
import { createEventPipeline } from '../../src/events/eventPipeline.js';
import { Redactor } from '../../src/redaction.js';

const SECRET = 'pipeline-test-secret';

function started(index: number, name = `worker ${index}`): TroupeEvent {
  return { type: 'agent.started', runId: 'run', agentId: `agent:worker:${index}`, parentId: null, toolCallId: null, at: index, name };
}

describe('the event pipeline', () => {
  it("tells the runtime's own consumers first, each in the order it subscribed, then events$ subscribers, one redacted event to all", () => {
    const pipeline = createEventPipeline({ redactor: new Redactor({ secrets: [SECRET], env: false }) });
    const told: [string, TroupeEvent][] = [];
    const watch = (who: string) => (event: TroupeEvent) => void told.push([who, event]);
    pipeline.events$.subscribe(watch('user A')); // subscribed before the runtime's own: still told after them
    pipeline.internal$.subscribe(watch('trace'));
    pipeline.internal$.subscribe(watch('launcher'));
    pipeline.events$.subscribe(watch('user B'));

    pipeline.input.next(started(1, `worker with ${SECRET}`));

    expect(told.map(([who]) => who)).toEqual(['trace', 'launcher', 'user A', 'user B']);
    const [[, event]] = told as [[string, TroupeEvent]];
    expect(event).toMatchObject({ type: 'agent.started', name: 'worker with [redacted]' });
    for (const [, seen] of told) expect(seen).toBe(event);
  });

  it('folds the metrics before a metrics$ subscriber is told, and stops telling one that unsubscribed', () => {
    const pipeline = createEventPipeline();
    pipeline.fold();
    const running: number[] = [];
    const snapshots = pipeline.metrics$.subscribe((snapshot) => running.push(snapshot.total.agentsRunning));
    const trace: number[] = [];
    const tracing = pipeline.internal$.subscribe((event) => trace.push(event.at));

    pipeline.input.next({ type: 'agent.spawned', runId: 'run', agentId: 'agent:worker:1', parentId: null, toolCallId: null, at: 0, name: 'worker', depth: 0, task: 'Work.' });
    pipeline.input.next(started(1));
    tracing.unsubscribe();
    snapshots.unsubscribe();
    pipeline.input.next(started(2));

    expect(running).toEqual([0, 1]);
    expect(trace).toEqual([0, 1]);
    expect(pipeline.live.total.agentsRunning).toBe(2); // the fold goes on
  });

  it('completes its own consumers, then events$, once; later events go nowhere and a late subscriber completes at once', () => {
    const pipeline = createEventPipeline();
    const ends: string[] = [];
    const seen: TroupeEvent[] = [];
    pipeline.events$.subscribe({ next: (event) => seen.push(event), complete: () => ends.push('user') });
    pipeline.internal$.subscribe({ next: (event) => seen.push(event), complete: () => ends.push('trace') });

    pipeline.input.complete();
    pipeline.input.complete();
    pipeline.input.next(started(1));
    pipeline.internal$.subscribe({ complete: () => ends.push('late trace') });
    pipeline.events$.subscribe({ complete: () => ends.push('late user') });

    expect(ends).toEqual(['trace', 'user', 'late trace', 'late user']);
    expect(seen).toEqual([]);
  });
});
