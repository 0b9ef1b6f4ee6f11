import { nanoid } from 'nanoid';
import { z } from 'zod';
import { AbortedError, ConfigurationError, errorMessage } from '../errors.js';
import type { Model } from '../models/Model.js';
import type { Redactor } from '../redaction.js';
import { checkSchemaVersion, NOTE_SCHEMA_VERSION } from '../schemaVersion.js';
import type { MemoryPort } from './MemoryPort.js';
import { rankBySimilarity, rankLexically, type Rank } from './rankNotes.js';

/** The key under which every note is kept, as one list in save order. */
export const NOTES_KEY = '__agent_notes__';

/** Who finds a note: `agent`, only agents of the name that saved it; `shared`, every agent of every runtime on the store. */
export const NoteScope = z.enum(['agent', 'shared']);
/** Who finds a note: `agent`, only agents of the name that saved it; `shared`, every agent of every runtime on the store. */
export type NoteScope = z.infer<typeof NoteScope>;

/**
 * One long-term note, as stored in `__agent_notes__`: plain JSON, its secrets already replaced. A note of a newer
 * `schemaVersion` than {@link NOTE_SCHEMA_VERSION} does not parse, and is left out of lists and searches.
 */
export const Note = z.object({
  /** The note's format ({@link NOTE_SCHEMA_VERSION}). */
  schemaVersion: z.literal(NOTE_SCHEMA_VERSION),
  /** `note:<key>`. */
  id: z.string(),
  /** What the agent wrote down. */
  content: z.string(),
  /** Words to find it by. */
  tags: z.array(z.string()),
  scope: NoteScope,
  /** The name of the agent that saved it (whom an `agent` note belongs to). */
  agentName: z.string(),
  /** The id of the agent that saved it. */
  agentId: z.string(),
  /** When it was saved, in ms since 1970: the wall clock's time, or a simulated clock's in a runtime on one. */
  savedAt: z.number(),
});
/** One long-term note, as stored. */
export type Note = z.infer<typeof Note>;

/** A note a search found, with its score in that search's ranking (higher is better). */
export interface NoteHit {
  note: Note;
  score: number;
}

/** What a search found, and how it ranked. */
export interface NoteSearch {
  /** `embeddings`: by the cosine of the model's vectors; `lexical`: by BM25 over words. */
  ranking: 'embeddings' | 'lexical';
  /** Best first. */
  hits: NoteHit[];
  /** Why a model that embeds was not used (its call failed), when the ranking fell back to `lexical`. */
  fallback?: string;
}

/** The agent a {@link NoteStore} works for: whose notes it finds, and the model that may embed. */
export interface NoteReader {
  /** The agent's definition name: its `agent` notes are those saved under this name. */
  agentName: string;
  /** The agent's id, kept on what it saves (default `runtime`). */
  agentId?: string;
  /** Its model: when it has `embed`, searches rank by meaning. */
  model?: Pick<Model, 'name' | 'embed' | 'embeddingModel'>;
  /** Stops an embedding call. */
  signal?: AbortSignal;
}

/** An agent's notes, as tools get them (`context.notes`): save and search on its behalf. */
export interface AgentNotes {
  /** Saves a note (its secrets replaced first); scope `agent` unless told. */
  save(content: string, options?: { tags?: readonly string[]; scope?: NoteScope }): Promise<Note>;
  /** The notes this agent finds (its own `agent` notes and every `shared` one) best first for `query`; at most `limit` (5). */
  search(query: string, options?: { limit?: number }): Promise<NoteSearch>;
}

/** A note's key is drawn at most this many times while the store holds the key drawn. */
const MAX_KEY_DRAWS = 8;

/** At most this many vectors are kept in memory; past it the cache starts afresh. */
const MAX_CACHED_VECTORS = 10_000;

/**
 * Long-term notes in a {@link MemoryPort}, kept across runs under `__agent_notes__` (a list each save appends to, so
 * two processes on one `JsonFileMemory` both land). Searches rank by embeddings when the reader's model can embed
 * (`Model.embed`), and by BM25 otherwise, or when embedding fails. Vectors are not stored: each store embeds a
 * text once per embedding model and keeps the vector in memory.
 */
export class NoteStore {
  private readonly vectors = new Map<string, number[]>();

  /**
   * @param memory where notes are kept (the runtime's `store`).
   * @param options `redactor` replaces secrets in what is saved (content and tags); `now` for save times (default
   *   `Date.now`); `makeId` for note keys (default nanoid).
   */
  constructor(
    private readonly memory: MemoryPort<unknown>,
    private readonly options: { redactor?: Redactor; now?: () => number; makeId?: () => string } = {},
  ) {}

  /** The store bound to one agent: what a tool's `context.notes` is. */
  forAgent(reader: NoteReader): AgentNotes {
    return {
      save: (content, options = {}) => this.save(content, { ...options, agentName: reader.agentName, agentId: reader.agentId ?? 'runtime' }),
      search: (query, options = {}) => this.search(query, { ...reader, ...options }),
    };
  }

  /**
   * Saves a note, its content and tags with their secrets replaced; resolves once it is in the store. Its key is one
   * no note of the store has: a seeded runtime draws the same keys on every run, and its notes outlive the run. A note
   * that would not read back (content not a text, tags not a list of texts, an unknown scope) is refused with
   * `ConfigurationError`, nothing saved.
   */
  async save(content: string, by: { agentName: string; agentId?: string; tags?: readonly string[]; scope?: NoteScope }): Promise<Note> {
    checkSave(content, by);
    const redact = <T>(value: T): T => (this.options.redactor ? this.options.redactor.redact(value) : value);
    const makeId = this.options.makeId ?? nanoid;
    const taken = await this.storedIds();
    let id = `note:${makeId()}`;
    // A key the store holds is drawn again, a few times; a source that keeps giving taken keys (a constant `makeId`)
    // gets a number added, rather than being asked for ever.
    for (let draws = 1; taken.has(id) && draws < MAX_KEY_DRAWS; draws += 1) id = `note:${makeId()}`;
    for (let n = 2, drawn = id; taken.has(id); n += 1) id = `${drawn}-${n}`;
    const note: Note = {
      schemaVersion: NOTE_SCHEMA_VERSION,
      id,
      content: redact(content),
      tags: redact([...(by.tags ?? [])]),
      scope: by.scope ?? 'agent',
      agentName: by.agentName,
      agentId: by.agentId ?? 'runtime',
      savedAt: (this.options.now ?? Date.now)(),
    };
    await this.memory.append(NOTES_KEY, note);
    return note;
  }

  /** The ids of every note in the store, of any format. */
  private async storedIds(): Promise<Set<unknown>> {
    const stored = await this.memory.get(NOTES_KEY);
    return new Set((Array.isArray(stored) ? stored : []).map((value: unknown) => (value as { id?: unknown } | null)?.id));
  }

  /**
   * Every note that parses in today's format, in save order; with `agentName`, only those that agent finds (its own
   * `agent` notes and every `shared` one). Notes of a newer format, or that do not parse, are left out.
   */
  async list(reader: { agentName?: string } = {}): Promise<Note[]> {
    const stored = await this.memory.get(NOTES_KEY);
    const notes = (Array.isArray(stored) ? stored : []).flatMap((value: unknown) => {
      const version = checkSchemaVersion((value as { schemaVersion?: unknown } | null)?.schemaVersion, NOTE_SCHEMA_VERSION);
      if (version.status !== 'known') return [];
      const parsed = Note.safeParse({ ...(value as object), schemaVersion: NOTE_SCHEMA_VERSION });
      return parsed.success ? [parsed.data] : [];
    });
    const { agentName } = reader;
    return agentName === undefined ? notes : notes.filter((note) => note.scope === 'shared' || note.agentName === agentName);
  }

  /**
   * The notes `reader` finds, best first for `query`, at most `limit` (default 5): by the cosine of embeddings when
   * its model embeds, else (or when embedding fails: `fallback` says why) by BM25. An abort of `signal` rejects; a
   * query that is not a text, or a `limit` that is not a whole number from 0 up, is refused with `ConfigurationError`.
   */
  async search(query: string, reader: NoteReader & { limit?: number }): Promise<NoteSearch> {
    if (typeof query !== 'string') throw new ConfigurationError(`A note search needs a query text; it was given ${typeof query}.`);
    const limit = reader.limit ?? 5;
    if (!Number.isInteger(limit) || limit < 0) {
      throw new ConfigurationError(`A note search's limit must be a whole number from 0 up; it was given ${String(limit)}.`);
    }
    const notes = await this.list(reader);
    // Ranked by their place in the list, not their ids: a store may hold two notes of one id (two runs of one seed
    // before keys were checked, or two processes), and the ranking would lose one of them (BM25's index refuses both).
    const hits = (ranks: Rank[]) => ranks.map(({ id, score }) => ({ note: notes[Number(id)]!, score }));
    let fallback: string | undefined;
    if (reader.model?.embed && notes.length > 0) {
      try {
        return { ranking: 'embeddings', hits: hits(await this.rankByMeaning(query, notes, reader, limit)) };
      } catch (error) {
        if (reader.signal?.aborted) throw error instanceof AbortedError ? error : new AbortedError('The note search was aborted.');
        fallback = `embedding with ${reader.model.embeddingModel ?? reader.model.name} failed: ${errorMessage(error)}`;
      }
    }
    const texts = notes.map((note, index) => ({ id: String(index), content: note.content, tags: note.tags }));
    return { ranking: 'lexical', hits: hits(rankLexically(query, texts, limit)), ...(fallback === undefined ? {} : { fallback }) };
  }

  /** Ranks notes by the cosine of their vectors to the query's, embedding the query and every text not cached in one call. */
  private async rankByMeaning(query: string, notes: readonly Note[], reader: NoteReader, limit: number): Promise<Rank[]> {
    const model = reader.model!;
    const space = model.embeddingModel ?? model.name;
    const keyOf = (text: string) => `${space}\u0000${text}`;
    if (this.vectors.size + notes.length > MAX_CACHED_VECTORS) this.vectors.clear();
    const missing = [...new Set(notes.map((note) => textOf(note)))].filter((text) => !this.vectors.has(keyOf(text)));
    const [queryVector, ...found] = await model.embed!([query, ...missing], reader.signal);
    missing.forEach((text, index) => this.vectors.set(keyOf(text), found[index]!));
    const vectors = new Map(notes.flatMap((note, index) => {
      const vector = this.vectors.get(keyOf(textOf(note)));
      return vector ? [[String(index), vector] as const] : [];
    }));
    return rankBySimilarity(queryVector!, vectors, limit);
  }
}

/**
 * Refuses a note that would be stored but never found (a note that does not parse is left out of lists and searches):
 * content that is not a text, tags that are not a list of texts (a text would be spread into its letters), a scope
 * other than `agent` or `shared`, an agent name that is not a text.
 */
function checkSave(content: unknown, by: { agentName?: unknown; tags?: unknown; scope?: unknown }): void {
  const wrong = (what: string) => new ConfigurationError(`A note cannot be saved: ${what}.`);
  if (typeof content !== 'string') throw wrong(`its content must be a text, not ${typeof content}`);
  if (typeof by.agentName !== 'string' || by.agentName === '') throw wrong('agentName must be a non-empty text');
  if (by.tags !== undefined && (!Array.isArray(by.tags) || by.tags.some((tag) => typeof tag !== 'string'))) {
    throw wrong('tags must be a list of texts');
  }
  if (by.scope !== undefined && !NoteScope.safeParse(by.scope).success) throw wrong(`scope must be "agent" or "shared", not ${JSON.stringify(by.scope)}`);
}

/** The text of a note that is embedded: its content, and its tags when it has some. */
function textOf(note: Note): string {
  return note.tags.length === 0 ? note.content : `${note.content}\n(tags: ${note.tags.join(', ')})`;
}
