// The event pipeline on its own: the order in which its consumers are told, redaction once per event, and its end.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, readRecording, type TroupeEvent } from 'troupe';
import { callTools, ScriptedModel, toolCall } from 'troupe/testing';
import { createEventPipeline } from '../../src/events/eventPipeline.js';
import { Redactor } from '../../src/redaction.js';
import { hang, scripted, simulatedClock } from '../stubs.js';

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

  it('hands an event a subscriber caused out after the one it was told of, to every consumer, and folds it at once', () => {
    const pipeline = createEventPipeline();
    pipeline.fold();
    const told: string[] = [];
    pipeline.internal$.subscribe((event) => told.push(`trace ${event.at}`));
    pipeline.internal$.subscribe((event) => {
      told.push(`handle ${event.at}`);
      if (event.at === 1) {
        pipeline.input.next(started(2)); // a handle's subscriber reacts to the first event with a second one
        told.push(`running ${pipeline.live.total.agentsRunning}`); // folded at once
      }
    });
    pipeline.internal$.subscribe((event) => told.push(`record ${event.at}`));
    pipeline.events$.subscribe((event) => {
      told.push(`user A ${event.at}`);
      if (event.at === 2) pipeline.input.next(started(3)); // and a subscriber of events$ to the second with a third
    });
    pipeline.events$.subscribe((event) => told.push(`user B ${event.at}`));

    pipeline.input.next(started(1));

    expect(told).toEqual([
      ...['trace 1', 'handle 1', 'running 2', 'record 1', 'user A 1', 'user B 1'],
      ...['trace 2', 'handle 2', 'record 2', 'user A 2', 'user B 2'],
      ...['trace 3', 'handle 3', 'record 3', 'user A 3', 'user B 3'],
    ]);

    // Completed from inside a subscriber: the event it caused is still told before the end.
    const ending = createEventPipeline();
    const seen: string[] = [];
    ending.events$.subscribe((event) => {
      seen.push(`A ${event.at}`);
      if (event.at === 1) {
        ending.input.next(started(2));
        ending.input.complete();
      }
    });
    ending.events$.subscribe({ next: (event) => seen.push(`B ${event.at}`), complete: () => seen.push('B complete') });
    ending.input.next(started(1));
    expect(seen).toEqual(['A 1', 'B 1', 'A 2', 'B 2', 'B complete']);
  });

  it('keeps a run in order, in the record and for every subscriber, when code cancels an agent as it hears its tool call', async () => {
    for (const where of ['events$', 'handle'] as const) {
      const dir = mkdtempSync(join(tmpdir(), 'troupe-order-'));
      const agent = defineAgent({ name: 'waiter', description: 'Waits.', systemPrompt: 'Wait.', tools: [hang] });
      const runtime = createRuntime({
        model: scripted([callTools(toolCall('hang', {}))]),
        agents: [agent],
        record: join(dir, 'run.jsonl'),
        trace: join(dir, 'run.trace.jsonl'),
      });
      const cancelOnCall = (event: TroupeEvent) => {
        if (event.type === 'tool.call') runtime.cancel(event.agentId);
      };
      if (where === 'events$') runtime.events$.subscribe(cancelOnCall);
      const seen: string[] = [];
      runtime.events$.subscribe((event) => seen.push(event.type));
      const handle = runtime.spawn('waiter', 'Wait.');
      if (where === 'handle') handle.events$.subscribe(cancelOnCall);

      const result = await handle.result;
      await runtime.shutdown();

      expect(result.reason).toBe('cancelled');
      expect(seen.slice(-2), where).toEqual(['tool.call', 'agent.failed']);
      expect((await readRecording(join(dir, 'run.jsonl'))).events.map((event) => event.type), where).toEqual(seen);
      expect((await readRecording(join(dir, 'run.trace.jsonl'))).events.map((event) => event.type), where).toEqual(seen);
    }
  });

  it('tells the next consumer of an event when the one before it leaves as it is told, and not the one that left', () => {
    const pipeline = createEventPipeline();
    const told: string[] = [];
    const leaving = pipeline.internal$.subscribe((event) => {
      told.push(`leaving ${event.at}`);
      leaving.unsubscribe();
    });
    pipeline.internal$.subscribe((event) => told.push(`trace ${event.at}`));
    pipeline.tap((event) => told.push(`tap ${event.at}`), () => false);

    pipeline.input.next(started(1));
    pipeline.input.next(started(2));

    expect(told).toEqual(['leaving 1', 'trace 1', 'tap 1', 'trace 2', 'tap 2']);
  });

  it('is watched while someone outside the runtime would see an event: a subscriber, or a tap that passes events on', () => {
    const pipeline = createEventPipeline();
    pipeline.fold(); // the metrics are the runtime's own: nobody watches
    let passing = false;
    pipeline.tap(() => {}, () => passing);
    expect(pipeline.input.watched()).toBe(false);
    passing = true;
    expect(pipeline.input.watched()).toBe(true);
    passing = false;
    const outside = pipeline.events$.subscribe(() => {});
    expect(pipeline.input.watched()).toBe(true);
    outside.unsubscribe();
    const trace = pipeline.internal$.subscribe(() => {});
    expect(pipeline.input.watched()).toBe(true);
    trace.unsubscribe();
    expect(pipeline.input.watched()).toBe(false);
    pipeline.events$.subscribe(() => {});
    pipeline.input.complete();
    expect(pipeline.input.watched()).toBe(false); // ended: nothing is told any more
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
  it('redacts an event only when someone outside the runtime will see it, once for all, and taps read it as it came', () => {
    let redactions = 0;
    class Counting extends Redactor {
      override redact<T>(value: T): T {
        redactions += 1;
        return super.redact(value);
      }
    }
    const pipeline = createEventPipeline({ redactor: new Counting({ secrets: [SECRET], env: false }) });
    pipeline.fold();
    const tapped: TroupeEvent[] = [];
    const asked: TroupeEvent[] = [];
    pipeline.tap(
      (event, redacted) => {
        tapped.push(event);
        if (event.at === 3) asked.push(redacted(), redacted());
      },
      () => false,
    );
    const header = { runId: 'run', agentId: 'agent:worker:1', parentId: null, toolCallId: null };
    const call = (at: number): TroupeEvent => ({ type: 'tool.call', ...header, at, callId: `c${at}`, tool: 'fetch', arguments: `{"token":"${SECRET}"}` });
    pipeline.input.next({ type: 'agent.spawned', ...header, at: 0, name: 'worker', depth: 0, task: 'Work.' });

    // Folded and tapped, seen by no one outside: nothing redacted.
    pipeline.input.next(call(1));
    expect(redactions).toBe(0);
    expect(tapped[1]).toMatchObject({ arguments: `{"token":"${SECRET}"}` });

    // A subscriber of events$: redacted once, and the tap still reads it as it came.
    const seen: TroupeEvent[] = [];
    const watching = pipeline.events$.subscribe((event) => seen.push(event));
    pipeline.input.next(call(2));
    expect(redactions).toBe(1);
    expect(seen[0]).toMatchObject({ arguments: '{"token":"[redacted]"}' });
    expect(tapped[2]).toMatchObject({ arguments: `{"token":"${SECRET}"}` });

    // A tap that asks and a subscriber: the same redacted event, made once.
    pipeline.input.next(call(3));
    expect(redactions).toBe(2);
    expect(asked[0]).toBe(seen[1]);
    expect(asked[1]).toBe(seen[1]);
    watching.unsubscribe();
    pipeline.input.next(call(4));
    expect(redactions).toBe(2);
    expect(pipeline.live.agents['agent:worker:1']).toBeDefined();
  });

  it('folds the metrics from redacted events once an agent\'s id or name holds a secret, so they name it as the events do', async () => {
    const secretName = 'worker-hunter22';
    const worker = defineAgent({ name: secretName, description: 'Works.', systemPrompt: 'Work.' });
    const runtime = createRuntime({ model: scripted(['done']), agents: [worker], secrets: [secretName], projectAgentDir: false });
    const ids = new Set<string>();
    runtime.events$.subscribe((event) => ids.add(event.agentId));

    const result = await runtime.run(secretName, 'Work.');
    const metrics = runtime.metrics();
    await runtime.shutdown();

    expect(result.status).toBe('completed');
    expect(Object.keys(metrics.agents)).toEqual([...ids]);
    expect(Object.keys(metrics.agents)[0]).toMatch(/^agent:\[redacted\]:/);
    expect(JSON.stringify(metrics)).not.toContain(secretName);
    expect(metrics.total.agentsCompleted).toBe(1);
  });

  it('folds redacted events from the first agent whose name holds a secret, however late it comes, and keeps it under its parent', async () => {
    const secretName = 'helper-hunter22';
    const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', resident: true });
    const helper = defineAgent({ name: secretName, description: 'Helps.', systemPrompt: 'Help.' });
    const runtime = createRuntime({ model: new ScriptedModel(() => 'done'), agents: [lead, helper], secrets: [secretName], clock: simulatedClock(), projectAgentDir: false });
    const ids = new Set<string>();
    runtime.events$.subscribe((event) => ids.add(event.agentId));
    const parent = runtime.spawn('lead', 'Wait for mail.');
    await runtime.runUntilIdle(); // the lead's events folded as they came: its ids and name hold no secret

    const result = await runtime.run(secretName, 'Help.', { parentId: parent.id });
    const metrics = runtime.metrics();
    await runtime.shutdown();

    expect(result.status).toBe('completed');
    expect(Object.keys(metrics.agents)).toEqual([...ids]);
    expect(JSON.stringify(metrics)).not.toContain(secretName);
    const helperId = Object.keys(metrics.agents).find((id) => id !== parent.id)!;
    expect(helperId).toMatch(/^agent:\[redacted\]:/);
    expect(metrics.agents[helperId]).toMatchObject({ name: '[redacted]', parentId: parent.id, depth: 1, state: 'completed' });
    expect(metrics.agents[parent.id]?.subtree.modelCalls).toBe(2); // its own turn and the helper's
  });
});
