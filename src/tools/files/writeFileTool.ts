import { stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError } from '../../errors.js';
import { defineTool, type Tool } from '../defineTool.js';
import { toolReply } from '../toolReply.js';
import { fileTarget, workspaceOf } from './fileToolWorkspace.js';
import { countLines, formatSize, writeAtomically } from './textFile.js';
import type { Workspace } from './Workspace.js';

const WriteFileArgs = z.object({
  path: z.string().describe('The file, relative to the workspace; missing folders are made.'),
  content: z.string().describe('The whole new text of the file.'),
});

/**
 * `write_file`: writes a whole text file of the workspace, made anew or replaced, atomically (a temporary file
 * renamed over it), making missing folders. A write through a symbolic link inside the workspace changes the file it
 * points to; one that would lead outside is refused. Its planner target is the file.
 */
export function writeFileTool(workspace: Workspace | undefined): Tool {
  return defineTool({
    category: 'file_op',
    name: 'write_file',
    description:
      'Writes a text file of the workspace with the given content, replacing the file if it exists and making ' +
      'missing folders. To change part of a file, use edit_file.',
    parameters: WriteFileArgs,
    kind: 'write',
    realTime: true, // disk I/O: under a simulated clock it takes no simulated time, and repeats
    idempotent: true,
    targets: ({ path }) => [fileTarget(workspace, path)],
    execute: async ({ path, content }) => {
      const { real, relative, exists } = await workspaceOf(workspace, 'write_file').locate(path, 'write_file');
      if (exists && (await stat(real)).isDirectory()) throw new ToolError(`${relative} is a folder, not a file.`, 'write_file');
      const made = await writeAtomically(real, content);
      const size = Buffer.byteLength(content);
      return toolReply({
        content: `${made ? 'Made' : 'Replaced'} ${relative}: ${countLines(content)} lines, ${formatSize(size)}.`,
        metadata: { path: relative, bytes: size, created: made },
      });
    },
  });
}
