/** True for a promise, or anything with a `then` method that awaiting would call. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Runs `work` at once and gives its outcome as a promise: what it returned (or the promise it returned), or a rejection
 * with what it threw. What an async function does for its body, without a suspended function or the extra promise
 * and microtask of its `await`s: the promise chains on a turn's path start with it.
 */
export function promiseFrom<T>(work: () => T | PromiseLike<T>): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}
