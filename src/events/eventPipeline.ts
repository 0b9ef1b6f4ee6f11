import { Observable, Subject, Subscription, type Subscriber } from 'rxjs';
import type { Redactor } from '../redaction.js';
import type { TroupeEvent } from './events.js';
import { createMetrics, foldEvent, snapshotOf, type MetricsSnapshot } from './metrics.js';

/** Where events go into a pipeline: one at a time, in the order they happen, and completed once. */
export interface EventInput {
  next(event: TroupeEvent): void;
  complete(): void;
}

/** The runtime's event pipeline: every event in, redacted out to every subscriber, and the metrics folded from them. */
export interface EventPipeline {
  /**
   * Where every event goes in: the runtime's own, and every agent's and group's (their actions hand them here, in the
   * order they happen). Completing it completes `internal$` and `events$`.
   */
  readonly input: EventInput;
  /** Every event, redacted; hot. Its subscribers are told after every subscriber of {@link EventPipeline.internal$}. */
  readonly events$: Observable<TroupeEvent>;
  /**
   * The same events for the runtime's own consumers (a trace file, the metrics, the launcher, a record file, the web
   * inspector), told in the order they subscribed and before any subscriber of `events$`.
   */
  readonly internal$: Observable<TroupeEvent>;
  /**
   * The metrics after each event, as snapshots (a fresh `total`, the live `agents`); a new subscriber gets the latest
   * at once (once there has been an event), as a `shareReplay` of one would give it.
   */
  readonly metrics$: Observable<MetricsSnapshot>;
  /** The metrics folded so far, updated in place by {@link EventPipeline.fold}: read, never keep or change. */
  readonly live: MetricsSnapshot;
  /**
   * Starts folding every event into {@link EventPipeline.live}, as it comes in, before any consumer is told of it (an
   * event caused while another is handed out too, though it is told after that one). Unsubscribing stops it. Each
   * `metrics$` snapshot is taken after its event was folded.
   */
  fold(): Subscription;
}

/**
 * Builds the pipeline a runtime uses (and the benchmark measures): one input, each event redacted once by `redactor`
 * (when given), then handed to the runtime's own consumers (`internal$`) and to the subscribers of `events$`. The fold
 * allocates nothing per event; `metrics$` copies the run's `total` for each snapshot it hands out, and only while
 * someone listens. Everything downstream (subscribers, metrics, the `record` and `trace` files, handles' streams)
 * sees the redacted event.
 *
 * Agents hand their events to `input` from their actions rather than each being a stream merged in: a stream per agent
 * (an Observable on the actor's emitted events, a subscription to its end, an inner subscription of a merge) cost about
 * 7 KB allocated and 2 KB kept per agent, and the merge had to be sharded so that ending one of 100,000 was cheap.
 *
 * The runtime's own consumers are a list of subscribers called in turn, and `events$` is an RxJS `Subject` told only
 * while it has subscribers: Node loads RxJS's ES5 build, whose `Subject.next` makes an iterator and closures for every
 * event (about 0.25 KB with no subscriber at all), and the pipeline had two of them and a `map` (0.56 KB an event).
 */
export function createEventPipeline(options: { redactor?: Redactor } = {}): EventPipeline {
  const { redactor } = options;
  const own: Subscriber<TroupeEvent>[] = [];
  const subject = new Subject<TroupeEvent>();
  let ended = false;
  const live = createMetrics();
  let folding = false;
  let folded = 0;
  // User code is told of events (a handle's stream from the launcher, `events$`) and may cause more as it is (it cancels
  // the agent whose `tool.call` it heard): those wait here until the event being handed out has reached every
  // consumer, so each consumer (a `record` file, a handle, a subscriber) gets the events in the order they happened. They
  // are folded into the metrics at once, as the runtime reads them while it carries on.
  let busy = false;
  let waiting: TroupeEvent[] | undefined;
  const fold = (event: TroupeEvent) => {
    foldEvent(live, event);
    folded += 1;
  };
  const handOut = (event: TroupeEvent) => {
    for (let i = 0; i < own.length; i++) own[i]!.next(event);
    if (subject.observed) subject.next(event);
  };
  const end = () => {
    for (const subscriber of own.splice(0)) subscriber.complete();
    subject.complete();
  };
  const input: EventInput = {
    next(event) {
      if (ended) return;
      const redacted = redactor ? redactor.redact(event) : event;
      if (folding) fold(redacted);
      if (busy) {
        (waiting ??= []).push(redacted);
        return;
      }
      busy = true;
      try {
        handOut(redacted);
        for (let i = 0; waiting !== undefined && i < waiting.length; i++) handOut(waiting[i]!);
      } finally {
        busy = false;
        waiting = undefined;
      }
      if (ended) end(); // completed while it was handed out: once what waited was handed out too
    },
    complete() {
      if (ended) return;
      ended = true;
      if (!busy) end();
    },
  };
  const internal$ = new Observable<TroupeEvent>((subscriber) => {
    if (ended) {
      subscriber.complete();
      return;
    }
    own.push(subscriber);
    return () => {
      const at = own.indexOf(subscriber);
      if (at >= 0) own.splice(at, 1);
    };
  });
  const events$ = subject.asObservable();
  const metrics$ = new Observable<MetricsSnapshot>((subscriber) => {
    if (folded > 0) subscriber.next(snapshotOf(live));
    return events$.subscribe({
      next: () => subscriber.next(snapshotOf(live)),
      error: (error: unknown) => subscriber.error(error),
      complete: () => subscriber.complete(),
    });
  });
  const startFolding = () => {
    folding = true;
    return new Subscription(() => (folding = false));
  };
  return { input, events$, internal$, metrics$, live, fold: startFolding };
}
