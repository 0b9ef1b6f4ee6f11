// The agent's worker on its own: agentWorker(parts) with parts written here, spawned by a tiny parent machine that
// records what the worker sends back.
import { describe, expect, it } from 'vitest';
import { createActor, setup, spawnChild, stopChild, type EventObject } from 'xstate';
import { agentWorker, type WorkerParts, type WorkerRequest } from '../../src/actors/agentWorker.js';
import type { CallModelInput, ModelTurn } from '../../src/actors/callModel.js';

const input: CallModelInput = {
  agentId: 'agent:a:1',
  agentName: 'a',
  depth: 0,
  messages: [{ role: 'user', content: 'Hi.' }],
  header: { runId: 'run:1', id: 'agent:a:1', parentId: null, toolCallId: null },
};
const turn = (content: string): ModelTurn => ({ content, toolCalls: [], inputTokens: 1, outputTokens: 1, model: 'm', costUsd: 0, durationMs: 0 });

/** A model call that settles when the test says, with the signal it was given. */
function pendingCalls() {
  const calls: { signal: AbortSignal; resolve: (turn: ModelTurn) => void; reject: (error: unknown) => void; retrying: () => void }[] = [];
  const parts: WorkerParts = {
    callModel: (_, stop, retrying) => new Promise((resolve, reject) => calls.push({ signal: stop.signal, resolve, reject, retrying })),
    runTools: () => () => {},
  };
  return { calls, parts };
}

/** A parent that starts the worker (with the first call, as an agent does), can ask it again, and can stop it. */
function startParent(parts: WorkerParts) {
  const received: EventObject[] = [];
  const parent = setup({ actors: { worker: agentWorker(parts) } }).createMachine({
    entry: spawnChild('worker', { id: 'worker', input: { type: 'MODEL.CALL', input } satisfies WorkerRequest }),
    on: {
      ASK: { actions: ({ self }) => self.getSnapshot().children.worker?.send({ type: 'MODEL.CALL', input } satisfies WorkerRequest) },
      HALT: { actions: stopChild('worker') },
      '*': { actions: ({ event }) => void received.push(event) },
    },
  });
  const actor = createActor(parent).start();
  return { received, send: (type: 'ASK' | 'HALT') => actor.send({ type }) };
}

const settle = () => new Promise((resolve) => setImmediate(resolve));

describe('agentWorker', () => {
  it('runs the call it starts with, and each call it is asked for, answering MODEL.DONE or MODEL.FAILED', async () => {
    const { calls, parts } = pendingCalls();
    const parent = startParent(parts);
    calls[0]!.resolve(turn('first'));
    await settle();
    parent.send('ASK');
    const failure = new Error('no');
    calls[1]!.reject(failure);
    await settle();
    expect(parent.received).toEqual([
      { type: 'MODEL.DONE', output: turn('first') },
      { type: 'MODEL.FAILED', error: failure },
    ]);
  });

  it("tells its agent of a retry while the call runs, and nothing after it was stopped", async () => {
    const { calls, parts } = pendingCalls();
    const parent = startParent(parts);
    calls[0]!.retrying();
    parent.send('HALT');
    calls[0]!.retrying();
    await settle();
    expect(parent.received).toEqual([{ type: 'MODEL.RETRY' }]);
  });

  it('aborts the running call when stopped, and drops what it settles with later', async () => {
    const { calls, parts } = pendingCalls();
    const parent = startParent(parts);
    expect(calls[0]!.signal.aborted).toBe(false);
    parent.send('HALT');
    expect(calls[0]!.signal.aborted).toBe(true);
    calls[0]!.resolve(turn('too late'));
    await settle();
    expect(parent.received).toEqual([]);
  });

  it('stops the running tool batch when stopped', () => {
    let stopped = 0;
    const parts: WorkerParts = {
      callModel: () => new Promise(() => {}),
      runTools: () => () => void (stopped += 1),
    };
    const received: EventObject[] = [];
    const parent = setup({ actors: { worker: agentWorker(parts) } }).createMachine({
      entry: spawnChild('worker', { id: 'worker' }),
      on: {
        RUN: {
          actions: ({ self }) =>
            self.getSnapshot().children.worker?.send({ type: 'TOOLS.RUN', input: { agentId: 'agent:a:1', agentName: 'a', depth: 0, messages: [], toolCalls: [], header: input.header } } satisfies WorkerRequest),
        },
        HALT: { actions: stopChild('worker') },
        '*': { actions: ({ event }) => void received.push(event) },
      },
    });
    const actor = createActor(parent).start();
    actor.send({ type: 'RUN' });
    expect(stopped).toBe(0);
    actor.send({ type: 'HALT' });
    expect(stopped).toBe(1);
  });
});
