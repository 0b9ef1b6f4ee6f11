import type { Risk } from '../events/events.js';
import type { PersonAnswer, ToolCategory } from '../tools/toolApproval.js';

/** A delegation or a tool call waiting for a person's answer. Plain JSON. */
export interface PendingApproval {
  /** Pass it to `runtime.approve` or `runtime.deny`. */
  requestId: string;
  /** The held sub-agent's id; for a tool call, the id of the agent that made it (it waits). */
  agentId: string;
  /** The agent that asked for the delegation, or made the call. */
  callerId: string;
  /** The name of the agent that would run, or of the agent that made the call. */
  agent: string;
  /** The task it would get, or the call (the tool's name and its arguments). */
  task: string;
  /** How risky the policy judged it. */
  risk: Risk;
  /** Why the policy asks, if it said. */
  reason?: string;
  /** A tool call's: the tool, its category and the call's id (absent for a delegation). */
  tool?: string;
  category?: ToolCategory;
  callId?: string;
}

/** The delegations and tool calls waiting for a person, by request id. */
export class Approvals {
  private readonly byRequest = new Map<string, PendingApproval>();
  private readonly byAgent = new Map<string, string>();
  private readonly answers = new Map<string, (answer: PersonAnswer) => void>();

  /** Records a tool call's request, and how its answer reaches the waiting call. */
  openCall(approval: PendingApproval, answer: (answer: PersonAnswer) => void): void {
    this.byRequest.set(approval.requestId, approval);
    this.answers.set(approval.requestId, answer);
  }

  /** Answers a tool call's request; false when `requestId` is no tool call's (a delegation's, or unknown). */
  answer(requestId: string, answer: PersonAnswer): boolean {
    const waiting = this.answers.get(requestId);
    if (!waiting) return false;
    this.withdraw(requestId);
    waiting(answer);
    return true;
  }

  /** Forgets a tool call's request that nobody will answer now (its agent stopped while it waited). */
  withdraw(requestId: string): void {
    this.answers.delete(requestId);
    this.byRequest.delete(requestId);
  }

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
