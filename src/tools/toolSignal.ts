const SIGNAL = Symbol.for('troupe.toolSignal');

/**
 * What a built-in tool returns to change what its agent does after the batch, instead of a result: `wait` (the
 * call's result comes from messages that have not arrived yet; the agent waits for them in `running.waiting`) or
 * `finish` (the agent ends after this batch, with `answer` as its result).
 */
export type ToolSignal = { readonly kind: 'wait' } | { readonly kind: 'finish'; readonly answer?: string };

/** The call waits for messages registered with the post office; its tool message is filled in when the agent wakes. */
export function waitSignal(): ToolSignal {
  return Object.freeze({ [SIGNAL]: true, kind: 'wait' as const });
}

/** The agent ends after this batch, with `answer` (or its last answer) as its result. */
export function finishSignal(answer?: string): ToolSignal {
  // A blank answer is no answer: the agent's last answer stands.
  const given = answer !== undefined && answer.trim() !== '';
  return Object.freeze({ [SIGNAL]: true, kind: 'finish' as const, ...(given ? { answer } : {}) });
}

/** True for a value made by {@link waitSignal} or {@link finishSignal}. */
export function isToolSignal(value: unknown): value is ToolSignal {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[SIGNAL] === true;
}
