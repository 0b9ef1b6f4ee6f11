import { Observable, Subject } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';

/**
 * The events of one agent handle (the agent and its sub-agents). Events that arrive before anyone subscribes are
 * kept until the end of the tick in which the agent was spawned, so `spawn(...).events$.subscribe(...)` sees the
 * agent from its first event.
 */
export class HandleStream {
  private readonly subject = new Subject<TroupeEvent>();
  private early: TroupeEvent[] | null = [];
  /** The stream a handle gives out. */
  readonly observable = new Observable<TroupeEvent>((subscriber) => {
    for (const event of this.early ?? []) subscriber.next(event);
    if (this.subject.closed || this.subject.isStopped) {
      subscriber.complete();
      return;
    }
    return this.subject.subscribe(subscriber);
  });

  constructor() {
    queueMicrotask(() => (this.early = null));
  }

  /** Passes an event on (asked of `event` only when someone will see it). */
  next(event: () => TroupeEvent): void {
    if (this.early === null && !this.subject.observed) return;
    const told = event();
    this.early?.push(told);
    if (this.subject.observed) this.subject.next(told);
  }

  /** Ends the stream: the agent ended. */
  complete(): void {
    this.subject.complete();
  }
}
