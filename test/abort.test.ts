// A Stop: a flag and a reason, with its listener, promise and AbortSignal each made or called as its owner needs them.
import { describe, expect, it } from 'vitest';
import { Stop } from '../src/abort.js';
import { AbortedError } from '../src/errors.js';

describe('Stop', () => {
  it('calls its listener once, when it stops, with the reason when that is an Error', () => {
    const stop = new Stop();
    const heard: Error[] = [];
    stop.onStop((error) => heard.push(error));
    expect(heard).toEqual([]);
    const reason = new AbortedError('The agent stopped.');
    stop.abort(reason);
    stop.abort(new AbortedError('A second stop.'));
    expect(heard).toEqual([reason]);
    expect(stop.aborted).toBe(true);
    expect(stop.reason).toBe(reason);
  });

  it('gives a reason that is not an Error as an AbortedError, and a listener that comes late at once', () => {
    const stop = new Stop();
    stop.abort('shutting down');
    const heard: Error[] = [];
    stop.onStop((error) => heard.push(error));
    expect(heard).toHaveLength(1);
    expect(heard[0]).toBeInstanceOf(AbortedError);
  });

  it('keeps one listener: a new one replaces the last', () => {
    const stop = new Stop();
    const heard: string[] = [];
    stop.onStop(() => heard.push('first'));
    stop.onStop(() => heard.push('second'));
    stop.abort(new Error('stopped'));
    expect(heard).toEqual(['second']);
  });

  it('makes one promise, asked for before or after it stops, that rejects with what it stopped with', async () => {
    const early = new Stop();
    const promise = early.promise;
    expect(early.promise).toBe(promise);
    const reason = new Error('cancelled');
    early.abort(reason);
    await expect(promise).rejects.toBe(reason);

    const late = new Stop();
    late.abort(reason);
    await expect(late.promise).rejects.toBe(reason);
  });

  it('raises no unhandled rejection for a promise asked for and never awaited', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    try {
      const stop = new Stop();
      void stop.promise; // asked for, never awaited
      stop.abort(new Error('stopped'));
      await new Promise((resolve) => setImmediate(resolve));
      await new Promise((resolve) => setImmediate(resolve));
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
    expect(unhandled).toEqual([]);
  });

  it('makes its AbortSignal on first read, aborted already when it has stopped, and aborts it when it stops', () => {
    const before = new Stop();
    const signal = before.signal;
    expect(signal.aborted).toBe(false);
    const reason = new Error('stopped');
    before.abort(reason);
    expect(signal.aborted).toBe(true);
    expect(signal.reason).toBe(reason);

    const after = new Stop();
    after.abort(reason);
    expect(after.signal.aborted).toBe(true);
    expect(after.signal.reason).toBe(reason);
  });
});
