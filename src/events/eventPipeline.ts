import { Observable, type Subscription } from 'rxjs';
import type { Redactor } from '../redaction.js';
import { AgentEventStreams } from './AgentEventStreams.js';
import type { TroupeEvent } from './events.js';
import { createMetrics, foldEvent, snapshotOf, type MetricsSnapshot } from './metrics.js';

/** The runtime's event pipeline: agents' streams in, every event out, and the metrics folded from them. */
export interface EventPipeline {
  /** Add one agent's events here. */
  readonly streams: AgentEventStreams<TroupeEvent>;
  /** Every event of every agent, merged; hot. */
  readonly events$: Observable<TroupeEvent>;
  /**
   * The metrics after each event, as snapshots (a fresh `total`, the live `agents`); a new subscriber gets the latest
   * at once (once there has been an event), as a `shareReplay` of one would give it.
   */
  readonly metrics$: Observable<MetricsSnapshot>;
  /** The metrics folded so far, updated in place by {@link EventPipeline.fold}: read, never keep or change. */
  readonly live: MetricsSnapshot;
  /**
   * Starts folding every event of `events$` into {@link EventPipeline.live}. Call it before anything subscribes to
   * `metrics$`: each snapshot is taken after its event was folded, since `events$` tells its subscribers in order.
   */
  fold(): Subscription;
}

/**
 * Builds the pipeline a runtime uses (and the benchmark measures): sharded `mergeAll`, each event redacted once by
 * `redactor` (when given), then folded into one live record of metrics, in place. Everything downstream (subscribers,
 * metrics, the `record` and `trace` files, handles' streams) sees the redacted event. The fold allocates nothing per
 * event; `metrics$` copies the run's `total` for each snapshot it hands out, and only while someone listens.
 */
export function createEventPipeline(options: { redactor?: Redactor } = {}): EventPipeline {
  const { redactor } = options;
  const streams = new AgentEventStreams<TroupeEvent>(redactor ? (event) => redactor.redact(event) : undefined);
  const events$ = streams.events$;
  const live = createMetrics();
  let folded = 0;
  const metrics$ = new Observable<MetricsSnapshot>((subscriber) => {
    if (folded > 0) subscriber.next(snapshotOf(live));
    return events$.subscribe({
      next: () => subscriber.next(snapshotOf(live)),
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  });
  const fold = () =>
    events$.subscribe((event) => {
      foldEvent(live, event);
      folded += 1;
    });
  return { streams, events$, metrics$, live, fold };
}
