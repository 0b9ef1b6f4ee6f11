import type { z } from 'zod';

/**
 * The issue under zod's wrappers, with its whole path, for an error a person reads: a key a record refuses (a bad MCP
 * server name) is an `invalid_key` whose own message is "Invalid key in record" (the key's rule is inside), and a
 * union (an agent's `mcpServers`, a mapping or a list; `tools`, a list or a string) fails as an `invalid_union` whose
 * message is "Invalid input": the branch that got furthest says what is wrong, or, when every branch refused the
 * value's type, the types that would do. A union with a message of its own keeps it.
 */
export function innermostIssue(issue: z.core.$ZodIssue): { path: string[]; message: string } {
  const path = issue.path.map(String);
  let inner: z.core.$ZodIssue | undefined;
  if (issue.code === 'invalid_key') inner = issue.issues[0];
  // A union with a message of its own (McpServerConfig's) says it best; zod's default says nothing.
  if (issue.code === 'invalid_union' && issue.message === 'Invalid input') {
    const firsts = issue.errors.map((branch) => branch[0]).filter((first) => first !== undefined);
    inner = firsts.find((first) => first.path.length > 0) ?? (firsts.length === 1 ? firsts[0] : undefined);
    // Every branch refused the value's type (`tools: 5`): say which types would do.
    const expected = firsts.map((first) => (first.code === 'invalid_type' && first.path.length === 0 ? first.expected : undefined));
    if (inner === undefined && firsts.length > 0 && expected.every((type) => type !== undefined)) {
      return { path, message: `Invalid input: expected ${[...new Set(expected)].join(' or ')}` };
    }
  }
  if (inner === undefined) return { path, message: issue.message };
  const deeper = innermostIssue(inner);
  return { path: [...path, ...deeper.path], message: deeper.message };
}
