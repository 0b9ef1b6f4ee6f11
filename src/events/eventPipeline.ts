import { shareReplay, type Observable } from 'rxjs';
import type { Redactor } from '../redaction.js';
import { AgentEventStreams } from './AgentEventStreams.js';
import type { TroupeEvent } from './events.js';
import { foldMetrics } from './foldMetrics.js';
import type { MetricsSnapshot } from './metrics.js';

/** The runtime's event pipeline: agents' streams in, every event out, and the metrics folded from them. */
export interface EventPipeline {
  /** Add one agent's events here. */
  readonly streams: AgentEventStreams<TroupeEvent>;
  /** Every event of every agent, merged; hot. */
  readonly events$: Observable<TroupeEvent>;
  /** Metrics folded from `events$`; replays the latest snapshot to new subscribers. */
  readonly metrics$: Observable<MetricsSnapshot>;
}

/**
 * Builds the pipeline a runtime uses (and the benchmark measures): sharded `mergeAll`, each event redacted once by
 * `redactor` (when given), then `scan` into metrics. Everything downstream (subscribers, metrics, the `record` and
 * `trace` files, handles' streams) sees the redacted event.
 */
export function createEventPipeline(options: { redactor?: Redactor } = {}): EventPipeline {
  const { redactor } = options;
  const streams = new AgentEventStreams<TroupeEvent>(redactor ? (event) => redactor.redact(event) : undefined);
  const events$ = streams.events$;
  const metrics$ = events$.pipe(foldMetrics(), shareReplay({ bufferSize: 1, refCount: false }));
  return { streams, events$, metrics$ };
}
