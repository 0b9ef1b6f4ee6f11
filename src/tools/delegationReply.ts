import type { DelegationResult, TaskOutput, TaskRunning } from './Delegation.js';
import { plainToolReply, type ToolReply } from './toolReply.js';

/**
 * What the model sees of a sub-agent: its answer with its id (to resume it), a note that it runs in the
 * background, or an error naming why it failed. The metadata carries the id, figures and timing for programs (plain
 * data made here, so it is not checked again: see `plainToolReply`).
 */
export function delegationReply(outcome: DelegationResult | TaskOutput, options: { timeoutMs?: number } = {}): ToolReply {
  const who = `${outcome.agentName} (${outcome.agentId})`;
  if (isRunning(outcome)) {
    const waited = outcome.timedOut ? ` after waiting ${options.timeoutMs ?? 0} ms` : '';
    return plainToolReply({
      content:
        `Agent ${who} is ${outcome.status === 'pending' ? 'waiting to start' : 'still running'}${waited}. ` +
        `Call task_output with agent_id "${outcome.agentId}" to get its answer.`,
      metadata: {
        agentId: outcome.agentId,
        sessionId: outcome.agentId,
        agentName: outcome.agentName,
        status: outcome.status,
        ...(outcome.timedOut ? { timedOut: true } : {}),
      },
    });
  }
  const metadata: Record<string, unknown> = {
    agentId: outcome.agentId,
    /** The sub-agent's session in the store: its conversation is kept under this key. */
    sessionId: outcome.agentId,
    agentName: outcome.agentName,
    status: outcome.status,
    toolCallsExecuted: outcome.toolCallsExecuted,
  };
  // Set, not spread from a literal made for it: a sub-agent's reply is made once per delegation.
  if ('executionTimeMs' in outcome) metadata.executionTimeMs = outcome.executionTimeMs;
  metadata.metrics = outcome.metrics;
  if (outcome.status === 'failed') {
    return plainToolReply({
      content: `Agent ${who} failed (${outcome.reason ?? 'error'}): ${outcome.error?.message ?? 'no reason given'}`,
      isError: true,
      metadata: { ...metadata, reason: outcome.reason ?? 'error', ...(outcome.error ? { error: outcome.error } : {}) },
    });
  }
  return plainToolReply({
    content: `${outcome.output ?? ''}\n\n[agent_id: ${outcome.agentId}. Pass it as "resume" to continue this agent's session.]`,
    metadata,
  });
}

function isRunning(outcome: DelegationResult | TaskOutput): outcome is TaskRunning {
  return outcome.status === 'pending' || outcome.status === 'running';
}
