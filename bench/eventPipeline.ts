// Event pipeline: events per second through the runtime's pipeline (agents hand their events to its input; each is
// redacted and shared, folded into the runtime's metrics, and a snapshot goes to a metrics$ subscriber after each)
// against raw RxJS doing the least the same job asks the textbook way: every agent's events a stream, merged, counted
// with scan. The rate of one Subject + scan (no merge, no work per event) is in the detail.
import { Subject, merge, scan } from 'rxjs';
import { createEventPipeline } from '../src/events/eventPipeline.js';
import { Redactor } from '../src/redaction.js';
import type { MetricsSnapshot, TroupeEvent } from 'troupe';
import { medianOf, report } from './measure.js';

/** The five events of an agent that answers in one turn. */
function eventsOf(index: number): TroupeEvent[] {
  const header = { runId: 'bench', agentId: `agent:worker:${index}`, parentId: null, toolCallId: null };
  return [
    { type: 'agent.spawned', ...header, at: 0, name: 'worker', depth: 0, task: 'task' },
    { type: 'agent.started', ...header, at: 1, name: 'worker' },
    { type: 'model.request', ...header, at: 1, turn: 1, model: 'm', messages: 2, tools: 0 },
    { type: 'model.response', ...header, at: 2, turn: 1, model: 'm', usage: { inputTokens: 30, outputTokens: 5 }, costUsd: 0.00001, durationMs: 1, toolCalls: 0 },
    { type: 'agent.completed', ...header, at: 3, name: 'worker', output: 'ok', turns: 1 },
  ];
}

export async function eventPipeline(agents: number): Promise<void> {
  const events = Array.from({ length: agents }, (_, index) => eventsOf(index));
  const total = agents * 5;

  const troupe = await medianOf(5, () => {
    // As a runtime makes it: redacting the secrets it was given and the environment's, and the key patterns.
    const pipeline = createEventPipeline({ redactor: new Redactor({ secrets: ['bench-secret-value'] }) });
    // The runtime's own fold, and a user who watches metrics$ (a snapshot after every event).
    let last: MetricsSnapshot | undefined;
    const folding = pipeline.fold();
    const subscription = pipeline.metrics$.subscribe((snapshot) => (last = snapshot));
    // As agents hand their events to the runtime: each one's five in its turn.
    for (const list of events) for (const event of list) pipeline.input.next(event);
    pipeline.input.complete();
    subscription.unsubscribe();
    folding.unsubscribe();
    if (last?.total.agentsCompleted !== agents) throw new Error(`The metrics counted ${last?.total.agentsCompleted} of ${agents} agents.`);
  });

  const raw = await medianOf(5, () => {
    const inputs = events.map(() => new Subject<TroupeEvent>());
    let count = 0;
    const subscription = merge(...inputs)
      .pipe(scan((sum: number) => sum + 1, 0))
      .subscribe((value) => (count = value));
    events.forEach((list, index) => {
      for (const event of list) inputs[index]!.next(event);
      inputs[index]!.complete();
    });
    subscription.unsubscribe();
    if (count !== total) throw new Error(`Raw RxJS saw ${count} of ${total} events.`);
  });

  const bare = await medianOf(5, () => {
    const input = new Subject<TroupeEvent>();
    let count = 0;
    const subscription = input.pipe(scan((sum: number) => sum + 1, 0)).subscribe((value) => (count = value));
    for (const list of events) for (const event of list) input.next(event);
    input.complete();
    subscription.unsubscribe();
    if (count !== total) throw new Error(`Raw RxJS saw ${count} of ${total} events.`);
  });

  const troupeRate = total / (troupe / 1000);
  const rawRate = total / (raw / 1000);
  const bareRate = total / (bare / 1000);
  report({
    bench: 'event-pipeline',
    name: `events per second, ${agents} agents × 5 events`,
    value: troupeRate,
    unit: 'events/s',
    baseline: 'raw RxJS: a stream per agent, merge + scan',
    baselineValue: rawRate,
    ratio: troupeRate / rawRate,
    target: 'at least 1/3 of raw RxJS',
    pass: troupeRate / rawRate >= 1 / 3,
    detail: { subjectScanPerSecond: Math.round(bareRate) },
  });
}
