import { errorMessage } from '../errors.js';
import { Risk } from '../events/events.js';
import type { Tool, ToolContext, ToolKind } from './defineTool.js';

/** What a tool touches, for an approval policy: `tool` (the default), `sub_agent`, `mcp`, `file_op` or `db_op`. */
export type ToolCategory = 'tool' | 'sub_agent' | 'mcp' | 'file_op' | 'db_op';

/** Every {@link ToolCategory}. */
export const TOOL_CATEGORIES: readonly ToolCategory[] = ['tool', 'sub_agent', 'mcp', 'file_op', 'db_op'];

/** One tool call, as a {@link ToolPolicy} is asked about it. */
export interface ToolApprovalRequest {
  /** The agent that made the call. */
  caller: { id: string; name: string; depth: number };
  /** The tool's name (`write_file`, `docs:search`). */
  tool: string;
  /** What it touches. */
  category: ToolCategory;
  /** How this call touches it (`read`, `write`, `other`), as the planner sees it. */
  kind: ToolKind;
  /** The call's arguments, validated. */
  arguments: unknown;
  /** The id of the call, as the model sent it. */
  toolCallId: string;
}

/** A tool policy's answer for one call (or for a category): run it, refuse it, or ask a person. */
export type ToolDecision =
  | 'allow'
  | 'deny'
  | 'ask'
  | { decision: 'allow' }
  | { decision: 'deny'; reason?: string }
  | { decision: 'ask'; risk?: Risk; reason?: string };

/**
 * Decides which tool calls run at once, which are refused, and which wait for a person (`runtime.approve` /
 * `runtime.deny`): an answer per category (`{ file_op: 'ask', db_op: 'deny' }`), or a function of the call that may
 * answer `undefined` to leave it to the defaults. With a policy set, a call it says nothing of asks a person when it is
 * a file write (`file_op` and not a `read`) and runs otherwise; a tool's own `needsApproval` asks unless the policy
 * denies. A policy that throws denies the call.
 */
export type ToolPolicy =
  | Partial<Record<ToolCategory, ToolDecision>>
  | ((request: ToolApprovalRequest) => ToolDecision | undefined | Promise<ToolDecision | undefined>);

/** A person's answer to a tool call's request (`runtime.approve`, `runtime.deny`). */
export type PersonAnswer = { approved: true } | { approved: false; reason: string };

/** What becomes of one call: it runs, it is refused (with the reason the model sees), or it waits for a person. */
export type ApprovalOutcome = { run: true } | { run: false; reason: string } | { ask: true; risk: Risk; reason?: string };

const RUN: ApprovalOutcome = Object.freeze({ run: true });

/** The category of a tool: its own, else `sub_agent` for a delegation tool, else `tool`. */
export function categoryOf(tool: Tool): ToolCategory {
  return tool.category ?? (tool.delegates ? 'sub_agent' : 'tool');
}

/** True when a call of this tool may need a decision: it asks for approval itself, or a policy is set. */
export function mayNeedApproval(tool: Tool, policy: ToolPolicy | undefined): boolean {
  return policy !== undefined || (tool.needsApproval !== undefined && tool.needsApproval !== false);
}

/**
 * Decides one call (see {@link ToolPolicy}): the policy's answer, the tool's `needsApproval`, and the default that a
 * file write asks when a policy is set. A `needsApproval` function or a policy that throws refuses the call.
 */
export async function decideApproval(
  tool: Tool,
  request: ToolApprovalRequest,
  context: ToolContext,
  policy: ToolPolicy | undefined,
): Promise<ApprovalOutcome> {
  let asked: unknown;
  let needed: unknown;
  try {
    asked = policy === undefined ? undefined : typeof policy === 'function' ? await policy(request) : policy[request.category];
    needed = typeof tool.needsApproval === 'function' ? await tool.needsApproval(request.arguments as never, context) : tool.needsApproval;
  } catch (error) {
    return { run: false, reason: `The approval check failed (${errorMessage(error)}).` };
  }
  // An answer outside the ones documented refuses the call, as a check that throws does: a typo ('Deny', 'reject') or a
  // risk that is not one must not let a write through.
  if (needed !== undefined && typeof needed !== 'boolean') {
    return { run: false, reason: `The needsApproval of ${request.tool} answered ${describe(needed)}, not true or false, so the call is refused.` };
  }
  const decision = decisionOf(asked);
  if (decision === 'invalid') {
    return { run: false, reason: `The tool policy gave an answer it may not give (${describe(asked)}), so the call is refused.` };
  }
  const needs = needed === true;
  if (decision?.decision === 'deny') return { run: false, reason: decision.reason || `The policy does not allow ${request.tool} here.` };
  if (decision?.decision === 'ask') return ask(decision, needs);
  if (needs) return { ask: true, risk: 'medium', reason: `${request.tool} asks for a person's approval.` };
  if (decision === undefined && policy !== undefined && request.category === 'file_op' && request.kind !== 'read') {
    return { ask: true, risk: 'medium', reason: 'A file write asks for approval when a tool policy is set.' };
  }
  return RUN;
}

/** A policy's answer in one shape; `invalid` for anything but `allow`, `deny`, `ask` (alone or as `{ decision, … }`). */
function decisionOf(answer: unknown): { decision: 'allow' | 'deny' | 'ask'; risk?: Risk; reason?: string } | undefined | 'invalid' {
  if (answer === undefined) return undefined;
  if (answer === 'allow' || answer === 'deny' || answer === 'ask') return { decision: answer };
  if (typeof answer !== 'object' || answer === null) return 'invalid';
  const { decision, risk, reason } = answer as { decision?: unknown; risk?: unknown; reason?: unknown };
  if (decision !== 'allow' && decision !== 'deny' && decision !== 'ask') return 'invalid';
  if (risk !== undefined && !Risk.safeParse(risk).success) return 'invalid';
  if (reason !== undefined && typeof reason !== 'string') return 'invalid';
  return answer as { decision: 'allow' | 'deny' | 'ask'; risk?: Risk; reason?: string };
}

/** A value as an error names it: JSON when it can be, else its type. */
function describe(value: unknown): string {
  try {
    return JSON.stringify(value) ?? typeof value;
  } catch {
    return typeof value;
  }
}

function ask(decision: { risk?: Risk; reason?: string }, needs: boolean): ApprovalOutcome {
  return {
    ask: true,
    risk: decision.risk ?? 'medium',
    ...(decision.reason === undefined ? (needs ? { reason: 'The tool asks for approval.' } : {}) : { reason: decision.reason }),
  };
}

/** What is wrong with a tool policy, in words, or undefined when nothing is. */
export function toolPolicyProblem(policy: unknown): string | undefined {
  if (policy === undefined || typeof policy === 'function') return undefined;
  if (typeof policy !== 'object' || policy === null || Array.isArray(policy)) return 'toolPolicy must be a function or an object of categories.';
  for (const [category, decision] of Object.entries(policy)) {
    if (!TOOL_CATEGORIES.includes(category as ToolCategory)) return `toolPolicy names "${category}", which is not one of ${TOOL_CATEGORIES.join(', ')}.`;
    if (decisionOf(decision) === 'invalid') {
      return `toolPolicy.${category} must be "allow", "deny" or "ask" (or { decision, risk?: low | medium | high, reason? }).`;
    }
  }
  return undefined;
}
