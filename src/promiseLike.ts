/** True for a promise, or anything with a `then` method that awaiting would call. */
export function isPromiseLike(value: unknown): value is PromiseLike<unknown> {
  return typeof value === 'object' && value !== null && typeof (value as { then?: unknown }).then === 'function';
}

/**
 * Runs `work` at once and gives its outcome as a promise: what it returned (or the promise it returned), or a rejection
 * with what it threw: what an async function does for its body, without a suspended function or the extra promise and
 * microtask of its `await`s. For a start made once per run or per sub-agent, or where `work` exists anyway. The chains
 * run in every turn (the model call, the scripted model, the plan, each tool call, a publish) write the same
 * `try`/`catch` inline instead: the closure made for each call cost about 80 bytes, 0.75 KB of a trader's turn.
 */
export function promiseFrom<T>(work: () => T | PromiseLike<T>): Promise<T> {
  try {
    return Promise.resolve(work());
  } catch (error) {
    return Promise.reject(error);
  }
}
