import MiniSearch from 'minisearch';

/** A text to rank, by id: a note's content and tags. */
export interface RankedText {
  readonly id: string;
  readonly content: string;
  readonly tags: readonly string[];
}

/** One ranked text: its id and its score (higher is better; scores of one ranking compare, not across rankings). */
export interface Rank {
  id: string;
  score: number;
}

/**
 * Ranks texts against a query by BM25 (MiniSearch's BM25+: term frequency saturated, document length normalised,
 * rare terms weigh more), over the content and the tags (a tag's match counts double). Terms of four letters or more
 * match by prefix, so `deploy` finds `deployment`; a text that matches no term is left out. Best first, at most `limit`.
 */
export function rankLexically(query: string, texts: readonly RankedText[], limit: number): Rank[] {
  const index = new MiniSearch<RankedText>({
    fields: ['content', 'tags'],
    extractField: (text, field) => (field === 'tags' ? text.tags.join(' ') : String(text[field as keyof RankedText])),
  });
  index.addAll(texts);
  return index
    .search(query, { prefix: (term) => term.length >= 4, combineWith: 'OR', boost: { tags: 2 } })
    .slice(0, limit)
    .map((hit) => ({ id: String(hit.id), score: hit.score }));
}

/**
 * Ranks vectors by cosine similarity to the query's vector, best first, at most `limit`; a vector of another length
 * than the query's, or of length zero, is left out.
 */
export function rankBySimilarity(query: readonly number[], vectors: ReadonlyMap<string, readonly number[]>, limit: number): Rank[] {
  const ranks: Rank[] = [];
  for (const [id, vector] of vectors) {
    const score = cosine(query, vector);
    if (score !== undefined) ranks.push({ id, score });
  }
  return ranks.sort((a, b) => b.score - a.score).slice(0, limit);
}

function cosine(a: readonly number[], b: readonly number[]): number | undefined {
  if (a.length !== b.length || a.length === 0) return undefined;
  let dot = 0;
  let normA = 0;
  let normB = 0;
  for (let index = 0; index < a.length; index++) {
    dot += a[index]! * b[index]!;
    normA += a[index]! * a[index]!;
    normB += b[index]! * b[index]!;
  }
  return normA === 0 || normB === 0 ? 0 : dot / Math.sqrt(normA * normB);
}
