import { Observable, Subject, map, share, type Subscription } from 'rxjs';
import type { Redactor } from '../redaction.js';
import type { TroupeEvent } from './events.js';
import { createMetrics, foldEvent, snapshotOf, type MetricsSnapshot } from './metrics.js';

/** The runtime's event pipeline: every event in, redacted out to every subscriber, and the metrics folded from them. */
export interface EventPipeline {
  /**
   * Where every event goes in: the runtime's own, and every agent's and group's (their actions hand them here, in the
   * order they happen). Completing it completes `events$`.
   */
  readonly input: Subject<TroupeEvent>;
  /** Every event, redacted; hot and shared. */
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
 * Builds the pipeline a runtime uses (and the benchmark measures): one input, each event redacted once by `redactor`
 * (when given) and shared, then folded into one live record of metrics, in place. Everything downstream (subscribers,
 * metrics, the `record` and `trace` files, handles' streams) sees the redacted event. The fold allocates nothing per
 * event; `metrics$` copies the run's `total` for each snapshot it hands out, and only while someone listens.
 *
 * Agents hand their events to `input` from their actions rather than each being a stream merged in: a stream per agent
 * (an Observable on the actor's emitted events, a subscription to its end, an inner subscription of a merge) cost about
 * 7 KB allocated and 2 KB kept per agent, and the merge had to be sharded so that ending one of 100,000 was cheap.
 */
export function createEventPipeline(options: { redactor?: Redactor } = {}): EventPipeline {
  const { redactor } = options;
  const input = new Subject<TroupeEvent>();
  const events$ = (redactor ? input.pipe(map((event) => redactor.redact(event))) : input).pipe(share());
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
  return { input, events$, metrics$, live, fold };
}
