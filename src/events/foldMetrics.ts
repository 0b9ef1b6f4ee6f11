import { defer, scan, type Observable, type OperatorFunction } from 'rxjs';
import type { TroupeEvent } from './events.js';
import { applyEvent, createMetrics, type MetricsSnapshot } from './metrics.js';

/**
 * Folds a stream of events into metrics: one {@link MetricsSnapshot} after each event.
 *
 * Each subscription starts from its own fresh {@link createMetrics} seed, so two subscribers never
 * share state. Nothing is emitted before the first event. Each snapshot has a fresh `total`, but its
 * `agents` record is live and updated in place by later events (see {@link MetricsSnapshot}); use
 * `structuredClone(snapshot)` to keep one as it was.
 *
 * @example
 * const metrics$ = events$.pipe(foldMetrics(), shareReplay({ bufferSize: 1, refCount: false }));
 */
export function foldMetrics(): OperatorFunction<TroupeEvent, MetricsSnapshot> {
  return (events$: Observable<TroupeEvent>) =>
    defer(() => events$.pipe(scan((state: MetricsSnapshot, event: TroupeEvent) => applyEvent(state, event), createMetrics())));
}
