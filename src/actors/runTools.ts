import { fromCallback, type EventObject } from 'xstate';
import { z } from 'zod';
import { Stop, whenAborted } from '../abort.js';
import { sleep, type TroupeClock } from '../clock.js';
import { AbortedError, ToolTimeoutError, errorMessage } from '../errors.js';
import { errorInfo, type ErrorInfo } from '../failure.js';
import { stampEvent } from '../machines/agentContext.js';
import type { AgentNotes } from '../memory/NoteStore.js';
import type { Message } from '../messaging/Message.js';
import type { ChatMessage, ToolCall } from '../models/Model.js';
import type { Tool, ToolContext } from '../tools/defineTool.js';
import { categoryOf, decideApproval, mayNeedApproval } from '../tools/toolApproval.js';
import { executePlan } from '../tools/executePlan.js';
import { explainPlan } from '../tools/explainPlan.js';
import { schedule, type PlannedCall, type ToolPlan } from '../tools/schedule.js';
import { hasPlainMetadata, isToolReply } from '../tools/toolReply.js';
import { isToolSignal } from '../tools/toolSignal.js';
import type { AgentEnvironment, Caller, ResolvedAgent, ToolRefusal } from './agentEnvironment.js';

/** What one batch of tool calls needs. */
export interface RunToolsInput {
  agentId: string;
  agentName: string;
  /** The agent's depth, for the delegation limit. */
  depth: number;
  /** The conversation so far; its last message is the assistant message with these calls. */
  messages: readonly ChatMessage[];
  toolCalls: readonly ToolCall[];
  /** The header of the agent's events: its run, its parent and the parent's tool call. */
  header: { runId: string; id: string; parentId: string | null; toolCallId: string | null };
}

/** A tool message: the one answer to one tool call. */
export type ToolMessage = Extract<ChatMessage, { role: 'tool' }>;

/**
 * What happened to one tool call, as the event announces it without its header: it started (`tool.call`), was refused
 * (`tool.denied`), or ended (`tool.result`). Made as the event's body at once, so announcing it copies nothing more.
 */
export type ToolNote =
  | { type: 'tool.call'; callId: string; tool: string; arguments: string }
  | { type: 'tool.denied'; callId: string; tool: string; reason: ToolRefusal['reason']; error: string }
  | { type: 'tool.result'; callId: string; tool: string; status: 'ok' | 'error'; durationMs: number; error?: string; content?: string; waiting?: true };

/**
 * The events `runTools` sends back to its agent. Calls starting and ending are not among them: `runTools` announces
 * those itself (`tool.call`, `tool.denied`, `tool.result`, through `environment.announce`), and the agent counts them
 * from the batch's end, so a quick call costs its agent no step of its own.
 */
export type ToolProgress =
  /** A message a tool sends, passed out through the agent (only when the system is inspected). */
  | { type: 'MESSAGE.OUT'; message: Message }
  | { type: 'TOOL.WAITING'; callId: string }
  | { type: 'TOOL.RESUMED'; callId: string }
  | ToolsDone
  | { type: 'TOOLS.FAILED'; error: ErrorInfo };

/**
 * The batch ended. `waiting`: some calls wait for messages (their tool messages are filled in when the agent wakes);
 * `finish`: a call ended the agent, with this answer if it gave one.
 */
export interface ToolsDone {
  type: 'TOOLS.DONE';
  messages: ToolMessage[];
  /** Calls that ended, and how many of them with an error. */
  ended: number;
  failed: number;
  waiting?: boolean;
  finish?: { answer?: string };
}

/** A call that passed every check and may run. */
interface ReadyCall {
  call: ToolCall;
  tool: Tool;
  args: unknown;
  planned: PlannedCall;
}

/** What one batch shares: the agent, its environment and clock, and the way back to the agent. */
interface Batch {
  agent: ResolvedAgent;
  input: RunToolsInput;
  environment: AgentEnvironment;
  clock: TroupeClock;
  /**
   * The batch's stop: an AbortSignal of its own, or a promise that rejects when it stops (`signal.promise`), is made
   * only if something asks for it (a call's own signal, an approval that waits).
   */
  signal: Stop;
  /** Announces a call's note (stamped `at`, when the caller has just read the clock; else now) or sends progress. */
  send: (event: ToolNote | ToolProgress, at?: number) => void;
  /** Set by a call that waits for messages. */
  waiting?: boolean;
  /** Set by a call that ends the agent. */
  finish?: { answer?: string };
  /** Set once the batch has sent its end (`TOOLS.DONE` or `TOOLS.FAILED`). */
  finished?: boolean;
}

// Abort reasons made once: an Error costs a stack trace, and these are given on every ordinary end.
const AGENT_STOPPED = new AbortedError('The agent stopped while its tools ran.');
const CALL_ENDED = new AbortedError('The tool call ended.');

/**
 * Makes the `runTools` actor logic: runs one turn's tool calls and sends back progress and, at the end, one tool
 * message per call, in the order of the calls. A call to a tool the agent may not use (not on its list, or a
 * delegation tool past the depth limit) is refused with a `tool.denied`; a call whose arguments are not JSON or
 * fail the tool's schema, that throws, or that times out becomes an error message the model sees; nothing here
 * fails the agent. Valid calls run in the planner's order (reads side by side, conflicting writes one after
 * another). Stopping the actor aborts every running tool through its AbortSignal.
 */
export function createRunTools(environment: AgentEnvironment) {
  return fromCallback<EventObject, RunToolsInput>(({ input, sendBack }) => startToolBatch(environment, input, sendBack));
}

/**
 * Starts one batch of tool calls (see {@link createRunTools}): what the agent's worker runs for `TOOLS.RUN`. Progress
 * and the end go to `sendBack`; the function returned stops the batch (aborting the calls that still run).
 */
export function startToolBatch(environment: AgentEnvironment, input: RunToolsInput, sendBack: (event: ToolProgress) => void): () => void {
  const stop = new Stop();
  const { clock } = environment;
  const count = { ended: 0, failed: 0 };
  const send = (event: ToolNote | ToolProgress, at?: number) => {
    if (stop.aborted) return;
    if (event.type === 'tool.call' || event.type === 'tool.denied' || event.type === 'tool.result') {
      if (event.type === 'tool.result') {
        count.ended += 1;
        if (event.status === 'error') count.failed += 1;
      }
      environment.announce(stampEvent(input.header, at ?? clock.now(), event));
      // Progress for the idle timer; the batch's last call ends the batch, which is a step of the agent anyway.
      if (event.type === 'tool.result' && count.ended < input.toolCalls.length) environment.progressed?.(input.agentId);
      return;
    }
    sendBack(event);
  };
  const batch: Partial<Batch> = { input, environment, clock, signal: stop, send };
  // The calls start a microtask later, after the agent's step that asked for them. (Its ends are module functions,
  // not closures named here: tsx, which runs the tests and the examples, names each such closure as it is made.)
  queueMicrotask(() => {
    let running: Promise<ToolMessage[]>;
    try {
      batch.agent = environment.resolve(input.agentName, input.agentId);
      running = runBatch(batch as Batch);
    } catch (error) {
      batchFailed(batch, error);
      return;
    }
    running.then(
      (messages) => batchEnded(batch, count, messages),
      (error: unknown) => batchFailed(batch, error),
    );
  });
  // Stopped while calls run: abort them. A batch that has ended has nothing left to abort (each call's own signal
  // was aborted as it ended), so its signal is left alone: an abort costs an event dispatch per batch.
  return () => {
    if (!batch.finished) stop.abort(AGENT_STOPPED);
  };
}

/** A batch's calls have all ended: its `TOOLS.DONE`, with what they counted and signalled. */
function batchEnded(batch: Partial<Batch>, count: { ended: number; failed: number }, messages: ToolMessage[]): void {
  // Finished before it says so: the agent stops this batch while it handles the end.
  batch.finished = true;
  const done: ToolsDone = { type: 'TOOLS.DONE', messages, ended: count.ended, failed: count.failed };
  if (batch.waiting) done.waiting = true;
  if (batch.finish) done.finish = batch.finish;
  batch.send!(done);
}

/** A batch that could not run (not one call: those become error results): its `TOOLS.FAILED`. */
function batchFailed(batch: Partial<Batch>, error: unknown): void {
  batch.finished = true;
  batch.send!({ type: 'TOOLS.FAILED', error: errorInfo(error, 'system') });
}

/** Checks and plans the batch's calls, then runs them; its messages, in the order of the calls, once all have ended. */
function runBatch(batch: Batch): Promise<ToolMessage[]> {
  const { input, send } = batch;
  const messages: ToolMessage[] = new Array(input.toolCalls.length);
  const ready: { index: number; ready: ReadyCall }[] = [];
  input.toolCalls.forEach((call, index) => {
    const checked = check(batch, call);
    if ('ready' in checked) {
      ready.push({ index, ready: checked.ready });
      return;
    }
    send({ type: 'tool.call', callId: call.id, tool: call.name, arguments: call.arguments });
    const { refusal } = checked;
    if (refusal) send({ type: 'tool.denied', callId: call.id, tool: call.name, reason: refusal.reason, error: refusal.error });
    send({ type: 'tool.result', callId: call.id, tool: call.name, status: 'error', durationMs: 0, error: checked.error });
    messages[index] = { role: 'tool', toolCallId: call.id, content: `Error: ${checked.error}`, isError: true };
  });
  const plan = schedule(ready.map(({ ready: r }) => r.planned));
  if (ready.length > 1) announcePlan(batch, ready, plan);
  // Each call puts its message in its place itself: no async function per call waits here for it.
  // Each call's checked parts (its arguments, its plan) are let go as it starts: a call that waits is not kept whole.
  const starting: ({ index: number; ready: ReadyCall } | undefined)[] = ready;
  const start = (position: number, settled: () => void) => {
    const entry = starting[position]!;
    starting[position] = undefined;
    runOne(batch, entry, messages, settled);
  };
  const done = executePlan(plan, start, { maxConcurrency: batch.agent.maxToolConcurrency, signal: batch.signal });
  // The batch's stop ends it at once, heard here once rather than by every call: a wide turn would otherwise hang a
  // reaction per call on one stop promise, kept (with the call's result) until the batch ends. A call still running
  // when the batch stops ends on its own signal; what it says then goes nowhere (`send` is closed). The stop is heard
  // through its listener, not raced as a promise: a race made three promises a batch, and the stop's own two.
  return new Promise<ToolMessage[]>((resolve, reject) => {
    batch.signal.onStop(reject);
    done.then(() => (batch.signal.aborted ? reject(new AbortedError()) : resolve(messages)), reject); // a plan that cannot run fails the batch
  });
}

/**
 * Announces the turn's plan (`tool.plan`) before its calls run. Only for more than one call that may run (a single
 * call orders nothing, and most turns, a worker's, have one), and only when someone watches the events: nothing in
 * the runtime reads it, and its explanation (the stages, and why each call waits, in words) cost a trader's turn of
 * two calls about 2 KB.
 */
function announcePlan({ agent, input, environment, clock, signal }: Batch, ready: readonly { ready: ReadyCall }[], plan: ToolPlan): void {
  if (signal.aborted || !environment.watched()) return;
  const calls = ready.map((entry) => entry.ready.planned);
  const ids = ready.map((entry) => entry.ready.call.id);
  const explained = explainPlan(calls, plan, ids, agent.maxToolConcurrency);
  environment.announce(stampEvent(input.header, clock.now(), { type: 'tool.plan', ...explained }));
}

/** Checks one call: it may run, or the reason it cannot (a refusal when the agent may not use the tool). */
function check(
  { agent, input, environment }: Batch,
  call: ToolCall,
): { ready: ReadyCall } | { error: string; refusal?: ToolRefusal } {
  const found = environment.toolFor(agent, input.depth, call.name);
  if (!('execute' in found)) return { error: found.error, refusal: found };
  const tool = found;
  let raw: unknown;
  try {
    raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
  } catch (error) {
    return {
      error: `The arguments of "${call.name}" are not valid JSON (${errorMessage(error)}). Send one JSON object that matches the tool's parameters.`,
    };
  }
  const parsed = tool.parameters.safeParse(raw);
  if (!parsed.success) {
    return { error: `The arguments of "${call.name}" do not match its parameters:\n${z.prettifyError(parsed.error)}` };
  }
  let planned: PlannedCall;
  try {
    planned = environment.plan(tool, parsed.data);
  } catch {
    planned = { kind: tool.kind }; // unknown targets: the planner treats the call as touching everything
  }
  return { ready: { call, tool, args: parsed.data, planned } };
}

/**
 * A call's tool message made before its end is handled: a refused call's, or an interactive call's (whose end is
 * announced before the agent hears that the person has answered). Placed as it is.
 */
class Made {
  constructor(readonly message: ToolMessage) {}
}

/**
 * Runs one call that passed its checks, puts its tool message at its index in `messages`, then calls `settled`. A
 * promise chain rather than an async function: it made two promises more a call. The tool's output is handled in the
 * one reaction that places its message and tells the plan (no reaction of its own to make the message first, no promise
 * made for the plan to hear the end), and that reaction keeps only what it needs:
 * the call's context (and the delegation, messaging and notes it holds) is made where no closure sees it, so while a
 * call waits (for a sub-agent, say) it is not kept, and a wide turn's waiting calls are not copied by every young
 * collection meanwhile (2.1 KB a waiting delegation, 1.0 KB without them).
 */
function runOne(batch: Batch, entry: { index: number; ready: ReadyCall }, messages: ToolMessage[], settled: () => void): void {
  const { index, ready } = entry;
  const { call, tool } = ready;
  const { environment, clock, send } = batch;
  const started = clock.now();
  send({ type: 'tool.call', callId: call.id, tool: call.name, arguments: call.arguments }, started);
  const own = new CallSignal(batch, tool.timeoutMs);
  // Guarded inline, not with `promiseFrom`: its closure, made for every call, cost about 80 bytes.
  let output: Promise<unknown>;
  try {
    output = mayNeedApproval(tool, environment.toolPolicy)
      ? approvedOutput(batch, ready, own, started)
      : execute(batch, ready, own, started, new CallContext(batch, own, call.id) as unknown as ToolContext);
  } catch (error) {
    output = Promise.reject(error);
  }
  // The plan hears that the call settled from this reaction, not from a promise of its own made on it.
  void output.then(
    (value) => {
      try {
        const made = value instanceof Made ? value.message : callEnded(batch, call, value, started);
        own.end(); // clears its timeout timer
        messages[index] = made;
      } catch (error) {
        callFailed(batch, call, own, started, error, messages, index);
      } finally {
        settled();
      }
    },
    (error: unknown) => {
      try {
        callFailed(batch, call, own, started, error, messages, index);
      } finally {
        settled();
      }
    },
  );
}

/** A call that threw, was rejected or timed out: its `tool.result` with the error, and an error message in its place. */
function callFailed(batch: Batch, call: ToolCall, own: CallSignal, started: number, error: unknown, messages: ToolMessage[], index: number): void {
  const { environment, clock, send } = batch;
  environment.dropWait(batch.input.agentId, call.id);
  const text = errorMessage(error);
  send({ type: 'tool.result', callId: call.id, tool: call.name, status: 'error', durationMs: clock.now() - started, error: text });
  own.end();
  messages[index] = { role: 'tool', toolCallId: call.id, content: `Error: ${text}`, isError: true };
}

/** A call that may need approval: its output once it is approved and has run, or its refusal's message. */
function approvedOutput(batch: Batch, ready: ReadyCall, own: CallSignal, started: number): Promise<unknown> {
  const context = new CallContext(batch, own, ready.call.id) as unknown as ToolContext;
  return approval(batch, ready, context).then((refused) =>
    refused === undefined ? execute(batch, ready, own, started, context) : new Made(deniedMessage(batch, ready.call, refused, started)),
  );
}

/** The message of a call a policy or a person refused, its `tool.denied` and `tool.result` announced. */
function deniedMessage({ clock, send }: Batch, call: ToolCall, refused: string, started: number): ToolMessage {
  send({ type: 'tool.denied', callId: call.id, tool: call.name, reason: 'denied', error: refused });
  send({ type: 'tool.result', callId: call.id, tool: call.name, status: 'error', durationMs: clock.now() - started, error: refused });
  return { role: 'tool', toolCallId: call.id, content: `Error: ${refused}`, isError: true };
}

/**
 * Runs one approved call within its time limit, if it has one: its tool's output (or, for an interactive call, its
 * message, see {@link Made}). The context is passed on and held by no closure here (see {@link runOne}).
 */
function execute(batch: Batch, ready: ReadyCall, own: CallSignal, started: number, context: ToolContext): Promise<unknown> {
  const { call, tool, args } = ready;
  const { clock, send, environment } = batch;
  if (tool.interactive) send({ type: 'TOOL.WAITING', callId: call.id });
  const { timeoutMs } = tool;
  // The time limit is set before the tool starts (which is at once): a timer the tool sets for the same instant fires
  // after it, so a call that takes its whole limit times out.
  const limit = timeoutMs === undefined ? undefined : timeLimit(clock, tool.name, timeoutMs, own);
  const running =
    tool.realTime === true && environment.inRealTime
      ? inRealTime(environment, tool, args, context, own)
      : startTool(tool, args, context); // at once: a wide turn already paces its calls (see `executePlan`)
  // The batch's stop is raced by the batch (`runBatch`); only a time limit is raced here.
  const output = limit === undefined ? running : Promise.race([running, limit]);
  if (!tool.interactive) return output;
  // Its end announced before the agent hears that the person has answered (`TOOL.RESUMED`), whatever the end.
  return output.then((value) => new Made(callEnded(batch, call, value, started))).finally(() => send({ type: 'TOOL.RESUMED', callId: call.id }));
}

/** Starts a tool at once: its output as a promise, or a rejection with what it threw. */
function startTool(tool: Tool, args: unknown, context: ToolContext): Promise<unknown> {
  try {
    return Promise.resolve(tool.execute(args as never, context));
  } catch (error) {
    return Promise.reject(error);
  }
}

/** A realTime call may wait behind other agents' calls: one stopped or timed out meanwhile never starts. */
function inRealTime(environment: AgentEnvironment, tool: Tool, args: unknown, context: ToolContext, own: CallSignal): Promise<unknown> {
  return environment.inRealTime!(() => {
    if (own.aborted) throw new AbortedError('The tool call was stopped before it started.');
    return tool.execute(args as never, context);
  });
}

/** A call's time limit: rejects with a `ToolTimeoutError` (aborting the call's signal) once `timeoutMs` pass. */
function timeLimit(clock: TroupeClock, name: string, timeoutMs: number, own: CallSignal): Promise<never> {
  return sleep(clock, timeoutMs, own.signal).then(() => {
    const timeout = new ToolTimeoutError(name, timeoutMs);
    own.abort(timeout);
    throw timeout;
  });
}

/** A call's tool returned `output`: what it signals is noted in the batch, its result announced, its message made. */
function callEnded(batch: Batch, call: ToolCall, output: unknown, started: number): ToolMessage {
  const { input, environment, clock, send } = batch;
  if (isToolSignal(output)) {
    if (output.kind === 'wait') batch.waiting = true;
    else batch.finish = output.answer === undefined ? {} : { answer: output.answer };
  }
  const waits = isToolSignal(output) && output.kind === 'wait';
  // A tool that registered a wait but did not return its signal: the wait would hold the agent for ever.
  if (!waits) environment.dropWait(input.agentId, call.id);
  const message = toMessage(call.id, output);
  const ended = clock.now();
  const durationMs = ended - started;
  send(
    waits
      ? // Its outcome comes with its `tool.wait_ended`, when the agent reads it.
        { type: 'tool.result', callId: call.id, tool: call.name, status: 'ok', durationMs, waiting: true }
      : message.isError === true
        ? { type: 'tool.result', callId: call.id, tool: call.name, status: 'error', durationMs, error: message.content }
        : { type: 'tool.result', callId: call.id, tool: call.name, status: 'ok', durationMs, content: message.content },
    ended,
  );
  return message;
}

/**
 * What a running tool knows of its call (its {@link ToolContext}), one per call. Every part is the instance's own and
 * enumerable, as an object literal's would be: a tool may pass on a copy (`{ ...context, signal }`) or take parts out of
 * it. Only the call's signal is made on first use, by a getter that is the same function for every call (defined once,
 * in the static block), so every context shares one hidden class: an AbortController and its link to the batch cost
 * more than the rest of the call's bookkeeping, and most tools never read it. The services are plain fields, made with
 * the context: the delegation and messaging of one small caller (two small objects that make nothing until a method is
 * called), and the notes, which ask the store for the caller's view on first use. A getter defined on each context
 * cost about 0.25 µs (four of them were most of a call's context), more than the objects.
 */
class CallContext {
  readonly agentId: string;
  readonly agentName: string;
  readonly toolCallId: string;
  readonly clock: TroupeClock;
  readonly messages: readonly ChatMessage[];
  /** The run's blackboard: the same object for every call. */
  readonly blackboard: ToolContext['blackboard'];
  /** A function of its own (a tool may take it out of the context and call it alone). */
  readonly announce: ToolContext['announce'];
  readonly delegation: ToolContext['delegation'];
  readonly messaging: ToolContext['messaging'];
  readonly notes: ToolContext['notes'];
  // Declared only: defined in the constructor, after the fields above (the order an object literal of them had).
  declare readonly signal: AbortSignal;
  // A private field of the language: a tool that logs or serialises its context sees only what ToolContext names.
  readonly #own: CallSignal;

  static readonly #signal: PropertyDescriptor = {
    get(this: CallContext) {
      return this.#own.signal;
    },
    enumerable: true,
    configurable: true,
  };

  constructor(batch: Batch, own: CallSignal, toolCallId: string) {
    this.#own = own;
    const { environment, input, clock } = batch;
    this.agentId = input.agentId;
    this.agentName = batch.agent.name;
    this.toolCallId = toolCallId;
    this.clock = clock;
    this.messages = input.messages;
    this.blackboard = environment.blackboard;
    this.announce = (event) => environment.announce(stampEvent(input.header, clock.now(), event));
    const caller = new BatchCaller(batch, toolCallId, own);
    this.delegation = environment.delegation(caller);
    this.messaging = environment.messaging(caller);
    this.notes = new CallNotes(batch, own);
    Object.defineProperty(this, 'signal', CallContext.#signal);
  }
}

/**
 * A call's notes ({@link ToolContext.notes}): the store's view for the calling agent, asked for on the first save or
 * search (with the call's signal, which is then made), and kept for the call. Shaped as the store's view is: `save`
 * and `search` are functions of its own (a tool may take them out and call them alone), and nothing else shows.
 */
class CallNotes implements AgentNotes {
  readonly save: AgentNotes['save'];
  readonly search: AgentNotes['search'];
  #notes: AgentNotes | undefined;
  readonly #batch: Batch;
  readonly #own: CallSignal;

  constructor(batch: Batch, own: CallSignal) {
    this.#batch = batch;
    this.#own = own;
    // Assigned here rather than as field initialisers: tsx (which runs the tests and the examples) names a function
    // written as an initialiser with an `Object.defineProperty` call each time one is made, two per tool call.
    this.save = (...args) => this.#made().save(...args);
    this.search = (...args) => this.#made().search(...args);
  }

  #made(): AgentNotes {
    const { agent, input, environment } = this.#batch;
    return (this.#notes ??= environment.notes.forAgent({ agentName: agent.name, agentId: input.agentId, model: agent.model, signal: this.#own.signal }));
  }
}

/** The agent a tool call runs for, as delegation and messaging see it (a {@link Caller}). */
class BatchCaller implements Caller {
  readonly agentId: string;
  readonly agentName: string;
  readonly depth: number;
  readonly messages: readonly ChatMessage[];
  private sent: ((message: Message) => boolean) | undefined;

  constructor(
    private readonly batch: Batch,
    readonly toolCallId: string,
    /** The call's stop: its own signal's if it has one, else the batch's, with nothing made. */
    readonly stop: CallSignal,
  ) {
    this.agentId = batch.input.agentId;
    this.agentName = batch.agent.name;
    this.depth = batch.input.depth;
    this.messages = batch.input.messages;
  }

  // The call's own signal is made only if the delegation or messaging reads it (a publish never does).
  get signal(): AbortSignal {
    return this.stop.signal;
  }

  /** Through the agent while its batch runs; after that the caller must send another way (false). */
  get relay(): (message: Message) => boolean {
    if (this.sent) return this.sent;
    const { batch } = this;
    this.sent = (message) => {
      if (batch.signal.aborted || batch.finished) return false;
      batch.send({ type: 'MESSAGE.OUT', message });
      return true;
    };
    return this.sent;
  }
}

/**
 * Whether one call may run: what the runtime's `toolPolicy` and the tool's `needsApproval` decide, and a person's
 * answer when they ask one (the agent waits in `waitingForPerson` meanwhile). Undefined when it may; else the reason
 * the model is given. The batch's stop ends the wait (the request is withdrawn).
 */
async function approval(batch: Batch, { call, tool, args, planned }: ReadyCall, context: ToolContext): Promise<string | undefined> {
  const { agent, input, environment, clock, send } = batch;
  const category = categoryOf(tool);
  const request = { caller: { id: input.agentId, name: agent.name, depth: input.depth }, tool: tool.name, category, kind: planned.kind, arguments: args, toolCallId: call.id };
  const outcome = await Promise.race([decideApproval(tool, request, context, environment.toolPolicy), batch.signal.promise]);
  if ('run' in outcome) return outcome.run ? undefined : outcome.reason;
  if (!environment.askPerson) return `${tool.name} needs a person's approval, and this runtime has no one to ask.`;
  send({ type: 'TOOL.WAITING', callId: call.id });
  let answer: Awaited<ReturnType<NonNullable<AgentEnvironment['askPerson']>>>;
  try {
    const task = `${tool.name} ${call.arguments}`;
    const ask = { header: input.header, agentName: agent.name, tool: tool.name, category, callId: call.id, task, risk: outcome.risk, ...(outcome.reason === undefined ? {} : { reason: outcome.reason }) };
    answer = await environment.askPerson(ask, batch.signal.promise);
  } finally {
    send({ type: 'TOOL.RESUMED', callId: call.id });
  }
  const at = clock.now();
  if (answer.approved) {
    environment.announce(stampEvent(input.header, at, { type: 'approval.granted', requestId: answer.requestId }));
    return undefined;
  }
  environment.announce(stampEvent(input.header, at, { type: 'approval.denied', requestId: answer.requestId, reason: answer.reason }));
  return `A person denied the call of ${tool.name}: ${answer.reason}`;
}

/**
 * One call's AbortSignal: its own, so what a tool adds to it (listeners, timers) stays with that call and no signal
 * gathers a listener per call of a wide turn. It is made when the tool first reads it (most never do) or when the
 * tool has a time limit, follows the batch's stop through the batch's one abort promise (no listener on the batch's
 * signal), and is aborted when the call ends (which also clears its timeout timer). It is also the call's stop as a
 * caller reads it (`aborted`, `promise`): its own signal's if it has one, else the batch's, with nothing made.
 */
class CallSignal {
  private controller: AbortController | undefined;

  constructor(
    private readonly batch: Batch,
    private readonly timeoutMs: number | undefined,
  ) {}

  get signal(): AbortSignal {
    return this.made().signal;
  }

  get aborted(): boolean {
    return (this.controller?.signal ?? this.batch.signal).aborted;
  }

  get promise(): Promise<never> {
    return this.controller ? whenAborted(this.controller.signal) : this.batch.signal.promise;
  }

  /** True when the call can stop only with its batch (its agent's end): it has no time limit of its own. */
  get withAgent(): boolean {
    return this.timeoutMs === undefined;
  }

  abort(reason: unknown): void {
    this.made().abort(reason);
  }

  end(): void {
    if (this.controller && !this.controller.signal.aborted) this.controller.abort(CALL_ENDED);
  }

  private made(): AbortController {
    if (this.controller) return this.controller;
    const linked = new AbortController();
    const { batch } = this;
    batch.signal.promise.catch(() => linked.abort(batch.signal.reason));
    this.controller = linked;
    return linked;
  }
}

/** A tool's output as its tool message: a {@link toolReply} keeps its error flag and metadata. */
function toMessage(toolCallId: string, output: unknown): ToolMessage {
  // A waiting call's content is filled in when its messages come; a finishing call says so.
  if (isToolSignal(output)) return { role: 'tool', toolCallId, content: output.kind === 'wait' ? '' : 'Finished.' };
  if (isToolReply(output)) {
    if (hasPlainMetadata(output)) {
      // Made for this reply by troupe's own tool and held by nothing else: kept as it is, not copied.
      const { content, isError } = output;
      const metadata = output.metadata as Record<string, unknown>;
      return isError ? { role: 'tool', toolCallId, content, isError, metadata } : { role: 'tool', toolCallId, content, metadata };
    }
    const metadata = output.metadata === undefined ? undefined : plainMetadata(output.metadata);
    if (metadata !== undefined && 'error' in metadata) return { role: 'tool', toolCallId, content: `Error: ${metadata.error}`, isError: true };
    return {
      role: 'tool',
      toolCallId,
      content: output.content,
      ...(output.isError ? { isError: true } : {}),
      ...(metadata === undefined ? {} : { metadata: metadata.value }),
    };
  }
  const text = render(output);
  return typeof text === 'string' ? { role: 'tool', toolCallId, content: text } : { role: 'tool', toolCallId, content: `Error: ${text.error}`, isError: true };
}

/**
 * A tool's output as the text the model reads: text as it is, anything else as JSON. What JSON cannot hold (a cycle, a
 * BigInt, a function, a Map or Set, which it would write as `{}`) is an error the model is told of, never
 * `[object Object]`, an empty object or a function's source as a result.
 */
function render(output: unknown): string | { error: string } {
  if (typeof output === 'string') return output;
  if (output === undefined) return '';
  let json: string | undefined;
  try {
    json = JSON.stringify(output, refuseCollections);
  } catch (error) {
    return { error: `The tool's output could not be written as JSON (${errorMessage(error).split('\n')[0]}). A tool returns text or plain data.` };
  }
  return json ?? { error: `The tool's output (a ${typeof output} that JSON leaves out) is neither text nor JSON. A tool returns text or plain data.` };
}

/**
 * A tool reply's metadata as plain JSON (a copy, as it would be stored and read back), or why it cannot be: a cycle,
 * a BigInt or a Map in it would otherwise reach the session store and the redaction of the agent's conversation, where
 * a cycle overflowed the stack as the agent ended and its run never settled.
 */
function plainMetadata(metadata: Readonly<Record<string, unknown>>): { value: Record<string, unknown> } | { error: string } {
  try {
    const json = JSON.stringify(metadata, refuseCollections);
    if (json !== undefined) return { value: JSON.parse(json) as Record<string, unknown> };
  } catch (error) {
    return { error: `The tool's metadata could not be written as JSON (${errorMessage(error).split('\n')[0]}). A tool's metadata is plain data.` };
  }
  return { error: "The tool's metadata is not JSON. A tool's metadata is plain data." };
}

/** `JSON.stringify`'s replacer for tool outputs: a Map or Set would be written as `{}`, its entries lost, so it throws. */
function refuseCollections(_key: string, value: unknown): unknown {
  if (value instanceof Map || value instanceof Set) {
    throw new TypeError(`a ${value instanceof Map ? 'Map' : 'Set'} would be written as {}, without its entries`);
  }
  return value;
}
