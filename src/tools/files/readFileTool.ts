import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import { defineTool, type Tool } from '../defineTool.js';
import { toolReply } from '../toolReply.js';
import { FILE_LIMITS, type FileLimits } from './fileLimits.js';
import { formatSize, isBinaryFile } from './textFile.js';
import { fileTarget, workspaceOf } from './fileToolWorkspace.js';
import type { Workspace } from './Workspace.js';

const ReadFileArgs = z.object({
  path: z.string().describe('The file, relative to the workspace.'),
  offset: z.number().int().positive().optional().describe('The first line to read, from 1 (default 1).'),
  limit: z.number().int().positive().optional().describe('How many lines to read (default and most: 2000).'),
});

/** One call's lines, numbered, and where they stopped. */
interface Excerpt {
  readonly text: string;
  readonly first: number;
  readonly last: number;
  /** The line to read on from, when the file goes on past what was read. */
  readonly next?: number;
}

/**
 * `read_file`: a text file of the workspace, numbered line by line (`     7\tconst a = 1;`), from `offset` for
 * `limit` lines. A long file is cut at the limits (2,000 lines, 256 KiB) with a note that says which `offset` reads
 * on; a binary file is refused with a note. Only what is shown is read from the disk.
 */
export function readFileTool(workspace: Workspace | undefined, limits: FileLimits = FILE_LIMITS): Tool {
  return defineTool({
    category: 'file_op',
    name: 'read_file',
    description:
      'Reads a text file of the workspace. Lines are numbered (number, tab, text). A long file is cut; use offset ' +
      '(first line, from 1) and limit (number of lines) to read a part.',
    parameters: ReadFileArgs,
    kind: 'read',
    realTime: true, // disk I/O: under a simulated clock it takes no simulated time, and repeats
    idempotent: true,
    targets: ({ path }) => [fileTarget(workspace, path)],
    execute: async ({ path, offset = 1, limit }) => {
      const { real, relative, exists } = await workspaceOf(workspace, 'read_file').locate(path, 'read_file');
      if (!exists) throw new ToolError(`${relative} does not exist. list_files shows the files there are.`, 'read_file');
      const stats = await stat(real);
      if (stats.isDirectory()) throw new ToolError(`${relative} is a folder; list_files shows what is in it.`, 'read_file');
      if (!stats.isFile()) throw new ToolError(`${relative} is not a regular file.`, 'read_file');
      if (await isBinaryFile(real)) {
        return toolReply({ content: `${relative} is a binary file (${formatSize(stats.size)}); it is not shown.`, isError: true });
      }
      const excerpt = await readLines(real, offset, Math.min(limit ?? limits.readLines, limits.readLines), limits);
      return toolReply({ content: excerpt.text + note(relative, offset, excerpt, stats.size), metadata: { path: relative, lines: [excerpt.first, excerpt.last] } });
    },
  });
}

/** What follows the lines: nothing for a whole file, else where the excerpt stopped and how to read on. */
function note(relative: string, offset: number, excerpt: Excerpt, size: number): string {
  if (excerpt.last < excerpt.first) {
    return offset === 1 ? `(${relative} is empty)` : `(${relative} has ${excerpt.first - 1} lines; offset ${offset} is past its end)`;
  }
  if (excerpt.next === undefined) return '';
  return `\n[${relative} (${formatSize(size)}) goes on: lines ${excerpt.first}-${excerpt.last} shown. Read on with offset: ${excerpt.next}.]`;
}

/**
 * Reads lines `offset`… of a file, stopping at `count` lines or the byte limit, without reading further. Lines end at
 * `\n` (a `\r` before it is dropped). Of each line only `lineChars` characters (and a `\r`) are kept as it is read:
 * a minified file of one 600 MB line would otherwise be gathered whole, past the longest string V8 can make, and
 * `readline` threw that out of reach of the call, an uncaught exception.
 */
async function readLines(path: string, offset: number, count: number, limits: FileLimits): Promise<Excerpt> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  const shown: string[] = [];
  const keep = limits.lineChars + 1; // room for a `\r` before the `\n`
  let number = 0;
  let bytes = 0;
  let next: number | undefined;
  let line = '';
  let overflow = false; // characters past `keep` were dropped
  /** The line read so far has ended: shown, or the excerpt is full (true). */
  const ended = (): boolean => {
    number += 1;
    const text = !overflow && line.endsWith('\r') ? line.slice(0, -1) : line;
    const long = overflow || text.length > limits.lineChars;
    line = '';
    overflow = false;
    if (number < offset) return false;
    const cut = long ? `${text.slice(0, limits.lineChars)}… [line cut at ${limits.lineChars} characters]` : text;
    const size = Buffer.byteLength(cut) + 8;
    if (shown.length >= count || (shown.length > 0 && bytes + size > limits.readBytes)) {
      next = number;
      return true;
    }
    shown.push(`${String(number).padStart(6)}\t${cut}`);
    bytes += size;
    return false;
  };
  /** Adds a piece of the current line, keeping at most `keep` characters of it. */
  const add = (piece: string): void => {
    if (overflow) return;
    line += piece;
    if (line.length > keep) {
      line = line.slice(0, keep);
      overflow = true;
    }
  };
  try {
    read: for await (const chunk of stream as AsyncIterable<string>) {
      let start = 0;
      for (let at = chunk.indexOf('\n'); at !== -1; at = chunk.indexOf('\n', start)) {
        add(chunk.slice(start, at));
        start = at + 1;
        if (ended()) break read;
      }
      add(chunk.slice(start));
    }
    if (next === undefined && (line !== '' || overflow)) ended(); // a last line without a newline
  } finally {
    stream.destroy();
  }
  const first = Math.min(offset, number + 1);
  return { text: shown.join('\n'), first, last: first + shown.length - 1, ...(next === undefined ? {} : { next }) };
}
