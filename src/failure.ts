import { z } from 'zod';
import { ModelCallError, ModelError, TROUPE_ERROR_CODES, TroupeError, errorMessage, type Fault } from './errors.js';

/**
 * The codes of failures the runtime decides rather than throws: a limit reached, an ending without an answer, a stop
 * from outside, or an error that was not troupe's own (`unexpected`: a plain `Error` thrown outside a model call, such
 * as a tool batch that crashed; a model's plain `Error` is a `model_call_failed`).
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
  'required_tools',
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
 * and whether it may be retried); a {@link ModelCallError} keeps its cause's (see `modelCallInfo`); anything else is
 * `unexpected`, on the side given by `where` it was thrown.
 */
export function errorInfo(error: unknown, where: Fault): ErrorInfo {
  if (error instanceof ModelCallError) return modelCallInfo(error);
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

/**
 * A failed model call as an {@link ErrorInfo}: its own message (naming the agent, the model and the cause), and the
 * code and side of its cause when the cause is a troupe error. The cause's code wins over `model_call_failed` because
 * `code` is documented as the identity of the cause and programs switch on it: `model_error` with its `status` and
 * `retryable` decides a retry (`examples/failures.ts`), and `script_exhausted` is a test's script at fault (side `user`),
 * not the model. A cause that is no troupe error (a plain `Error`, a string, `undefined`) gets the wrapper's own code,
 * `model_call_failed` on the model's side, which tells it apart from an `unexpected` crash elsewhere.
 */
function modelCallInfo(error: ModelCallError): ErrorInfo {
  const cause = error.cause instanceof TroupeError ? errorInfo(error.cause, 'model') : { code: error.code, fault: error.fault };
  return {
    code: cause.code,
    message: error.message,
    fault: cause.fault,
    ...(error.status === undefined ? {} : { status: error.status }),
    ...(error.retryable === undefined ? {} : { retryable: error.retryable }),
  };
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
  required_tools: { code: 'required_tools', fault: 'model' },
};

/**
 * A failure stored as a text by an older troupe (a version-1 recording or session record), as an {@link ErrorInfo}:
 * the message kept, the code and side its reason implies (`unexpected` when the reason is unknown).
 */
export function errorFromText(message: string, reason: string | null | undefined): ErrorInfo {
  const { code, fault } = FROM_REASON[reason ?? 'error'] ?? FROM_REASON.error!;
  return { code, message, fault };
}
