import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import { defineTool, type Tool } from '../defineTool.js';
import { toolReply } from '../toolReply.js';
import { FILE_LIMITS, type FileLimits } from './fileLimits.js';
import { fileTarget, workspaceOf } from './fileToolWorkspace.js';
import { formatSize, isBinaryText, writeAtomically } from './textFile.js';
import type { Workspace } from './Workspace.js';

const EditFileArgs = z.object({
  path: z.string().describe('The file, relative to the workspace.'),
  old_string: z.string().min(1).describe('The exact text to replace, whitespace included; it must occur once unless replace_all.'),
  new_string: z.string().describe('The text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of exactly one.'),
});

/**
 * `edit_file`: replaces an exact text in a file of the workspace, written back atomically. The text must occur
 * exactly once (or give `replace_all`); a text not found, or found more than once, is an error result that says
 * what to do, and the file is left as it was. Binary files and files over 10 MiB are refused. Its planner target is
 * the file.
 */
export function editFileTool(workspace: Workspace | undefined, limits: FileLimits = FILE_LIMITS): Tool {
  return defineTool({
    category: 'file_op',
    name: 'edit_file',
    description:
      'Replaces old_string with new_string in a file of the workspace. old_string must match the file exactly ' +
      '(whitespace and indentation included) and occur once; give more of the surrounding lines to make it unique, ' +
      'or set replace_all to change every occurrence.',
    parameters: EditFileArgs,
    kind: 'write',
    realTime: true, // disk I/O: under a simulated clock it takes no simulated time, and repeats
    targets: ({ path }) => [fileTarget(workspace, path)],
    execute: async ({ path, old_string: before, new_string: after, replace_all: all }) => {
      const { real, relative, exists } = await workspaceOf(workspace, 'edit_file').locate(path, 'edit_file');
      const fail = (message: string): never => {
        throw new ToolError(`${relative}: ${message}`, 'edit_file');
      };
      if (!exists) fail('the file does not exist; write_file makes a new file.');
      const stats = await stat(real);
      if (stats.isDirectory()) fail('is a folder, not a file.');
      if (!stats.isFile()) fail('is not a regular file.');
      if (stats.size > limits.fileBytes) fail(`the file is too large to edit (${formatSize(stats.size)}).`);
      const bytes = await readFile(real);
      if (isBinaryText(bytes)) fail('is a binary file; it cannot be edited.');
      if (before === after) fail('old_string and new_string are the same; nothing would change.');
      // Decoded strictly: a file in another encoding (Latin-1, UTF-16) written back as UTF-8 would change bytes nobody
      // asked to change. A byte order mark stays in the text, so it is written back too.
      let text = '';
      try {
        text = STRICT_UTF8.decode(bytes);
      } catch {
        fail('is not UTF-8 text (another encoding, such as Latin-1); editing it would change bytes it was not asked to. Convert it to UTF-8 first, or give its whole text to write_file.');
      }
      const count = occurrences(text, before);
      if (count === 0) fail('old_string was not found. Read the file again and copy the text exactly, whitespace included.');
      if (count > 1 && all !== true) {
        fail(`old_string occurs ${count} times. Give more of the surrounding text to make it unique, or set replace_all: true.`);
      }
      await writeAtomically(real, all === true ? text.split(before).join(after) : text.replace(before, () => after));
      const replaced = all === true ? count : 1;
      return toolReply({
        content: `Edited ${relative}: replaced ${replaced} occurrence${replaced === 1 ? '' : 's'}.`,
        metadata: { path: relative, replaced },
      });
    },
  });
}

/** UTF-8 that refuses any other encoding, and keeps a byte order mark as text. */
const STRICT_UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** How many times `part` occurs in `text`, not overlapping. */
function occurrences(text: string, part: string): number {
  let count = 0;
  for (let at = text.indexOf(part); at !== -1; at = text.indexOf(part, at + part.length)) count += 1;
  return count;
}
