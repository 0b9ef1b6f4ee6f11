import { fromCallback, type EventObject } from 'xstate';
import { Stop } from '../abort.js';
import { AbortedError } from '../errors.js';
import type { AgentEnvironment } from './agentEnvironment.js';
import { callModel, type CallModelInput, type ModelTurn } from './callModel.js';
import { startToolBatch, type RunToolsInput, type ToolProgress } from './runTools.js';

// Made once: an Error costs a stack trace, and a stop is given on every model call that an ending agent interrupts.
const WORKER_STOPPED = new AbortedError('The agent stopped while its model call ran.');

/** What an agent asks of its worker: this turn's model call, or this turn's tool calls. */
export type WorkerRequest = { type: 'MODEL.CALL'; input: CallModelInput } | { type: 'TOOLS.RUN'; input: RunToolsInput };

/** What a worker tells its agent: the model call's end or a retry, and everything a tool batch sends back. */
export type WorkerReply =
  | { type: 'MODEL.DONE'; output: ModelTurn }
  | { type: 'MODEL.FAILED'; error: unknown }
  | { type: 'MODEL.RETRY' }
  | ToolProgress;

/** How a worker does its work: by default the runtime's `callModel` and `startToolBatch` over its environment. */
export interface WorkerParts {
  /** One model turn, aborted through `stop.signal` (made when first read); `retrying` is called before each retry's wait. */
  callModel(input: CallModelInput, stop: { readonly signal: AbortSignal }, retrying: () => void): Promise<ModelTurn>;
  /** Starts one tool batch that reports through `sendBack`; returns how to stop it. */
  runTools(input: RunToolsInput, sendBack: (event: ToolProgress) => void): () => void;
}

/**
 * The worker actor logic: a callback actor an agent invokes for as long as it runs (`worker`), which does the agent's
 * slow work on request: `MODEL.CALL` runs one model turn and answers `MODEL.DONE` or `MODEL.FAILED`; `TOOLS.RUN` runs
 * one batch of tool calls, which sends its progress and its end (`TOOLS.DONE`, `TOOLS.FAILED`) back to the agent. One
 * of each at a time, as the agent's states ask for them. Stopped (the agent ends: completed, failed, cancelled), it
 * aborts the model call and the tool calls still running through their AbortSignal, and what they settle with later
 * is dropped.
 *
 * One actor for the agent's whole life rather than a child actor per turn: in XState an actor made, started and
 * stopped costs about as much as the turn's own work (a resident trader's turn spent 24 µs of 40 in its two children).
 */
export function agentWorker(parts: WorkerParts) {
  return fromCallback<EventObject, WorkerRequest | undefined>(({ input, sendBack, receive }) => {
    let model: Stop | undefined;
    let stopTools: (() => void) | undefined;
    const reply = (event: WorkerReply) => sendBack(event);
    const handle = (request: WorkerRequest) => {
      if (request.type === 'MODEL.CALL') {
        const stop = new Stop();
        model = stop;
        const settled = (answer: WorkerReply) => {
          if (model !== stop) return; // stopped meanwhile
          model = undefined;
          reply(answer);
        };
        parts
          .callModel(request.input, stop, () => model === stop && reply({ type: 'MODEL.RETRY' }))
          .then(
            (output) => settled({ type: 'MODEL.DONE', output }),
            (error: unknown) => settled({ type: 'MODEL.FAILED', error }),
          );
      } else if (request.type === 'TOOLS.RUN') {
        stopTools = parts.runTools(request.input, reply);
      }
    };
    receive((event) => handle(event as WorkerRequest));
    if (input) handle(input);
    return () => {
      const stop = model;
      model = undefined;
      stop?.abort(WORKER_STOPPED);
      stopTools?.();
    };
  });
}

/** The worker of agents run by a runtime: model calls and tool batches over its environment. */
export function createAgentWorker(environment: AgentEnvironment) {
  return agentWorker({
    callModel: (input, stop, retrying) => callModel(environment, input, stop, retrying),
    runTools: (input, sendBack) => startToolBatch(environment, input, sendBack),
  });
}
