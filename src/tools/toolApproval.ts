import { errorMessage } from '../errors.js';
import type { Risk } from '../events/events.js';
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
  let asked: ToolDecision | undefined;
  let needs: boolean;
  try {
    asked = policy === undefined ? undefined : typeof policy === 'function' ? await policy(request) : policy[request.category];
    needs = typeof tool.needsApproval === 'function' ? (await tool.needsApproval(request.arguments as never, context)) === true : tool.needsApproval === true;
  } catch (error) {
    return { run: false, reason: `The approval check failed (${errorMessage(error)}).` };
  }
  const decision: { decision: 'allow' | 'deny' | 'ask'; risk?: Risk; reason?: string } | undefined =
    asked === undefined ? undefined : typeof asked === 'string' ? { decision: asked } : asked;
  if (decision?.decision === 'deny') return { run: false, reason: decision.reason || `The policy does not allow ${request.tool} here.` };
  if (decision?.decision === 'ask') return ask(decision, needs);
  if (needs) return { ask: true, risk: 'medium', reason: `${request.tool} asks for a person's approval.` };
  if (decision === undefined && policy !== undefined && request.category === 'file_op' && request.kind !== 'read') {
    return { ask: true, risk: 'medium', reason: 'A file write asks for approval when a tool policy is set.' };
  }
  return RUN;
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
    const plain = typeof decision === 'object' && decision !== null ? (decision as { decision?: unknown }).decision : decision;
    if (plain !== 'allow' && plain !== 'deny' && plain !== 'ask') return `toolPolicy.${category} must be "allow", "deny" or "ask".`;
  }
  return undefined;
}
