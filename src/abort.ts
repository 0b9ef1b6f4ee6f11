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
