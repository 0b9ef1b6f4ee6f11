import { map } from 'rxjs';
import { ConfigurationError, UnknownAgentError, UnknownRequestError } from './errors.js';
import { ending, type ErrorInfo } from './failure.js';
import { FailureReason } from './events/events.js';
import { snapshotOf } from './events/metrics.js';
import { promiseFrom } from './promiseLike.js';
import { RUNTIME_ADDRESS, TOPIC_PREFIX } from './messaging/Message.js';
import type { AgentResult } from './runtime/AgentResults.js';
import type { AgentHandle, GroupHandle, Runtime, RuntimeOptions, SpawnOptions } from './runtime/Runtime.js';
import { buildParts, shutdown, type RuntimeParts } from './runtime/runtimeParts.js';
import { readTopic } from './runtime/Messenger.js';
import { runUntilIdle, waitingAgents, type RunUntilIdleOptions } from './runtime/Simulation.js';
import type { TaskOutputOptions } from './tools/Delegation.js';
import { checkCallOptions, checkGroupOptions, checkSpawnOptions } from './runtime/settings.js';

export type { AgentResult, ResultMetrics } from './runtime/AgentResults.js';
export type { AgentHandle, GroupHandle, GroupOptions, Runtime, RuntimeOptions, SpawnOptions } from './runtime/Runtime.js';

/**
 * Creates a runtime: an actor system whose root is the supervisor, with the given agents (in code, and in agent
 * files), tools and model. This function wires the parts (see `docs/architecture.md`); each part lives in a file of
 * its own under `src/runtime/`, `src/messaging/` and `src/machines/`.
 *
 * @throws ConfigurationError before any part starts, for options it cannot run with: an unknown option (naming the
 * one most likely meant), a value out of range, a `trace` or `record` file that holds something else or cannot be
 * made, a `workspace` that is not a folder, two agents of one name, an agent whose model, tools, subagents or MCP
 * servers are not there, or a tool named like a built-in delegation tool.
 * @throws InvalidAgentError for an agent of `agents` that is not a valid definition (`defineAgent` checks each).
 * An agent file that cannot be made is not thrown: it is left out and kept in `runtime.agentFileErrors`.
 *
 * @example
 * const runtime = createRuntime({ model: new ScriptedModel(['Hello!']), agents: [greeter] });
 * const result = await runtime.run('greeter', 'Say hello.');
 * await runtime.shutdown();
 */
export function createRuntime(options: RuntimeOptions): Runtime {
  const parts = buildParts(options);
  const { supervisor, launcher, messenger, postOffice, clock, sessions, delegator, catalog, pool } = parts;
  const table = () => supervisor.getSnapshot().context.agents;
  let shutdownPromise: Promise<void> | undefined;
  // What `advanceUntilSettled` names in a deadlock it finds on this runtime's clock.
  clock.waitingAgents = () => waitingAgents({ postOffice, table });

  const spawnFromCode = (agentName: string, task: string, spawnOptions: SpawnOptions, watch: boolean) => {
    checkSpawnOptions(spawnOptions, watch ? 'spawn' : 'run');
    // `Object.assign`, not a spread followed by new keys: on Node 20 that makes a new hidden class for every launch, and
    // every read of the request after it slow (see Performance).
    return launcher.launch(Object.assign({}, spawnOptions, { agent: agentName, task, parentId: spawnOptions.parentId ?? null, watch }));
  };

  return {
    runId: parts.runId,
    get agentNames() {
      return Object.freeze(catalog.names());
    },
    get agentFileErrors() {
      return Object.freeze([...(catalog.files?.errors ?? [])]);
    },
    get agentFileWarnings() {
      return Object.freeze([...(catalog.files?.warnings ?? [])]);
    },
    events$: parts.events$,
    metrics$: parts.metrics$,
    // Redacted like events$ (a message.sent event carries the same message).
    messages$: messenger.messages$.pipe(map((message) => parts.redactor.redact(message))),
    blackboard: parts.blackboard,
    sessions,
    ...(parts.inspector ? { inspector: parts.inspector } : {}),
    ...(parts.ui ? { ui: parts.ui } : {}),
    mcpServers: () => parts.mcp.status(),
    spawn: (agentName, task, spawnOptions = {}) => spawnFromCode(agentName, task, spawnOptions, true),
    run: (agentName, task, spawnOptions = {}) => {
      // A promise's failures belong to it: `run(…).catch()` hears of an agent that cannot be spawned too.
      return promiseFrom(() => spawnFromCode(agentName, task, spawnOptions, false).result);
    },
    group: (name, task, groupOptions = {}) => {
      checkGroupOptions(groupOptions);
      return groupHandle(launcher, launcher.launchGroup(name, task, groupOptions));
    },
    resume: (id, task, resumeOptions = {}) => resume(parts, id, task, resumeOptions),
    taskOutput: async (id, outputOptions) => delegator.taskOutput(id, checkedTaskOutputOptions(outputOptions)),
    ...controls(parts),
    ...messaging(parts),
    cleanupTemporary() {
      const names = catalog.temporary();
      for (const [id] of [...table().liveAgents()]) {
        const record = table().record(id);
        if (record && names.includes(record.name)) supervisor.send({ type: 'CANCEL', id: record.id, error: 'Temporary agents were cleaned up.' });
      }
      for (const name of names) launcher.forget(name); // a run still ending takes its agent with it when it ends
      return names;
    },
    poolStats: () => pool.stats(),
    metrics: () => snapshotOf(parts.latest()),
    record: (id) => table().record(id),
    now: () => clock.now(),
    idle: () => launcher.idle(),
    runUntilIdle: async (runOptions) =>
      runUntilIdle({ clock, postOffice, table, progress: () => launcher.eventsSeen, outsideWork: () => parts.mcp.busy() }, checkedIdleOptions(runOptions)),
    flush: () => sessions.flush(),
    shutdown() {
      shutdownPromise ??= shutdown(parts);
      return shutdownPromise;
    },
    toJSON: () => ({ runId: parts.runId, agentNames: catalog.names() }),
  };
}

/**
 * `runtime.resume`: takes the ended session (from this process or, through the store, an earlier one) and launches it
 * again under its id; a launch that is refused gives the session back as it was.
 */
async function resume(parts: RuntimeParts, id: string, task: string, resumeOptions: Omit<SpawnOptions, 'history'>): Promise<AgentHandle> {
  checkSpawnOptions(resumeOptions, 'resume');
  const { agentType, history, parentId, release } = await parts.delegator.session(id);
  const liveParent = resumeOptions.parentId ?? (parentId !== null && parts.supervisor.getSnapshot().context.agents.record(parentId) ? parentId : null);
  try {
    return parts.launcher.launch({
      ...resumeOptions,
      agent: agentType,
      task,
      parentId: liveParent,
      ...(liveParent === null ? { parentConversationId: parentId } : {}),
      resume: id,
      history,
      watch: true,
    });
  } catch (error) {
    release();
    throw error;
  }
}

/** A group's handle: its id and result, whether it is open, and how code ends it. */
function groupHandle(launcher: RuntimeParts['launcher'], { id, result }: { id: string; result: Promise<AgentResult> }): GroupHandle {
  return {
    id,
    result,
    get open() {
      return launcher.isLive(id);
    },
    complete: (output) => {
      if (typeof output !== 'string') throw new ConfigurationError(`group.complete: the output must be a string, not ${shown(output)}.`);
      launcher.endGroup(id, { status: 'completed', output });
    },
    fail: (error, reason = 'error') => {
      if (!FailureReason.safeParse(reason).success) {
        throw new ConfigurationError(`group.fail: the reason must be one of ${FailureReason.options.join(', ')}, not ${shown(reason)}.`);
      }
      const info = typeof error === 'string' && error.trim() !== '' ? ending('step_failed', error, 'user') : errorInfoOrUndefined(error);
      if (info === undefined) {
        throw new ConfigurationError(`group.fail: the error must be a non-empty text or an ErrorInfo ({ code, message, fault }), not ${shown(error)}.`);
      }
      launcher.endGroup(id, { status: 'failed', reason, error: info });
    },
  };
}

/** An {@link ErrorInfo} as a failed result carries it (its `code`, `message` and `fault` texts), or undefined. */
function errorInfoOrUndefined(error: unknown): ErrorInfo | undefined {
  if (typeof error !== 'object' || error === null) return undefined;
  const { code, message, fault } = error as Partial<Record<keyof ErrorInfo, unknown>>;
  return typeof code === 'string' && typeof message === 'string' && typeof fault === 'string' ? (error as ErrorInfo) : undefined;
}

/** Stopping agents and answering approvals, from code. */
function controls(parts: RuntimeParts): Pick<Runtime, 'cancel' | 'stop' | 'approve' | 'deny' | 'pendingApprovals'> {
  const { supervisor, approvals, launcher } = parts;
  const table = () => supervisor.getSnapshot().context.agents;
  return {
    cancel(id) {
      if (!table().record(checkedId('cancel', 'id', id))) throw new UnknownAgentError(id);
      launcher.halt({ type: 'CANCEL', id });
      supervisor.send({ type: 'CANCEL', id });
    },
    stop(id) {
      if (!table().record(checkedId('stop', 'id', id))) throw new UnknownAgentError(id);
      launcher.halt({ type: 'STOP', id });
      supervisor.send({ type: 'STOP', id });
    },
    approve(requestId) {
      checkedId('approve', 'requestId', requestId);
      if (approvals.answer(requestId, { approved: true })) return;
      const approval = approvals.take(requestId);
      if (!approval) throw new UnknownRequestError(requestId);
      supervisor.send({ type: 'APPROVE', id: approval.agentId });
    },
    deny(requestId, reason = 'Denied by a person.') {
      checkedId('deny', 'requestId', requestId);
      if (typeof reason !== 'string') throw new ConfigurationError(`runtime.deny: reason must be a string, not ${shown(reason)}.`);
      if (approvals.answer(requestId, { approved: false, reason })) return;
      const approval = approvals.take(requestId);
      if (!approval) throw new UnknownRequestError(requestId);
      supervisor.send({ type: 'DENY', id: approval.agentId, error: reason, requestId });
    },
    pendingApprovals: () => approvals.list(),
  };
}

/** `runtime.taskOutput`'s options, checked: a misspelled option or a bad value would be ignored, or wait for ever. */
function checkedTaskOutputOptions(options: TaskOutputOptions | undefined): TaskOutputOptions | undefined {
  checkCallOptions(options, ['blocking', 'timeoutMs'], 'taskOutput');
  const { blocking, timeoutMs } = options ?? {};
  if (blocking !== undefined && typeof blocking !== 'boolean') throw new ConfigurationError(`taskOutput: blocking must be true or false, not ${shown(blocking)}.`);
  if (timeoutMs !== undefined && !(typeof timeoutMs === 'number' && Number.isFinite(timeoutMs) && timeoutMs > 0)) {
    throw new ConfigurationError(`taskOutput: timeoutMs must be a positive, finite number, not ${shown(timeoutMs)}.`);
  }
  return options;
}

/** `runtime.runUntilIdle`'s options, checked (a limit that is not a positive number would be no limit, or none at all). */
function checkedIdleOptions(options: RunUntilIdleOptions | undefined): RunUntilIdleOptions | undefined {
  checkCallOptions(options, ['limitMs'], 'runUntilIdle');
  const limitMs = options?.limitMs;
  if (limitMs !== undefined && !(typeof limitMs === 'number' && limitMs > 0)) {
    throw new ConfigurationError(`runUntilIdle: limitMs must be a positive number, not ${shown(limitMs)}.`);
  }
  return options;
}

/** A value as an error message shows it: a string quoted, anything else by its JSON or its type. */
function shown(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  return typeof value === 'object' && value !== null ? (Array.isArray(value) ? 'an array' : 'an object') : String(value);
}

/**
 * The id a control method was given, when it is a non-empty string: anything else (`undefined`, a number, a handle
 * instead of its `id`) is a `ConfigurationError` that says what was passed, rather than an unknown id named
 * `[object Object]`.
 */
function checkedId(method: string, name: string, id: unknown): string {
  if (typeof id === 'string' && id !== '') return id;
  const hint = typeof id === 'object' && id !== null && 'id' in id ? ' (pass the handle\'s id)' : '';
  throw new ConfigurationError(`runtime.${method}: ${name} must be a non-empty string, not ${shown(id)}${hint}.`);
}

/**
 * Who a message from code comes from: `runtime`, or the live agent it is sent for. Anything else would be an address
 * no reply could reach (and a sender in the events that never was), so it is refused: a `ConfigurationError` for what
 * is no agent id, an `UnknownAgentError` for an id of no live agent.
 */
function senderOf(from: string | undefined, isLive: (id: string) => boolean): string {
  if (from === undefined || from === RUNTIME_ADDRESS) return RUNTIME_ADDRESS;
  if (!(typeof from === 'string' && from.startsWith('agent:') && from.length > 'agent:'.length)) {
    throw new ConfigurationError(`from must be "${RUNTIME_ADDRESS}" or an agent id (agent:<name>:<key>), not ${JSON.stringify(from)}.`);
  }
  if (!isLive(from)) throw new UnknownAgentError(from);
  return from;
}

/** Messages from code: send, request, publish, and topics on an agent's behalf. */
function messaging(parts: RuntimeParts): Pick<Runtime, 'send' | 'request' | 'publish' | 'subscribe' | 'unsubscribe'> {
  const { messenger, postOffice } = parts;
  const isLive = (id: string) => postOffice.isOpen(id);
  const live = (id: string) => {
    if (!isLive(id)) throw new UnknownAgentError(id);
  };
  return {
    send: async (to, content, sendOptions = {}) => {
      checkCallOptions(sendOptions, ['from', 'replyTo'], 'send');
      const { replyTo } = sendOptions;
      if (replyTo !== undefined && (typeof replyTo !== 'string' || replyTo === '')) {
        throw new ConfigurationError('replyTo must be the id of the message this one answers.');
      }
      return messenger.deliver(senderOf(sendOptions.from, isLive), to, content, replyTo === undefined ? {} : { replyTo });
    },
    request: async (to, content, requestOptions = {}) => {
      checkCallOptions(requestOptions, ['timeoutMs'], 'request');
      return messenger.request(to, content, requestOptions.timeoutMs);
    },
    publish: async (topic, content, publishOptions = {}) => {
      checkCallOptions(publishOptions, ['from'], 'publish');
      // Checked as subscribe checks it: a number or an object would otherwise be read as a topic (123 as "123").
      return messenger.deliver(senderOf(publishOptions.from, isLive), `${TOPIC_PREFIX}${readTopic(topic)}`, content);
    },
    subscribe(agentId, topic) {
      live(checkedId('subscribe', 'agentId', agentId));
      messenger.forCaller(callerFor(agentId)).subscribe(topic);
    },
    unsubscribe(agentId, topic) {
      live(checkedId('unsubscribe', 'agentId', agentId));
      postOffice.unsubscribe(agentId, readTopic(topic));
    },
  };
}

/** A caller standing for an agent when code acts in its name (`runtime.subscribe`). */
function callerFor(agentId: string) {
  const name = agentId.split(':')[1] ?? agentId;
  return { agentId, agentName: name, depth: 0, toolCallId: '', messages: [], signal: new AbortController().signal };
}

