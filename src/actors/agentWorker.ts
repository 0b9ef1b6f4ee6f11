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
 * One agent's work in progress, as its worker does it: `MODEL.CALL` runs one model turn and answers `MODEL.DONE` or
 * `MODEL.FAILED` (and `MODEL.RETRY` before each retry's wait); `TOOLS.RUN` runs one batch of tool calls, which sends its
 * progress and its end (`TOOLS.DONE`, `TOOLS.FAILED`) back. One of each at a time, as the agent's states ask for them.
 * `stop` aborts the model call and the tool calls still running through their AbortSignal; what they settle with later
 * is dropped. The worker actor keeps one; without an inspector the runtime keeps one per running agent instead of an
 * actor (`AgentWorks`).
 */
export class AgentWork {
  private model: Stop | undefined;
  private stopTools: (() => void) | undefined;

  constructor(
    private readonly parts: WorkerParts,
    private readonly reply: (event: WorkerReply) => void,
  ) {}

  /** Starts what the agent asks for. */
  handle(request: WorkerRequest): void {
    if (request.type === 'MODEL.CALL') this.callModel(request.input);
    else if (request.type === 'TOOLS.RUN') this.runTools(request.input);
  }

  /** Aborts what still runs; nothing is sent back after this. */
  stop(): void {
    const stop = this.model;
    this.model = undefined;
    stop?.abort(WORKER_STOPPED);
    this.stopTools?.();
  }

  private callModel(input: CallModelInput): void {
    const stop = new Stop();
    this.model = stop;
    this.parts
      .callModel(input, stop, () => this.model === stop && this.reply({ type: 'MODEL.RETRY' }))
      .then(
        (output) => this.settled(stop, { type: 'MODEL.DONE', output }),
        (error: unknown) => this.settled(stop, { type: 'MODEL.FAILED', error }),
      );
  }

  /**
   * Starts a batch, and forgets how to stop it once it has ended (its end says so before the agent hears of it, so a
   * next batch the agent starts at once is kept): an ended batch has nothing to stop, and kept until the next batch
   * (a resident's next turn) it would keep its calls, stop and closures alive across the turns of every other agent.
   */
  private runTools(input: RunToolsInput): void {
    let stop: (() => void) | undefined;
    let ended = false;
    stop = this.parts.runTools(input, (event) => {
      if (event.type === 'TOOLS.DONE' || event.type === 'TOOLS.FAILED') {
        ended = true;
        if (stop !== undefined && this.stopTools === stop) this.stopTools = undefined;
      }
      this.reply(event);
    });
    // A batch that ended before it was handed back (its parts reported its end at once) has nothing to stop.
    if (!ended) this.stopTools = stop;
  }

  private settled(stop: Stop, answer: WorkerReply): void {
    if (this.model !== stop) return; // stopped meanwhile
    this.model = undefined;
    this.reply(answer);
  }
}

/**
 * The worker actor logic: a callback actor an agent starts when it begins running (`worker`), which does the agent's
 * slow work on request (an {@link AgentWork}). Stopped (the agent ends: completed, failed, cancelled), it stops that
 * work.
 *
 * One actor for the agent's whole life rather than a child actor per turn: in XState an actor made, started and
 * stopped costs about as much as the turn's own work (a resident trader's turn spent 24 µs of 40 in its two children).
 */
export function agentWorker(parts: WorkerParts) {
  return fromCallback<EventObject, WorkerRequest | undefined>(({ input, sendBack, receive }) => {
    const work = new AgentWork(parts, sendBack);
    receive((event) => work.handle(event as WorkerRequest));
    if (input) work.handle(input);
    return () => work.stop();
  });
}

/**
 * The work of every running agent of a runtime that no inspector watches, kept by agent id: an agent's worker without
 * an actor. An actor costs an agent about 10 KB and two events per turn in XState; what an inspector would draw as the
 * worker (`MODEL.CALL`, `TOOLS.RUN` to it, its replies back) is here a call and the agent's own events.
 */
export class AgentWorks {
  private readonly works = new Map<string, AgentWork>();

  constructor(private readonly parts: WorkerParts) {}

  /** Starts what the agent `id` asks for; replies go to `agent`. */
  handle(id: string, agent: { send(event: WorkerReply): void }, request: WorkerRequest): void {
    let work = this.works.get(id);
    if (work === undefined) {
      work = new AgentWork(this.parts, (event) => agent.send(event));
      this.works.set(id, work);
    }
    work.handle(request);
  }

  /** The agent `id` stopped running: aborts its work and forgets it. */
  stop(id: string): void {
    const work = this.works.get(id);
    if (work === undefined) return;
    this.works.delete(id);
    work.stop();
  }
}

/** How the runtime's agents do their work: model calls and tool batches over its environment. */
export function workerParts(environment: AgentEnvironment): WorkerParts {
  return {
    callModel: (input, stop, retrying) => callModel(environment, input, stop, retrying),
    runTools: (input, sendBack) => startToolBatch(environment, input, sendBack),
  };
}

/** The worker of agents run by a runtime: model calls and tool batches over its environment. */
export function createAgentWorker(environment: AgentEnvironment) {
  return agentWorker(workerParts(environment));
}
