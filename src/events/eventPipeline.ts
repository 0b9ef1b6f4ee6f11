import { Observable, Subject, Subscription, type Subscriber } from 'rxjs';
import type { Redactor } from '../redaction.js';
import type { TroupeEvent } from './events.js';
import { createMetrics, foldEvent, snapshotOf, type MetricsSnapshot } from './metrics.js';

/** Where events go into a pipeline: one at a time, in the order they happen, and completed once. */
export interface EventInput {
  next(event: TroupeEvent): void;
  complete(): void;
  /**
   * True when an event put in now would reach someone outside the runtime: a subscriber of `events$` or `internal$`
   * (a trace, a record, the web inspector), or a tap that passes events on now (a handle's stream). An event only
   * people read, such as `tool.plan`, is made only then.
   */
  watched(): boolean;
}

/**
 * A consumer of the runtime's own that reads what it needs of an event itself (its type, ids and numbers) and passes
 * it on to user code only now and then: told of the event as it came in, and `redacted` gives the event as every
 * other consumer sees it, redacted (once for all of them, on the first call). Call `redacted` while being told, not
 * later.
 */
export type EventTap = (event: TroupeEvent, redacted: () => TroupeEvent) => void;

/** The runtime's event pipeline: every event in, folded into the metrics, and redacted out to every subscriber. */
export interface EventPipeline {
  /**
   * Where every event goes in: the runtime's own, and every agent's and group's (their actions hand them here, in the
   * order they happen). Completing it completes `internal$` and `events$`.
   */
  readonly input: EventInput;
  /** Every event, redacted; hot. Its subscribers are told after every subscriber of {@link EventPipeline.internal$}. */
  readonly events$: Observable<TroupeEvent>;
  /**
   * The same events, redacted, for the runtime's own consumers (a trace file, a record file, the web inspector), told
   * with the taps in the order they joined and before any subscriber of `events$`.
   */
  readonly internal$: Observable<TroupeEvent>;
  /**
   * Adds a consumer of the runtime's own that is told of every event with the `internal$` subscribers, in the same
   * order, before it is redacted (see {@link EventTap}); unsubscribing removes it. `passesOn` says whether it hands
   * events to someone outside the runtime now (see {@link EventInput.watched}).
   */
  tap(tap: EventTap, passesOn: () => boolean): Subscription;
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

const ALWAYS = (): boolean => true;

/**
 * Builds the pipeline a runtime uses (and the benchmark measures): one input, each event folded into the metrics, then
 * handed to the runtime's own consumers (`internal$`, taps) and to the subscribers of `events$`. The fold allocates
 * nothing per event; `metrics$` copies the run's `total` for each snapshot it hands out, and only while someone
 * listens. Everything that leaves the runtime (subscribers, the `record` and `trace` files, the web inspector, handles'
 * streams) sees the event redacted by `redactor` (when given), the same redacted event for all.
 *
 * An event is redacted only when someone outside the runtime will see it: a subscriber of `internal$` (a trace, a
 * record, the web inspector) or of `events$`, or a tap that asks (a handle's stream). The metrics and the launcher
 * read an event's ids, names and numbers, never its text; those are made by the runtime and hold no secret, so they
 * read the event as it came, and a run nobody watches redacts nothing (4 % of a trader's turn went to redacting
 * its eleven events). Should the ids or name of an agent hold a secret after all (a listed secret that is also an
 * agent's name), the metrics fold the redacted events from then on, so they name agents as the events do.
 *
 * Agents hand their events to `input` from their actions rather than each being a stream merged in: a stream per agent
 * (an Observable on the actor's emitted events, a subscription to its end, an inner subscription of a merge) cost about
 * 7 KB allocated and 2 KB kept per agent, and the merge had to be sharded so that ending one of 100,000 was cheap.
 *
 * The runtime's own consumers are a list of functions called in turn, and `events$` is an RxJS `Subject` told only
 * while it has subscribers: Node loads RxJS's ES5 build, whose `Subject.next` makes an iterator and closures for every
 * event (about 0.25 KB with no subscriber at all), and the pipeline had two of them and a `map` (0.56 KB an event).
 */
export function createEventPipeline(options: { redactor?: Redactor } = {}): EventPipeline {
  const { redactor } = options;
  const own = new OwnConsumers(redactor);
  const subject = new Subject<TroupeEvent>();
  let ended = false;
  const live = createMetrics();
  const fold = metricsFold(live, redactor);
  let folding = false;
  // User code is told of events (a handle's stream from the launcher, `events$`) and may cause more as it is (it cancels
  // the agent whose `tool.call` it heard): those wait here until the event being handed out has reached every
  // consumer, so each consumer (a `record` file, a handle, a subscriber) gets the events in the order they happened. They
  // are folded into the metrics at once, as the runtime reads them while it carries on.
  let busy = false;
  let waiting: TroupeEvent[] | undefined;
  const end = () => {
    own.end();
    subject.complete();
  };
  const input: EventInput = {
    next(event) {
      if (ended) return;
      if (folding) fold(event);
      if (busy) {
        (waiting ??= []).push(event);
        return;
      }
      busy = true;
      try {
        own.tell(event, subject);
        for (let i = 0; waiting !== undefined && i < waiting.length; i++) own.tell(waiting[i]!, subject);
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
    watched: () => !ended && (subject.observed || own.passOn()),
  };
  const internal$ = new Observable<TroupeEvent>((subscriber: Subscriber<TroupeEvent>) => {
    if (ended) {
      subscriber.complete();
      return;
    }
    return own.join(
      (_event, redacted) => subscriber.next(redacted()),
      ALWAYS,
      () => subscriber.complete(),
    );
  });
  const tap = (consumer: EventTap, passesOn: () => boolean): Subscription =>
    ended ? Subscription.EMPTY : new Subscription(own.join(consumer, passesOn));
  const events$ = subject.asObservable();
  const metrics$ = new Observable<MetricsSnapshot>((subscriber) => {
    if (fold.count > 0) subscriber.next(snapshotOf(live));
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
  return { input, events$, internal$, tap, metrics$, live, fold: startFolding };
}

/**
 * The runtime's own consumers of events (`internal$` subscribers and taps), told in the order they joined, then the
 * subscribers of `events$`. An event is redacted on the first ask, once for all of them (hand-outs never overlap: the
 * pipeline queues an event caused while another is handed out).
 */
class OwnConsumers {
  // Replaced, never changed, as consumers join and leave: a hand-out goes through the list as it was when it began, so
  // one that leaves while told (an `internal$` subscriber that unsubscribes in its `next`) does not make the next skip it.
  private taps: readonly EventTap[] = [];
  /** Whether each consumer passes events on outside the runtime now, in the order of `taps`. */
  private passing: readonly (() => boolean)[] = [];
  private readonly ends: (() => void)[] = [];
  private current: TroupeEvent | undefined;
  private currentRedacted: TroupeEvent | undefined;
  private readonly redacted = (): TroupeEvent => (this.currentRedacted ??= this.redactor ? this.redactor.redact(this.current!) : this.current!);

  constructor(private readonly redactor: Redactor | undefined) {}

  /**
   * Adds a consumer until the returned function is called or the pipeline ends (then `complete` is called, if given);
   * `passesOn` says whether it passes events on outside the runtime now.
   */
  join(tap: EventTap, passesOn: () => boolean, complete?: () => void): () => void {
    this.taps = [...this.taps, tap];
    this.passing = [...this.passing, passesOn];
    if (complete) this.ends.push(complete);
    return () => {
      const at = this.taps.indexOf(tap);
      if (at >= 0) {
        this.taps = this.taps.toSpliced(at, 1);
        this.passing = this.passing.toSpliced(at, 1);
      }
      if (complete) {
        const index = this.ends.indexOf(complete);
        if (index >= 0) this.ends.splice(index, 1);
      }
    };
  }

  /** Tells every consumer of `event`, then `subject`'s subscribers (redacted), if it has any. */
  tell(event: TroupeEvent, subject: Subject<TroupeEvent>): void {
    this.current = event;
    this.currentRedacted = undefined;
    const { taps } = this;
    for (let i = 0; i < taps.length; i++) taps[i]!(event, this.redacted);
    if (subject.observed) subject.next(this.redacted());
    this.current = this.currentRedacted = undefined;
  }

  /** True when some consumer passes events on outside the runtime now. */
  passOn(): boolean {
    const { passing } = this;
    for (let i = 0; i < passing.length; i++) if (passing[i]!()) return true;
    return false;
  }

  /** The pipeline ended: every consumer is completed, in the order it joined, and none is told of anything more. */
  end(): void {
    this.taps = [];
    this.passing = [];
    for (const complete of this.ends.splice(0)) complete();
  }
}

/**
 * Folds events into `live` in place, as they came: the metrics read ids, names and numbers, which hold no secret.
 * Once an agent's ids or name turn out to hold one, the fold redacts every event from then on, so the metrics name
 * agents as the events do. `count` is the number of events folded.
 */
function metricsFold(live: MetricsSnapshot, redactor: Redactor | undefined): ((event: TroupeEvent) => void) & { count: number } {
  let secretIds = false;
  const fold = (event: TroupeEvent) => {
    if (redactor && !secretIds && (event.type === 'agent.spawned' || live.agents[event.agentId] === undefined)) {
      secretIds = idsHoldSecrets(redactor, event);
    }
    foldEvent(live, secretIds ? redactor!.redact(event) : event);
    fold.count += 1;
  };
  fold.count = 0;
  return fold;
}

/** True when redacting an event changes its run id, agent ids or name: one of them holds a secret. */
function idsHoldSecrets(redactor: Redactor, event: TroupeEvent): boolean {
  const changed = (text: unknown) => typeof text === 'string' && redactor.redactText(text) !== text;
  return changed(event.runId) || changed(event.agentId) || changed(event.parentId) || ('name' in event && changed(event.name));
}
