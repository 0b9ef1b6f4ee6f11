import type { Risk } from '../events/events.js';

/** A delegation waiting for a person's answer. Plain JSON. */
export interface PendingApproval {
  /** Pass it to `runtime.approve` or `runtime.deny`. */
  requestId: string;
  /** The held sub-agent's id. */
  agentId: string;
  /** The agent that asked for the delegation. */
  callerId: string;
  /** The name of the agent that would run. */
  agent: string;
  /** The task it would get. */
  task: string;
  /** How risky the policy judged it. */
  risk: Risk;
  /** Why the policy asks, if it said. */
  reason?: string;
}

/** The delegations waiting for a person, by request id. */
export class Approvals {
  private readonly byRequest = new Map<string, PendingApproval>();
  private readonly byAgent = new Map<string, string>();

  /** Records a request. */
  open(approval: PendingApproval): void {
    this.byRequest.set(approval.requestId, approval);
    this.byAgent.set(approval.agentId, approval.requestId);
  }

  /** Takes a request out to answer it; undefined when it is not waiting. */
  take(requestId: string): PendingApproval | undefined {
    const approval = this.byRequest.get(requestId);
    if (approval) this.drop(approval.agentId);
    return approval;
  }

  /** Forgets the request of an agent that ended (cancelled while it waited, say). */
  drop(agentId: string): void {
    const requestId = this.byAgent.get(agentId);
    if (requestId === undefined) return;
    this.byAgent.delete(agentId);
    this.byRequest.delete(requestId);
  }

  /** Every request waiting, oldest first. */
  list(): PendingApproval[] {
    return [...this.byRequest.values()].map((approval) => ({ ...approval }));
  }
}
