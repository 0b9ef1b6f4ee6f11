import type { ModelTurn } from '../actors/callModel.js';
import type { TroupeEventOf, TroupeEventType } from '../events/events.js';
import { ending } from '../failure.js';
import type { AgentContext, AgentEvent, EventHeader } from './agentTypes.js';

/** The body of one kind of event, without the header every event gets (run, agent, parent, time). */
type Body<T extends TroupeEventType> = Omit<TroupeEventOf<T>, keyof EventHeader>;

// The bodies of the events an agent announces, one function each: the machine names the action, this file says what
// the event holds. Each reads the context and, where it matters, the event that caused it.

/** `agent.spawned`: who the agent is and what it was asked. */
export function spawned(context: AgentContext): Body<'agent.spawned'> {
  const { input } = context;
  const body: Body<'agent.spawned'> = { type: 'agent.spawned', name: input.name, depth: input.depth, task: input.task };
  // Set one by one, in this order (a spread of `cond ? {} : { field }` makes an object each, for every agent).
  if (input.description !== undefined) body.description = input.description;
  if (input.background) body.background = true;
  if (input.resumed) body.resumed = true;
  if (input.resident) body.resident = true;
  if (input.attempt !== undefined) body.attempt = input.attempt;
  return body;
}

/** `agent.started`: it got its slot. */
export function started(context: AgentContext): Body<'agent.started'> {
  return { type: 'agent.started', name: context.input.name };
}

/** `approval.requested`: a delegation held for a person (announced after `hold` kept the request). */
export function approvalRequested(context: AgentContext): Body<'approval.requested'> {
  const hold = context.approval;
  return {
    type: 'approval.requested',
    requestId: hold?.requestId ?? '',
    name: context.input.name,
    task: context.input.task,
    risk: hold?.risk ?? 'high',
    ...(hold?.reason === undefined ? {} : { reason: hold.reason }),
  };
}

/** `approval.granted`. */
export function approvalGranted(context: AgentContext): Body<'approval.granted'> {
  return { type: 'approval.granted', requestId: context.approval?.requestId ?? '' };
}

/** `approval.denied`, with the reason the `DENY` event gave. */
export function approvalDenied(context: AgentContext, event: AgentEvent): Body<'approval.denied'> {
  const denied = event.type === 'DENY' ? event : undefined;
  return { type: 'approval.denied', requestId: denied?.requestId ?? context.approval?.requestId ?? null, reason: denied?.error ?? '' };
}

/** `model.request`: a turn begins. */
export function modelRequest(context: AgentContext): Body<'model.request'> {
  return {
    type: 'model.request',
    turn: context.turns,
    model: context.input.model,
    messages: context.messages.length,
    tools: context.input.tools.length,
  };
}

/** `model.response`: a turn's reply, its usage, cost and duration. */
export function modelResponse(context: AgentContext, turn: ModelTurn): Body<'model.response'> {
  const body: Body<'model.response'> = {
    type: 'model.response',
    turn: context.turns,
    model: turn.model,
    usage: { inputTokens: turn.inputTokens, outputTokens: turn.outputTokens },
    costUsd: turn.costUsd,
    durationMs: turn.durationMs,
    toolCalls: turn.toolCalls.length,
  };
  if (turn.content !== '') body.content = turn.content;
  return body;
}

/** `agent.waiting`: parked until a message comes (`idle`), or until a tool call's wait ends (`tool_call`). */
export function waiting(context: AgentContext): Body<'agent.waiting'> {
  const last = context.messages[context.messages.length - 1];
  return { type: 'agent.waiting', reason: last?.role === 'tool' ? 'tool_call' : 'idle' };
}

/** `agent.completed`, with its answer. */
export function completed(context: AgentContext): Body<'agent.completed'> {
  return { type: 'agent.completed', name: context.input.name, output: context.output ?? '', turns: context.turns };
}

/** `agent.failed`, with its reason and error. */
export function failed(context: AgentContext): Body<'agent.failed'> {
  return {
    type: 'agent.failed',
    name: context.input.name,
    reason: context.failure?.reason ?? 'error',
    error: context.failure?.error ?? ending('unexpected', 'The agent failed.', 'system'),
    turns: context.turns,
  };
}
