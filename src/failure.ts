import { z } from 'zod';
import { ModelError, TROUPE_ERROR_CODES, TroupeError, errorMessage, type Fault } from './errors.js';

/**
 * The codes of failures the runtime decides rather than throws: a limit reached, an ending without an answer, a stop
 * from outside, or an error that was not troupe's own (`unexpected`: a plain `Error` from a user's model or tool).
 */
export const ENDING_CODES = [
  'budget_exceeded',
  'max_turns',
  'idle_timeout',
  'cancelled',
  'denied',
  'empty_answer',
  'no_answer',
  'step_failed',
  'unexpected',
] as const;

/** A code of a failure the runtime decides (see {@link ENDING_CODES}). */
export type EndingCode = (typeof ENDING_CODES)[number];

/** The schema of a failure's plain-JSON form (see {@link ErrorInfo}); events validate with it. */
export const ErrorInfo = z.object({
  /** A literal to `switch` on: a {@link TroupeErrorCode} or an {@link EndingCode}. */
  code: z.enum([...TROUPE_ERROR_CODES, ...ENDING_CODES]),
  /** What happened, for people. */
  message: z.string(),
  /** The side it comes from. */
  fault: z.enum(['user', 'model', 'tool', 'system']),
  /** A model error's HTTP status, when there was one. */
  status: z.number().int().optional(),
  /** Whether the same work may succeed if tried again. */
  retryable: z.boolean().optional(),
});

/**
 * A failure as plain JSON: what an agent's failure carries across the actor boundary, and what `AgentResult.error`,
 * `AgentOutcome.error` and the `agent.failed` event hold. Its `code` keeps the identity of the error that caused it
 * (`model_error`, `aborted`, `script_exhausted`, …) or names the ending the runtime decided (`max_turns`, …).
 */
export type ErrorInfo = z.infer<typeof ErrorInfo>;

/**
 * A thrown value as an {@link ErrorInfo}. A troupe error keeps its code and side (and, for a model error, its status
 * and whether it may be retried); anything else is `unexpected`, on the side given by `where` it was thrown.
 */
export function errorInfo(error: unknown, where: Fault): ErrorInfo {
  if (error instanceof ModelError) {
    return {
      code: error.code,
      message: error.message,
      fault: error.fault,
      ...(error.status === undefined ? {} : { status: error.status }),
      retryable: error.retryable,
    };
  }
  if (error instanceof TroupeError) return { code: error.code, message: error.message, fault: error.fault };
  return { code: 'unexpected', message: errorMessage(error), fault: where };
}

/** A failure the runtime decides: its code, message and side, and whether trying again may help. */
export function ending(code: EndingCode, message: string, fault: Fault, retryable?: boolean): ErrorInfo {
  return retryable === undefined ? { code, message, fault } : { code, message, fault, retryable };
}

/** What a failure's reason says of its cause, for failures stored before they carried a code (a text only). */
const FROM_REASON: Readonly<Record<string, { code: EndingCode; fault: Fault }>> = {
  error: { code: 'unexpected', fault: 'system' },
  timeout: { code: 'idle_timeout', fault: 'system' },
  cancelled: { code: 'cancelled', fault: 'user' },
  max_turns: { code: 'max_turns', fault: 'user' },
  budget: { code: 'budget_exceeded', fault: 'user' },
  denied: { code: 'denied', fault: 'user' },
};

/**
 * A failure stored as a text by an older troupe (a version-1 recording or session record), as an {@link ErrorInfo}:
 * the message kept, the code and side its reason implies (`unexpected` when the reason is unknown).
 */
export function errorFromText(message: string, reason: string | null | undefined): ErrorInfo {
  const { code, fault } = FROM_REASON[reason ?? 'error'] ?? FROM_REASON.error!;
  return { code, message, fault };
}
