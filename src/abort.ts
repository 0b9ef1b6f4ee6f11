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
 * A stop that costs no `AbortController` until someone asks for an AbortSignal: a flag and a reason, and one promise
 * that rejects when it stops, which every caller races (as {@link whenAborted} does for a signal). A tool batch makes
 * one per turn and most never need a signal: an `AbortController` and its listener cost more than the rest of the
 * batch's own bookkeeping.
 */
export class Stop {
  aborted = false;
  reason: unknown = undefined;
  /** Rejects when it stops (with the reason when that is an Error, else an {@link AbortedError}); never resolves. */
  readonly promise: Promise<never>;
  private fail!: (error: unknown) => void;
  private controller: AbortController | undefined;

  constructor() {
    this.promise = new Promise<never>((_, reject) => (this.fail = reject));
    this.promise.catch(() => {}); // raced by its callers; one that never stops, or nobody raced, is not an unhandled rejection
  }

  /** An AbortSignal that follows this stop, made on first use. */
  get signal(): AbortSignal {
    if (!this.controller) {
      this.controller = new AbortController();
      if (this.aborted) this.controller.abort(this.reason);
    }
    return this.controller.signal;
  }

  /** Stops, once: the signal (if made) aborts, then the promise rejects. */
  abort(reason: unknown): void {
    if (this.aborted) return;
    this.aborted = true;
    this.reason = reason;
    this.controller?.abort(reason);
    this.fail(reason instanceof Error ? reason : new AbortedError());
  }
}
