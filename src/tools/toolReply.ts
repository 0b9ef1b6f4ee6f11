const REPLY = Symbol.for('troupe.toolReply');

/** What {@link toolReply} makes: the text the model sees, whether it is an error, and data for programs. */
export interface ToolReply {
  /** The text the model sees as the tool's result. */
  readonly content: string;
  /** True when the call failed: the model sees `content` as an error. */
  readonly isError: boolean;
  /** Plain JSON data kept on the tool message for programs and sessions; the model does not see it. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/**
 * A tool result with more than text: return it from a tool's `execute` to mark the result as an error the model
 * should see (without throwing) or to attach `metadata` (kept on the tool message, not sent to the model).
 *
 * @example
 * execute: async ({ path }) => toolReply({ content: await readFile(path, 'utf8'), metadata: { path } })
 */
export function toolReply(reply: { content: string; isError?: boolean; metadata?: Record<string, unknown> }): ToolReply {
  return Object.freeze({
    [REPLY]: true,
    content: String(reply.content),
    isError: reply.isError === true,
    ...(reply.metadata === undefined ? {} : { metadata: reply.metadata }),
  });
}

/** Marks a reply whose metadata troupe made itself, from plain data: it is not checked again (see `plainToolReply`). */
const PLAIN = Symbol('troupe.plainMetadata');

/**
 * A {@link toolReply} made by troupe's own tools (a delegation's answer), whose metadata is plain JSON by construction:
 * the check a tool's own metadata gets (a cycle, a BigInt or a Map refused, a copy made through JSON) is skipped, as
 * it would cost every sub-agent of a fan-out a JSON round trip of its figures. Not part of the package's API.
 */
export function plainToolReply(reply: { content: string; isError?: boolean; metadata: Record<string, unknown> }): ToolReply {
  return Object.freeze({ [REPLY]: true, [PLAIN]: true, content: reply.content, isError: reply.isError === true, metadata: reply.metadata });
}

/** True for a reply made by {@link plainToolReply}: its metadata needs no check. */
export function hasPlainMetadata(reply: ToolReply): boolean {
  return (reply as unknown as Record<symbol, unknown>)[PLAIN] === true;
}

/** True for a value made by {@link toolReply}. */
export function isToolReply(value: unknown): value is ToolReply {
  return typeof value === 'object' && value !== null && (value as Record<symbol, unknown>)[REPLY] === true;
}
