import type { Caller, ResolvedAgent } from '../actors/agentEnvironment.js';
import type { AgentCatalog } from '../catalog/AgentCatalog.js';
import { whenAborted } from '../abort.js';
import { clockNow, sleep, type Clock } from '../clock.js';
import { AbortedError, DelegationError, errorMessage } from '../errors.js';
import { Risk } from '../events/events.js';
import type { AgentRecord } from '../machines/agentTable.js';
import type { SupervisorEvent } from '../machines/supervisorMachine.js';
import type { ChatMessage, ToolCall } from '../models/Model.js';
import { promiseFrom } from '../promiseLike.js';
import type { AgentResult, AgentResults } from './AgentResults.js';
import type { Approvals } from './Approvals.js';
import type { SessionRecord, SessionStore } from '../memory/SessionStore.js';
import type {
  AgentSummary,
  Delegation,
  DelegationPolicy,
  DelegationRequest,
  DelegateRequest,
  DelegationResult,
  SpawnAgentRequest,
  TaskOutput,
  TaskOutputOptions,
  TaskResult,
  TaskRunning,
} from '../tools/Delegation.js';
import { taskWithContext } from '../tools/Delegation.js';
import { isMcpToolName } from '../tools/mcp/mcpSelection.js';
import { sharedContext } from './sharedContext.js';
import { DEFAULT_TASK_OUTPUT_TIMEOUT_MS } from '../tools/taskOutput.js';

/** What the runtime does to start an agent for a delegation: the parts of a spawn the delegator decides. */
export interface Launch {
  agent: string;
  task: string;
  parentId: string | null;
  toolCallId?: string;
  description?: string;
  background?: boolean;
  /** The id of the ended agent to resume. */
  resume?: string;
  history?: ChatMessage[];
  approval?: { risk: 'low' | 'medium' | 'high'; reason?: string };
  deny?: string;
  /** The agent that waits for this one. */
  waiter?: string;
  /** Launched from a tool call: its spawn may wait for the end of the task (see `SpawnRequest.batched`). */
  batched?: true;
}

/** What the delegator needs from the runtime. */
export interface DelegatorHost {
  readonly catalog: AgentCatalog;
  readonly results: AgentResults;
  readonly approvals: Approvals;
  readonly sessions: SessionStore;
  readonly clock: Clock;
  /**
   * Runs work that reads and writes the store in real time and never waits on the clock (loading a session to
   * resume): on a simulated clock, time stands still meanwhile (see `RuntimeClock.inRealTime`).
   */
  inRealTime?<T>(work: () => Promise<T>): Promise<T>;
  readonly maxDepth: number;
  readonly policy: DelegationPolicy | undefined;
  /** The supervisor's record of an agent. */
  record(id: string): AgentRecord | undefined;
  /** Starts an agent; returns its id. */
  launch(launch: Launch): string;
  /** Removes an agent made during the run from the catalog, unless a run of it is still live. */
  forget(name: string): void;
  /** Sends an event to the supervisor. */
  send(event: SupervisorEvent): void;
}

/**
 * Carries out delegations for agents and for code: checks them (known agent, allow-list, depth, resumable
 * session), asks the delegation policy, starts the sub-agent under the caller, and waits for it (lending the
 * caller's slot), or returns its id when it runs in the background.
 */
export class Delegator {
  constructor(private readonly host: DelegatorHost) {}

  /** The delegation service a tool gets, bound to the agent that called it. */
  forCaller(caller: Caller): Delegation {
    return new CallerDelegation(this, caller);
  }

  /** The agents the caller may delegate to (none at the depth limit), as it sees them. */
  agentsFor(caller: Caller): AgentSummary[] {
    const { catalog, maxDepth } = this.host;
    return caller.depth >= maxDepth ? [] : catalog.delegatesOf(who(caller)).map((agent) => catalog.summary(agent));
  }

  /** Hands a task to an agent on the caller's behalf (see {@link Delegation.delegate}). */
  delegate(caller: Caller, request: DelegateRequest): Promise<DelegationResult | TaskRunning> {
    return promiseFrom(() => {
      const started = clockNow(this.host.clock);
      const agent = this.target(caller, request);
      // With no session to load and no policy to ask, nothing is awaited before the launch, and no async function is
      // kept suspended while the sub-agent runs (a fan-out keeps one per call).
      if (request.resume !== undefined || this.host.policy) return this.delegateAfterWaits(caller, request, agent, started);
      return this.handOver(caller, request, agent, this.sharedHistory(caller, agent), undefined, started);
    });
  }

  /** The agent a delegation goes to, once the caller may delegate to it (else a `DelegationError`). */
  private target(caller: Caller, request: DelegateRequest): ResolvedAgent {
    const { catalog, maxDepth } = this.host;
    if (caller.depth >= maxDepth) {
      throw new DelegationError(
        'depth_limit',
        `Agent "${caller.agentName}" is at depth ${caller.depth}, the delegation limit (maxDepth ${maxDepth}); it cannot delegate.`,
      );
    }
    const agent = catalog.get(request.agent);
    if (!agent) {
      throw new DelegationError('unknown_agent', `Unknown agent "${request.agent}". ${this.listingFor(caller)}`);
    }
    if (!catalog.mayDelegateTo(who(caller), agent.name)) {
      throw new DelegationError('not_allowed', `Agent "${caller.agentName}" may not delegate to "${agent.name}". ${this.listingFor(caller)}`);
    }
    return agent;
  }

  /** The caller's conversation as the agent shares it (`shareContext`), or none. */
  private sharedHistory(caller: Caller, agent: ResolvedAgent): ChatMessage[] | undefined {
    const { shareContext } = agent.definition;
    if (!shareContext) return undefined;
    return sharedContext(caller.messages, typeof shareContext === 'number' ? shareContext : undefined);
  }

  /** A delegation that first loads the session it resumes, or asks the policy, then hands over. */
  private async delegateAfterWaits(caller: Caller, request: DelegateRequest, agent: ResolvedAgent, started: number): Promise<DelegationResult | TaskRunning> {
    const resumed = request.resume !== undefined ? await this.resumable(request.resume, agent.name, caller) : undefined;
    try {
      const decision = this.host.policy
        ? await this.decide({
            caller: who(caller, true),
            agent: agent.name,
            task: taskWithContext(request.task, request.context, caller.agentName),
            depth: caller.depth + 1,
            background: request.background === true,
            ...(request.resume === undefined ? {} : { resume: request.resume }),
          })
        : undefined;
      // Once handed over the agent is launched: only a throw before that (the caller stopped, a refused launch) lands below.
      return this.handOver(caller, request, agent, resumed ? resumed.history : this.sharedHistory(caller, agent), decision, started);
    } catch (error) {
      resumed?.release(); // the resume did not start: its session is given back as it was
      throw error;
    }
  }

  /** Launches the sub-agent under the caller; in the background returns its id at once, else waits for its result. */
  private handOver(
    caller: Caller,
    request: DelegateRequest,
    agent: ResolvedAgent,
    history: ChatMessage[] | undefined,
    decision: Pick<Launch, 'approval' | 'deny'> | undefined,
    started: number,
  ): Promise<DelegationResult | TaskRunning> {
    if (stopped(caller)) throw new AbortedError('The caller stopped before the delegation started.');
    const background = request.background === true;
    const task = taskWithContext(request.task, request.context, caller.agentName);
    // Optional parts set one by one: a fan-out launches thousands, and each spread of a part costs an object.
    const launch: Launch = { agent: agent.name, task, parentId: caller.agentId, toolCallId: caller.toolCallId, background };
    if (request.description !== undefined) launch.description = request.description;
    if (request.resume !== undefined) launch.resume = request.resume;
    if (history !== undefined) launch.history = history;
    if (decision?.approval !== undefined) launch.approval = decision.approval;
    if (decision?.deny !== undefined) launch.deny = decision.deny;
    if (!background) launch.waiter = caller.agentId;
    launch.batched = true; // a delegation is always asked for from a tool call
    const id = this.host.launch(launch);
    if (background) return Promise.resolve(this.running(id));
    return this.until(id, caller).then((ended) => taskResult(ended, Math.max(0, clockNow(this.host.clock) - started)));
  }

  /** The agents the caller may delegate to, as the text of a refusal names them. */
  private listingFor(caller: Caller): string {
    return listing(this.host.catalog.delegatesOf(who(caller)).map((entry) => entry.name));
  }

  /** Says whether an agent still runs, or returns its result; a blocking call waits up to `timeoutMs`. */
  async taskOutput(agentId: string, options: TaskOutputOptions = {}, caller?: Caller): Promise<TaskOutput> {
    const record = this.host.record(agentId);
    if (!record) throw new DelegationError('unknown_session', `No agent has the id "${agentId}".`);
    if (caller && (agentId === caller.agentId || !this.isBelow(agentId, caller.agentId))) {
      // Its own id included: it would wait on its own result, which cannot come while it waits.
      throw new DelegationError('not_allowed', `Agent ${agentId} is not one of the sub-agents of "${caller.agentName}".`);
    }
    const ended = this.host.results.ended(agentId);
    if (ended) return taskResult(ended);
    if (!options.blocking) return this.running(agentId);
    const timeoutMs = options.timeoutMs ?? DEFAULT_TASK_OUTPUT_TIMEOUT_MS;
    const waiting = caller !== undefined;
    if (waiting) this.host.send({ type: 'WAIT', id: caller.agentId, on: agentId });
    const timer = new AbortController();
    try {
      const result = await Promise.race([
        this.host.results.wait(agentId)!,
        sleep(this.host.clock, timeoutMs, timer.signal).then(() => null, () => null),
        ...(caller ? [whenStopped(caller).catch(() => null)] : []),
      ]);
      if (caller && stopped(caller)) throw new AbortedError('The caller stopped while it waited.');
      if (result) return taskResult(result);
      // The deadline passed. An agent that ended at that same instant may still be settling: let it finish first.
      await new Promise<void>((resolve) => setImmediate(resolve));
      const late = this.host.results.ended(agentId);
      if (late) return taskResult(late);
      return { ...this.running(agentId), timedOut: true };
    } finally {
      timer.abort();
      if (waiting && !this.host.results.ended(agentId)) this.host.send({ type: 'UNWAIT', id: caller.agentId, on: agentId });
    }
  }

  /** Makes an agent on the spot and hands it its task (see {@link Delegation.spawnAgent}). */
  async spawnAgent(caller: Caller, request: SpawnAgentRequest): Promise<DelegationResult | TaskRunning> {
    this.define(caller, request);
    try {
      return await this.delegate(caller, { agent: request.name, task: request.task, description: `spawned ${request.name}` });
    } catch (error) {
      this.host.forget(request.name); // not handed over (or the caller stopped): keep no agent nobody ran
      throw error;
    }
  }

  /** Adds an agent made on the spot by the caller to the catalog. */
  private define(caller: Caller, request: SpawnAgentRequest): void {
    const { catalog, maxDepth } = this.host;
    if (caller.depth >= maxDepth) {
      throw new DelegationError('depth_limit', `Agent "${caller.agentName}" is at the delegation limit (maxDepth ${maxDepth}).`);
    }
    if (catalog.get(request.name)) {
      throw new DelegationError('name_taken', `An agent named "${request.name}" already exists; choose another name.`);
    }
    const creator = catalog.resolve(caller.agentName);
    const tools = request.tools ?? [];
    const foreign = tools.filter((name) => !creator.tools.has(name) && !mcpToolOf(creator, name));
    if (foreign.length > 0) {
      throw new DelegationError(
        'invalid_tools',
        `A spawned agent may only get tools of its creator; "${caller.agentName}" does not have ${foreign.join(', ')}. ` +
          `Its tools: ${[...creator.tools.keys()].join(', ') || 'none'}.`,
      );
    }
    // Its reach is within its creator's: the agents the creator may delegate to now (never the creator's own kind,
    // unless the creator may delegate to it), and the creator's message allow-list. Without a list of its own it
    // could delegate to every agent of the catalog.
    const subagents = catalog.delegatesOf(who(caller)).map((agent) => agent.name);
    const { canMessage } = creator.definition;
    try {
      catalog.add(
        {
          name: request.name,
          description: request.description ?? `Made by ${caller.agentName} for one kind of task.`,
          systemPrompt: request.systemPrompt,
          // The creator's own tool objects: a tool it was given inline (not in createRuntime({ tools })) is found so.
          tools: tools.map((name) => creator.tools.get(name) ?? name),
          subagents,
          ...(canMessage === undefined ? {} : { canMessage: [...canMessage] }),
          ...(creator.definition.model === undefined ? {} : { model: creator.definition.model }),
          ...(creator.temperature === undefined ? {} : { temperature: creator.temperature }),
        },
        request.lifecycle ?? 'temporary',
        who(caller),
      );
    } catch (error) {
      // Its tools were checked above: what is left wrong is the definition itself.
      throw new DelegationError('invalid_agent', `The agent could not be made: ${errorMessage(error)}`);
    }
  }

  /**
   * An ended session to resume: its agent, its conversation and its parent, from this process or (through the
   * store) an earlier one. Refuses an unknown id, a session that has not ended (here, or in another process), and one
   * that left no conversation. The session is claimed in the store (see `SessionStore.claim`), so no other process
   * resumes it meanwhile; `release` gives it back when the resume does not start after all.
   */
  async session(id: string): Promise<ResumedSession> {
    const record = this.host.record(id);
    if (record?.state === 'pending' || record?.state === 'running' || this.host.results.running(id)) {
      throw new DelegationError('still_running', `Agent ${id} is still ${record?.state ?? 'running'}; it can be resumed once it has ended.`);
    }
    // The store may be a file: on a simulated clock its reads and writes take no simulated time (time stands still).
    const load = () => this.load(id, record);
    return this.host.inRealTime ? this.host.inRealTime(load) : load();
  }

  /** Reads and claims the session of {@link session}: what it does in the store. */
  private async load(id: string, record: AgentRecord | undefined): Promise<ResumedSession> {
    await this.host.sessions.settled(); // a failed write stays for flush() to report; read what is there
    const taken = await this.host.sessions.claim(id);
    const stored = taken?.record;
    if (!record && !stored) throw new DelegationError('unknown_session', `No agent session has the id "${id}".`);
    if (taken && !taken.claimed) {
      throw new DelegationError(
        'still_running',
        `Session ${id} is still marked ${taken.record.state}: it runs elsewhere (in another process, another runtime on this store, or another resume of it here); it can be resumed once it has ended.`,
      );
    }
    const release = () => {
      if (stored) this.host.sessions.release(id, stored);
    };
    try {
      const interrupted = !record && stored!.state === 'interrupted';
      const saved = await this.host.sessions.conversation(id);
      if (!saved && !interrupted) throw new DelegationError('unknown_session', `Session ${id} left no conversation to resume.`);
      // An interrupted session goes on from its last checkpoint; one that died before its first was saved, from its task
      // (as its record keeps it), so the model still knows what it was asked.
      const checkpoint = saved ?? (interrupted ? [{ role: 'user' as const, content: stored!.taskDescription }] : []);
      const idempotent = (tool: string) => this.host.catalog.tool(tool)?.idempotent === true;
      const history = interrupted ? afterInterruption(checkpoint, idempotent, await this.host.sessions.byParent(id)) : saved!;
      return { agentType: record?.name ?? stored!.agentType, history, parentId: record ? record.parentId : stored!.parentConversationId, release };
    } catch (error) {
      release();
      throw error;
    }
  }

  /** The session of an ended agent the caller may resume, or a refusal naming why it cannot be resumed. */
  private async resumable(id: string, agentName: string, caller: Caller): Promise<ResumedSession> {
    const known = this.host.record(id);
    if (known && known.name !== agentName) {
      throw new DelegationError('wrong_agent', `Agent ${id} is a "${known.name}", not a "${agentName}".`);
    }
    if (known && !this.isBelow(id, caller.agentId) && this.ownedByLiveAgent(id)) {
      throw new DelegationError('not_allowed', `Agent ${id} belongs to another running agent; only its own callers may resume it.`);
    }
    const session = await this.session(id);
    if (session.agentType !== agentName) {
      session.release();
      throw new DelegationError('wrong_agent', `Agent ${id} is a "${session.agentType}", not a "${agentName}".`);
    }
    return session;
  }

  /** Asks the policy; returns how to launch: as asked, held for a person, or denied at once. */
  private async decide(request: DelegationRequest): Promise<Pick<Launch, 'approval' | 'deny'>> {
    const { policy } = this.host;
    if (!policy) return {};
    let decision;
    try {
      decision = await policy(request);
    } catch (error) {
      return { deny: `The delegation policy failed, so the delegation is denied: ${errorMessage(error)}` };
    }
    if (decision === 'allow' || decision?.decision === 'allow') return {};
    if (decision?.decision === 'deny') return { deny: decision.reason || 'Denied by the delegation policy.' };
    if (decision?.decision === 'ask' && Risk.safeParse(decision.risk).success) {
      return { approval: { risk: decision.risk, ...(decision.reason === undefined ? {} : { reason: decision.reason }) } };
    }
    return { deny: `The delegation policy gave an answer it may not give: ${JSON.stringify(decision)}.` };
  }

  /** Waits for an agent's result; if the caller stops first, stops waiting (and gives the wait back). */
  private until(id: string, caller: Caller): Promise<AgentResult> {
    const result = this.host.results.wait(id)!;
    if (stopped(caller)) return Promise.reject(new AbortedError('The caller stopped.'));
    // A tool call that stops only with its agent has its batch end at once when it does, and the supervisor ends an
    // ended agent's waits: racing the stop here too would hang a reaction per call of a wide turn on the batch's stop.
    return caller.stop?.withAgent ? result : this.untilStopped(id, caller, result);
  }

  /** Waits for `result` unless the caller stops first (then gives the wait back). */
  private async untilStopped(id: string, caller: Caller, result: Promise<AgentResult>): Promise<AgentResult> {
    try {
      // The caller's signal is shared by every call of its batch: race its one abort promise, add no listener.
      return await Promise.race([result, whenStopped(caller)]);
    } catch {
      if (!this.host.results.ended(id)) this.host.send({ type: 'UNWAIT', id: caller.agentId, on: id });
      throw new AbortedError('The caller stopped while it waited for its sub-agent.');
    }
  }

  /** True when agent `id` is `ancestorId` or one of its descendants. */
  private isBelow(id: string, ancestorId: string): boolean {
    for (let at: string | null = id; at !== null; at = this.host.record(at)?.parentId ?? null) {
      if (at === ancestorId) return true;
    }
    return false;
  }

  /** True when some ancestor of agent `id` is still pending or running: the session is that agent's. */
  private ownedByLiveAgent(id: string): boolean {
    for (let at = this.host.record(id)?.parentId ?? null; at !== null; at = this.host.record(at)?.parentId ?? null) {
      const state = this.host.record(at)?.state;
      if (state === 'pending' || state === 'running') return true;
    }
    return false;
  }

  private running(id: string): TaskRunning {
    const record = this.host.record(id);
    return {
      status: record?.state === 'running' ? 'running' : 'pending',
      agentId: id,
      agentName: record?.name ?? id,
    };
  }
}

/** An ended session taken for a resume ({@link Delegator.session}). */
export interface ResumedSession {
  /** The name of the agent it is a session of. */
  agentType: string;
  /** Its conversation to go on from (an interrupted one made whole). */
  history: ChatMessage[];
  /** Its parent: an agent id, or the conversation key it was stored under. */
  parentId: string | null;
  /** Gives the session back as it was, for a resume that does not start after all. */
  release(): void;
}

/**
 * The delegation service of one caller ({@link Delegator.forCaller}): its methods are the prototype's, so a tool call
 * that delegates costs one small object, not a closure per method.
 */
class CallerDelegation implements Delegation {
  constructor(
    private readonly delegator: Delegator,
    private readonly caller: Caller,
  ) {}

  agents(): AgentSummary[] {
    return this.delegator.agentsFor(this.caller);
  }

  delegate(request: DelegateRequest): Promise<DelegationResult | TaskRunning> {
    return this.delegator.delegate(this.caller, request);
  }

  taskOutput(agentId: string, options?: TaskOutputOptions): Promise<TaskOutput> {
    return this.delegator.taskOutput(agentId, options, this.caller);
  }

  spawnAgent(request: SpawnAgentRequest): Promise<DelegationResult | TaskRunning> {
    return this.delegator.spawnAgent(this.caller, request);
  }
}

/**
 * The conversation of an interrupted session, made whole to go on: every tool call of its last turn that has no answer
 * gets one (an idempotent tool's call may be made again; any other is reported as interrupted and not run again, since
 * it may have taken effect), then a note tells the model its run was interrupted. A delegation among them is told of
 * the sessions it had started (`started`: the sessions whose parent is this one), so the model can take a finished
 * sub-agent's answer or resume an unfinished one rather than start the work again.
 */
export function afterInterruption(
  history: readonly ChatMessage[],
  idempotent: (tool: string) => boolean,
  started: readonly SessionRecord[] = [],
): ChatMessage[] {
  const messages = [...history];
  const lastAsk = messages.findLastIndex((message) => message.role === 'assistant' && (message.toolCalls?.length ?? 0) > 0);
  if (lastAsk >= 0) {
    const ask = messages[lastAsk] as Extract<ChatMessage, { role: 'assistant' }>;
    let end = lastAsk + 1; // the answers go right after the answers already there, before anything else
    while (messages[end]?.role === 'tool') end += 1;
    const answered = new Set(messages.slice(lastAsk + 1, end).map((message) => (message as { toolCallId: string }).toolCallId));
    // Sessions already told of (their ids in the conversation) or given to an earlier call of this turn.
    const known = { said: started.length === 0 ? '' : everythingSaid(messages), claimed: new Set<string>() };
    const missing: ChatMessage[] = (ask.toolCalls ?? [])
      .filter((call) => !answered.has(call.id))
      .map((call) => ({
        role: 'tool',
        toolCallId: call.id,
        isError: true,
        content: idempotent(call.name)
          ? `Interrupted: this call of "${call.name}" was running when the process stopped, and has no result. It is safe to call it again.`
          : `Interrupted: this call of "${call.name}" was running when the process stopped. It was not run again: it may or may not have taken effect; check before you repeat it.${sessionsOf(call, started, known)}`,
      }));
    messages.splice(end, 0, ...missing);
  }
  messages.push({
    role: 'user',
    content: '[The run of this conversation was interrupted: the process running it stopped before it ended. It goes on from its last saved turn.]',
  });
  return messages;
}

/** The text of a conversation and its tool calls' arguments: what names the sub-agents it had been told of. */
function everythingSaid(history: readonly ChatMessage[]): string {
  return history.map((message) => (message.role === 'assistant' ? `${message.content} ${(message.toolCalls ?? []).map((call) => call.arguments).join(' ')}` : message.content)).join('\n');
}

/**
 * What a delegation call interrupted had started, in words: the session it resumed, or else the session of the agent it
 * named on its task that is not `known` yet (a call starts one session: two calls of the same agent and task get one
 * each, in the order they were started; one the conversation names is an earlier call's, answered), with its id and
 * how it stands, and a finished one's answer. Empty for any other call, and for one that had started nothing.
 */
function sessionsOf(call: ToolCall, started: readonly SessionRecord[], known: { said: string; claimed: Set<string> }): string {
  let args: { agent?: unknown; task?: unknown; resume?: unknown };
  try {
    args = JSON.parse(call.arguments) as typeof args;
  } catch {
    return '';
  }
  if (args === null || typeof args !== 'object') return '';
  const { resume } = args;
  const task = typeof args.task === 'string' ? args.task.trim() : undefined;
  // The task as it was stored: as given, or with the caller's context after it (`taskWithContext`).
  const gave = (stored: string) => task !== undefined && (stored === task || stored.startsWith(`${task}\n\n## Context from `));
  const session =
    typeof resume === 'string'
      ? started.find((candidate) => candidate.id === resume)
      : started.find(
          ({ id, agentType, taskDescription }) => agentType === args.agent && gave(taskDescription) && !known.claimed.has(id) && !known.said.includes(id),
        );
  if (!session) return '';
  known.claimed.add(session.id);
  return ` ${describeSession(session)}`;
}

/** A sub-agent's session as an interrupted caller is told of it: its id, its state, and what to do with it. */
function describeSession(session: SessionRecord): string {
  const { id, state } = session;
  if (state === 'completed') return `It had started ${id}, which completed with this answer: ${session.result ?? ''}`;
  if (state === 'failed') return `It had started ${id}, which failed: ${session.error?.message ?? session.reason ?? 'no reason kept'}.`;
  return `It had started ${id}, which did not finish (${state}): to go on with its work, delegate with resume: "${id}".`;
}

/** True once the caller has stopped (read through its `stop` when it has one, so no signal is made for it). */
function stopped(caller: Caller): boolean {
  return caller.stop ? caller.stop.aborted : caller.signal.aborted;
}

/** A promise that rejects when the caller stops: one shared promise, no listener of its own. */
function whenStopped(caller: Caller): Promise<never> {
  return caller.stop?.promise ?? whenAborted(caller.signal);
}

/** A result as a caller sees it; a delegation that waited for it gives the time it took (`executionTimeMs`). */
export function taskResult(result: AgentResult): TaskResult;
export function taskResult(result: AgentResult, executionTimeMs: number): DelegationResult;
export function taskResult(result: AgentResult, executionTimeMs?: number): TaskResult {
  const { status, id: agentId, agent: agentName, toolCallsExecuted, metrics } = result;
  // The time in the literal rather than added after: one object of one shape.
  const task: TaskResult =
    executionTimeMs === undefined
      ? { status, agentId, agentName, toolCallsExecuted, metrics }
      : ({ status, agentId, agentName, toolCallsExecuted, metrics, executionTimeMs } as DelegationResult);
  if (result.output !== undefined) task.output = result.output;
  if (result.reason !== undefined && result.error !== undefined) {
    task.reason = result.reason;
    task.error = result.error;
  }
  return task;
}

function who(caller: Caller): { id: string; name: string };
function who(caller: Caller, withDepth: true): { id: string; name: string; depth: number };
function who(caller: Caller, withDepth = false) {
  return withDepth
    ? { id: caller.agentId, name: caller.agentName, depth: caller.depth }
    : { id: caller.agentId, name: caller.agentName };
}

function listing(names: readonly string[]): string {
  return names.length > 0 ? `Agents you may delegate to: ${names.join(', ')}.` : 'You may not delegate to any agent.';
}

/**
 * True when `name` is an MCP tool (`server:tool`, or `server:*`) that the creator may call itself: its server is one of
 * the creator's, with all its tools or that one. A spawned agent gets such a tool of a server the runtime defines.
 */
function mcpToolOf(creator: ResolvedAgent, name: string): boolean {
  if (!isMcpToolName(name) || !creator.mcp) return false;
  const at = name.indexOf(':');
  const choice = creator.mcp.servers.get(name.slice(0, at));
  const tool = name.slice(at + 1);
  return choice !== undefined && (choice.tools === '*' || (tool !== '*' && choice.tools.has(tool)));
}
