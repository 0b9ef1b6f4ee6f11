import { distance } from 'fastest-levenshtein';

/**
 * The keys of an options object that are not among `known`, each with the known key it most likely meant: a misspelled
 * option (`maxParalel`) is otherwise ignored without a word, and its default used instead.
 */
export function unknownKeys(given: object, known: readonly string[]): { key: string; meant?: string }[] {
  const unknown: { key: string; meant?: string }[] = [];
  for (const key of Object.keys(given)) {
    if (known.includes(key)) continue;
    const meant = closestKey(key, known);
    unknown.push(meant === undefined ? { key } : { key, meant });
  }
  return unknown;
}

/**
 * The sentence that names unknown keys for an error or a warning: `unknown option "maxParalel" (did you mean
 * "maxParallel"?)`; several are joined with `; `. `what` names what they are (`option`, `field`).
 */
export function describeUnknownKeys(unknown: readonly { key: string; meant?: string }[], what: string): string {
  return unknown.map(({ key, meant }) => `unknown ${what} "${key}"${meant === undefined ? '' : ` (did you mean "${meant}"?)`}`).join('; ');
}

/**
 * The known key closest to `key`: the same but for case, or within a few edits (a third of its length, at least 2),
 * the closest first. None when nothing is that close: a suggestion far from what was typed misleads more than it helps.
 */
function closestKey(key: string, known: readonly string[]): string | undefined {
  const lower = key.toLowerCase();
  const sameButCase = known.find((candidate) => candidate.toLowerCase() === lower);
  if (sameButCase !== undefined) return sameButCase;
  const limit = Math.max(2, Math.floor(key.length / 3));
  let best: string | undefined;
  let bestDistance = limit + 1;
  for (const candidate of known) {
    const edits = distance(lower, candidate.toLowerCase());
    if (edits < bestDistance) {
      best = candidate;
      bestDistance = edits;
    }
  }
  return best;
}

/**
 * What is wrong with the fields of a nested option (`inbox`, `budget`): the first unknown one, with the field it most
 * likely meant, then the fields there are; undefined when every field is known. A misspelled field (`capcity`) would
 * otherwise leave the default in force without a word.
 */
export function nestedFieldsProblem(given: object, known: readonly string[], field: string): string | undefined {
  const unknown = unknownFields(given, known);
  return unknown === undefined ? undefined : `${field}: ${unknown}.`;
}

/** The unknown fields of `given` and the fields there are, in words (`unknown field "x" …; its fields are a and b`), or undefined. */
export function unknownFields(given: object, known: readonly string[]): string | undefined {
  const unknown = unknownKeys(given, known);
  if (unknown.length === 0) return undefined;
  const fields = known.length === 1 ? known[0] : `${known.slice(0, -1).join(', ')} and ${known[known.length - 1]}`;
  return `${describeUnknownKeys(unknown, 'field')}; its fields are ${fields}`;
}

/** The fields of an inbox option (`{ capacity, overflow }`). */
export const INBOX_FIELDS: readonly string[] = ['capacity', 'overflow'];

/** The fields of a budget (`{ maxTurns, maxTokens, maxCostUsd }`). */
export const BUDGET_FIELDS: readonly string[] = ['maxTurns', 'maxTokens', 'maxCostUsd'];
