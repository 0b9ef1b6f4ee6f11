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
