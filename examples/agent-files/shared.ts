// What both scripts of this example share: the notes tool, the scripted model, and the store's place.
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { defineTool, type ModelReply, type ModelRequest } from 'troupe';
import { assignCall, callTools, ScriptedModel, toolCall } from 'troupe/testing';

/** The folder of agent files, and the session store both processes use (HISTORY_FILE puts it elsewhere). */
export const agentsDir = fileURLToPath(new URL('./agents', import.meta.url));
export const historyFile = process.env.HISTORY_FILE ?? fileURLToPath(new URL('./history.json', import.meta.url));

const notes: Record<string, string> = {
  storage: 'notes/storage.md: 2.0 writes sessions atomically and locks the file between processes.',
  api: 'notes/api.md: 2.0 adds resume and background tasks.',
};

export const readNotes = defineTool({
  name: 'read_notes',
  description: 'Reads the project note on a topic (storage or api).',
  parameters: z.object({ topic: z.enum(['storage', 'api']) }),
  kind: 'read',
  targets: ({ topic }) => [`notes/${topic}.md`],
  execute: ({ topic }) => notes[topic],
});

/**
 * What a real model would answer, for each agent of the folder. Each answer is read from the conversation so far, so
 * a session resumed in another process (with a fresh model) goes on where it stopped.
 */
const replies: Record<string, (request: ModelRequest) => ModelReply | string> = {
  planner: (request) =>
    request.messages.some((message) => message.role === 'tool')
      ? `Release notes: ${request.messages.filter((message) => message.role === 'tool').map((message) => message.content.split('\n\n[agent_id')[0]).join(' ')}`
      : {
          content: 'Two parts, side by side.',
          toolCalls: [
            assignCall('researcher', 'What changed in storage for 2.0?', { description: 'Find the storage changes', id: 'p1' }),
            assignCall('editor', 'Write one line about the 2.0 API.', { description: 'Write the API line', id: 'p2' }),
          ],
        },
  researcher: (request) => {
    const last = request.messages.at(-1);
    const earlier = request.messages.find((message) => message.role === 'assistant' && message.content.startsWith('Per '));
    if (last?.role === 'tool') return `Per ${last.content.split(':')[0]}, sessions are now written atomically and locked.`;
    if (earlier) return `Building on my earlier finding ("${earlier.content}"): a crash mid-write leaves the old file whole.`;
    return callTools(toolCall('read_notes', { topic: 'storage' }, 'r1'));
  },
  editor: (request) =>
    request.messages.at(-1)?.role === 'tool'
      ? 'Version 2.0 lets you resume agents and run them in the background.'
      : callTools(toolCall('read_notes', { topic: 'api' }, 'e1')),
};

export const model = new ScriptedModel((request) => replies[request.agentName]!(request), { latencyMs: 50 });
