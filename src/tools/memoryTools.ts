import { z } from 'zod';
import { NoteScope, type NoteSearch } from '../memory/NoteStore.js';
import { defineTool, type Tool } from './defineTool.js';
import { toolReply } from './toolReply.js';

/** What the memory tools share in the planner: a search waits for a save made before it in the same turn. */
const MEMORY_TARGET = 'memory';

/** `memory_save`: a long-term note in the runtime's store, found by later runs' `memory_search`. */
export const memorySave = defineTool({
  name: 'memory_save',
  description:
    'Saves a note to your long-term memory, kept across runs: a fact you learnt, a decision and its reason, a ' +
    'lesson. scope "agent" (default): only agents of your name find it; "shared": every agent does. Write each note ' +
    'so it makes sense on its own later. Never save secrets.',
  parameters: z.object({
    content: z.string().trim().min(1).max(4000).describe('The note.'),
    tags: z.array(z.string().trim().min(1).max(40)).max(10).optional().describe('A few words to find it by.'),
    scope: NoteScope.optional().describe('"agent" (default) or "shared".'),
  }),
  kind: 'write',
  realTime: true, // the store may be a file: under a simulated clock it takes no simulated time, and repeats
  targets: () => [MEMORY_TARGET],
  execute: async ({ content, tags, scope }, { notes }) => {
    const note = await notes.save(content, { ...(tags ? { tags } : {}), ...(scope ? { scope } : {}) });
    return toolReply({ content: `Saved note ${note.id} (${note.scope}).`, metadata: { noteId: note.id } });
  },
});

/** `memory_search`: the agent's notes and the shared ones, best first for a query. */
export const memorySearch = defineTool({
  name: 'memory_search',
  description: 'Searches your long-term memory (your notes and the shared ones, from this run and earlier runs) and returns the best matches, best first.',
  parameters: z.object({
    query: z.string().trim().min(1).describe('What you look for, in words.'),
    limit: z.number().int().min(1).max(20).optional().describe('At most this many notes (default 5).'),
  }),
  kind: 'read',
  realTime: true, // the store may be a file: under a simulated clock it takes no simulated time, and repeats
  targets: () => [MEMORY_TARGET],
  idempotent: true,
  execute: async ({ query, limit }, { notes }) => {
    const found = await notes.search(query, limit === undefined ? {} : { limit });
    return toolReply({
      content: formatNoteSearch(found),
      metadata: { ranking: found.ranking, notes: found.hits.map((hit) => hit.note.id) },
    });
  },
});

/** The built-in memory tools. */
export const memoryTools: readonly Tool[] = Object.freeze([memorySave, memorySearch] as Tool[]);

/** A search's notes as the model reads them: one block a note, best first, with its id, scope, author and date. */
function formatNoteSearch(found: NoteSearch): string {
  if (found.hits.length === 0) return 'No note matches.';
  const notes = found.hits.map(({ note }, index) => {
    const tags = note.tags.length > 0 ? ` [${note.tags.join(', ')}]` : '';
    return `${index + 1}. ${note.id} (${note.scope}, by ${note.agentName}, ${new Date(note.savedAt).toISOString().slice(0, 10)})${tags}\n${note.content}`;
  });
  return `${found.hits.length} note(s), best first:\n\n${notes.join('\n\n')}`;
}
