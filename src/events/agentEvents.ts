import { Observable } from 'rxjs';
import type { AnyActorRef } from 'xstate';
import type { TroupeEvent } from './events.js';

/** The events an agent actor emits, as an Observable that completes when the actor ends. */
export function agentEvents(actor: AnyActorRef): Observable<TroupeEvent> {
  return new Observable<TroupeEvent>((subscriber) => {
    const listener = actor.on('*', (event) => subscriber.next(event as TroupeEvent));
    const ended = actor.subscribe({ complete: () => subscriber.complete(), error: () => subscriber.complete() });
    return () => {
      listener.unsubscribe();
      ended.unsubscribe();
    };
  });
}
