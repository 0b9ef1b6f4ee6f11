// The agent's worker on its own: agentWorker(parts) with parts written here, spawned by a tiny parent machine that
// records what the worker sends back.
import { describe, expect, it } from 'vitest';
import { createActor, setup, spawnChild, stopChild, type EventObject } from 'xstate';
import { AgentWorks, agentWorker, type WorkerParts, type WorkerReply, type WorkerRequest } from '../../src/actors/agentWorker.js';
import type { CallModelInput, ModelTurn } from '../../src/actors/callModel.js';
import type { ToolProgress } from '../../src/actors/runTools.js';

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

// Without an inspector the runtime keeps each running agent's work by id instead of a worker actor.
describe('AgentWorks', () => {
  const call: WorkerRequest = { type: 'MODEL.CALL', input };
  const agent = () => {
    const received: WorkerReply[] = [];
    return { received, send: (event: WorkerReply) => void received.push(event) };
  };
  /** Two agents, each waiting for its model call (calls[0] is a's, calls[1] b's). */
  const twoThinking = () => {
    const { calls, parts } = pendingCalls();
    const works = new AgentWorks(parts);
    const [a, b] = [agent(), agent()];
    works.handle('agent:a:1', a, call);
    works.handle('agent:b:1', b, call);
    return { calls, works, a, b };
  };

  it("sends each agent its own model call's end, and a retry while it runs", async () => {
    const { calls, works, a, b } = twoThinking();
    calls[0]!.retrying();
    calls[1]!.reject(new Error('down'));
    calls[0]!.resolve(turn('one'));
    await settle();
    expect(a.received).toEqual([{ type: 'MODEL.RETRY' }, { type: 'MODEL.DONE', output: turn('one') }]);
    expect(b.received).toEqual([{ type: 'MODEL.FAILED', error: new Error('down') }]);
    // The next turn of the same agent is asked of the same work.
    works.handle('agent:a:1', a, call);
    calls[2]!.resolve(turn('two'));
    await settle();
    expect(a.received.at(-1)).toEqual({ type: 'MODEL.DONE', output: turn('two') });
  });

  it('aborts only the stopped agent\'s call, drops what it settles with later, and forgets it', async () => {
    const { calls, works, a, b } = twoThinking();
    works.stop('agent:a:1');
    expect(calls.map((pending) => pending.signal.aborted)).toEqual([true, false]);
    calls[0]!.retrying();
    calls[0]!.resolve(turn('too late'));
    calls[1]!.resolve(turn('in time'));
    await settle();
    expect(a.received).toEqual([]);
    expect(b.received).toEqual([{ type: 'MODEL.DONE', output: turn('in time') }]);
    works.stop('agent:a:1'); // stopping twice, or an agent with no work, does nothing
    works.stop('agent:c:1');
  });

  it("stops a running tool batch with its agent, and passes the batch's events to the agent", () => {
    let stopped = 0;
    const parts: WorkerParts = {
      callModel: () => new Promise(() => {}),
      runTools: (_, sendBack) => {
        sendBack({ type: 'TOOL.WAITING', callId: 'c1' });
        return () => void (stopped += 1);
      },
    };
    const works = new AgentWorks(parts);
    const a = agent();
    works.handle('agent:a:1', a, { type: 'TOOLS.RUN', input: { agentId: 'agent:a:1', agentName: 'a', depth: 0, messages: [], toolCalls: [], header: input.header } });
    expect(a.received).toEqual([{ type: 'TOOL.WAITING', callId: 'c1' }]);
    expect(stopped).toBe(0);
    works.stop('agent:a:1');
    expect(stopped).toBe(1);
  });

  it('forgets a batch that has ended, yet stops the next one its agent starts as it hears of the end', () => {
    const stops: string[] = [];
    const ends = new Map<string, (event: ToolProgress) => void>();
    const batch = (agentId: string) => ({ agentId, agentName: 'a', depth: 0, messages: [], toolCalls: [], header: input.header });
    const parts: WorkerParts = {
      callModel: () => new Promise(() => {}),
      runTools: (tools, sendBack) => {
        const name = `${tools.agentId} batch ${[...ends.keys()].filter((key) => key.startsWith(tools.agentId)).length + 1}`;
        ends.set(name, sendBack);
        return () => void stops.push(name);
      },
    };
    const works = new AgentWorks(parts);
    const done: ToolProgress = { type: 'TOOLS.DONE', messages: [], ended: 0, failed: 0 };
    // Agent a waits after its batch; agent b starts its next batch as it hears of the first one's end.
    const a = { send: () => {} };
    const b = { send: (event: WorkerReply) => event.type === 'TOOLS.DONE' && ends.size < 3 && works.handle('b', b, { type: 'TOOLS.RUN', input: batch('b') }) };
    works.handle('a', a, { type: 'TOOLS.RUN', input: batch('a') });
    works.handle('b', b, { type: 'TOOLS.RUN', input: batch('b') });
    ends.get('a batch 1')!(done);
    ends.get('b batch 1')!(done);
    works.stop('a');
    works.stop('b');
    expect(stops).toEqual(['b batch 2']); // nothing kept of an ended batch, to be stopped with its agent
  });

  it('takes a batch that reports its end before it is handed back, and keeps nothing of it to stop', () => {
    let stopped = 0;
    const parts: WorkerParts = {
      callModel: () => new Promise(() => {}),
      runTools: (_, sendBack) => {
        sendBack({ type: 'TOOLS.DONE', messages: [], ended: 0, failed: 0 });
        return () => void (stopped += 1);
      },
    };
    const works = new AgentWorks(parts);
    const received: WorkerReply[] = [];
    works.handle('a', { send: (event) => void received.push(event) }, { type: 'TOOLS.RUN', input: { agentId: 'a', agentName: 'a', depth: 0, messages: [], toolCalls: [], header: input.header } });
    works.stop('a');
    expect(received).toEqual([{ type: 'TOOLS.DONE', messages: [], ended: 0, failed: 0 }]);
    expect(stopped).toBe(0);
  });
});
