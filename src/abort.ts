import { AbortedError } from './errors.js';

const whenAbortedBySignal = new WeakMap<AbortSignal, Promise<never>>();

/**
 * A promise that rejects when `signal` aborts (with its reason when that is an Error, else an {@link AbortedError})
 * and never resolves. It is made once per signal, with one listener: every caller that races a signal shares it, so
 * a turn of 10,000 tool calls adds one listener to its signal, not 10,000 (Node warns past 10 on one signal, and each
 * add is linear in the listeners already there).
 */
export function whenAborted(signal: AbortSignal): Promise<never> {
  let promise = whenAbortedBySignal.get(signal);
  if (promise) return promise;
  promise = new Promise<never>((_, reject) => {
    const fail = () => reject(signal.reason instanceof Error ? signal.reason : new AbortedError());
    if (signal.aborted) fail();
    else signal.addEventListener('abort', fail, { once: true });
  });
  promise.catch(() => {}); // raced by its callers; one that never aborts, or nobody raced, is not an unhandled rejection
  whenAbortedBySignal.set(signal, promise);
  return promise;
}

/**
 * The key of what a model request of the runtime's gives as its call's stop, as a promise that rejects when the call
 * stops (see {@link whenRequestStopped}). A symbol on the request's prototype: a copy of the request does not have it.
 */
export const STOPPED = Symbol('troupe.stopped');

/**
 * A promise that rejects when `request`'s call stops: the runtime's own (its stop's, without an AbortSignal made for
 * it), else one raced on `request.signal` (see {@link whenAborted}); undefined for a request without either.
 */
export function whenRequestStopped(request: { readonly signal?: AbortSignal; readonly [STOPPED]?: Promise<never> }): Promise<never> | undefined {
  return request[STOPPED] ?? (request.signal ? whenAborted(request.signal) : undefined);
}

/**
 * A stop that costs no `AbortController` until someone asks for an AbortSignal, nor a promise until someone asks for
 * one: a flag and a reason. A tool batch makes one per turn and a model call one per turn, and most never need a
 * signal: an `AbortController` and its listener cost more than the rest of the batch's own bookkeeping, and a promise
 * made for every stop (with the reaction that keeps its rejection handled) was two of a trader turn's 45.
 */
export class Stop {
  aborted = false;
  reason: unknown = undefined;
  private made: Promise<never> | undefined;
  private fail: ((error: unknown) => void) | undefined;
  private controller: AbortController | undefined;
  private listener: ((error: Error) => void) | undefined;

  /**
   * Rejects when it stops (with the reason when that is an Error, else an {@link AbortedError}); never resolves. Made
   * on first use; one that never stops, or nobody raced, is not an unhandled rejection.
   */
  get promise(): Promise<never> {
    if (this.made) return this.made;
    this.made = new Promise<never>((_, reject) => (this.fail = reject));
    this.made.catch(() => {});
    if (this.aborted) this.fail!(this.error());
    return this.made;
  }

  /**
   * Calls `listener` once when it stops (at once if it has): what one owner of the stop waits on without a promise.
   * One listener at a time; a new one replaces the last.
   */
  onStop(listener: (error: Error) => void): void {
    if (this.aborted) listener(this.error());
    else this.listener = listener;
  }

  /** An AbortSignal that follows this stop, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Stops, once: the signal (if made) aborts, then the promise (if made) rejects, then the listener is called. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    const { fail, listener } = this;
    if (fail === undefined && listener === undefined) return;
    this.listener = undefined;
    const error = this.error();
    fail?.(error);
    listener?.(error);
  }

  /** What it stopped with, as an Error. */
  private error(): Error {
    return this.reason instanceof Error ? this.reason : new AbortedError();
  }
}
