import { Observable, Subject } from 'rxjs';
import type { TroupeEvent } from '../events/events.js';

/**
 * The events of one agent handle (the agent and its sub-agents). Events that arrive before anyone subscribes are
 * kept until the end of the tick in which the agent was spawned, so `spawn(...).events$.subscribe(...)` sees the
 * agent from its first event.
 *
 * It says when it starts and stops wanting events (`onWanting`): in its first tick, and then while someone subscribes.
 * A run spawns its resident agents once and rarely watches them, so the launcher looks up the handles above an event's
 * agent only while some handle wants events.
 */
export class HandleStream {
  private readonly subject = new Subject<TroupeEvent>();
  private early: TroupeEvent[] | null = [];
  private wanting = true;
  /** The stream a handle gives out. */
  readonly observable = new Observable<TroupeEvent>((subscriber) => {
    for (const event of this.early ?? []) subscriber.next(event);
    if (this.subject.closed || this.subject.isStopped) {
      subscriber.complete();
      return;
    }
    const subscription = this.subject.subscribe(subscriber);
    this.update();
    return () => {
      subscription.unsubscribe();
      this.update();
    };
  });

  /** `onWanting(true)` is called at once, then each time the stream starts or stops wanting events. */
  constructor(private readonly onWanting: (wanting: boolean) => void = () => {}) {
    onWanting(true);
    queueMicrotask(() => {
      this.early = null;
      this.update();
    });
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
    this.update();
  }

  private update(): void {
    const wanting = !this.subject.isStopped && (this.early !== null || this.subject.observed);
    if (wanting === this.wanting) return;
    this.wanting = wanting;
    this.onWanting(wanting);
  }
}
