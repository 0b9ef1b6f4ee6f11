import { Observable, Subject, from, map, mergeAll, share } from 'rxjs';

/** How many groups the agents' streams are spread over (see {@link AgentEventStreams}). */
const SHARDS = 128;

/**
 * The merge of every agent's event stream into one: `add(agent$)` for each agent, `events$` for all of them.
 *
 * It is `mergeAll` twice over: agents are dealt round-robin to 128 shards, each shard merges its agents with
 * `mergeAll`, and `events$` merges the shards with `mergeAll`. One flat `mergeAll` would do the same, but RxJS keeps
 * a merge's live inner subscriptions in an array and removes each ended one with `indexOf` + `splice`, so ending
 * one agent costs as much as the number of live agents (about 100 µs with 100,000 live). Sharding keeps those
 * arrays 128 times shorter. Events pass through synchronously, so their order is the order they were emitted in.
 * A `transform` given to the constructor (the runtime's redaction) is applied once per event, after the merge and
 * before the stream is shared, so every subscriber sees its result.
 */
export class AgentEventStreams<T> {
  private readonly shards = Array.from({ length: SHARDS }, () => new Subject<Observable<T>>());
  private next = 0;
  /** Every event of every agent added, merged; hot and shared. */
  readonly events$: Observable<T>;

  constructor(transform?: (value: T) => T) {
    const merged = from(this.shards.map((shard) => shard.pipe(mergeAll()))).pipe(mergeAll());
    this.events$ = (transform ? merged.pipe(map(transform)) : merged).pipe(share());
  }

  /** Adds one agent's stream; it is merged from now on until it completes. */
  add(events: Observable<T>): void {
    this.shards[this.next]!.next(events);
    this.next = (this.next + 1) % SHARDS;
  }

  /** Completes `events$` once every added stream has completed. */
  complete(): void {
    for (const shard of this.shards) shard.complete();
  }
}
