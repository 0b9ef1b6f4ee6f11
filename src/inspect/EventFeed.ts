import type { TroupeEvent } from '../events/events.js';

/**
 * The events a web inspector serves: every event of the run as JSON text (serialised once, however many pages read
 * it), in order, and whether the run has ended. A page reads from any position, so one that connects late (or
 * reconnects) gets everything it has not seen; listeners hear that there is more, and read it at their own pace.
 */
export class EventFeed {
  readonly #lines: string[] = [];
  readonly #listeners = new Set<() => void>();
  #ended = false;

  /** Events kept so far. */
  get length(): number {
    return this.#lines.length;
  }

  /** True once {@link end} was called: no event comes after. */
  get ended(): boolean {
    return this.#ended;
  }

  /** Keeps an event (ignored once the feed has ended). */
  push(event: TroupeEvent): void {
    if (this.#ended) return;
    this.#lines.push(JSON.stringify(event));
    this.#notify();
  }

  /** Keeps events that are JSON text already (a recording read back), in order. */
  pushLines(lines: readonly string[]): void {
    if (this.#ended) return;
    for (const line of lines) this.#lines.push(line);
    this.#notify();
  }

  /** Says the run has ended; listeners hear it once. */
  end(): void {
    if (this.#ended) return;
    this.#ended = true;
    this.#notify();
  }

  /** The events from `from` (inclusive) to `to` (exclusive) as one JSON array's text. */
  slice(from: number, to: number): string {
    return `[${this.#lines.slice(from, to).join(',')}]`;
  }

  /** Calls `listener` whenever events come or the feed ends; returns what stops it. */
  listen(listener: () => void): () => void {
    this.#listeners.add(listener);
    return () => this.#listeners.delete(listener);
  }

  #notify(): void {
    for (const listener of this.#listeners) listener();
  }
}
