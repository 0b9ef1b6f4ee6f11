import { z } from 'zod';
import { defineTool, type Tool } from '../defineTool.js';
import { toolReply } from '../toolReply.js';
import { FILE_LIMITS, type FileLimits } from './fileLimits.js';
import { globTarget, workspaceOf } from './fileToolWorkspace.js';
import { findFiles } from './findFiles.js';
import type { Workspace } from './Workspace.js';

const ListFilesArgs = z.object({
  pattern: z.string().optional().describe('A glob such as "**/*.ts" or "src/*.md" (default "**/*": every file).'),
  path: z.string().optional().describe('The folder to search in, relative to the workspace (default: the workspace).'),
});

/**
 * `list_files`: the files of the workspace that match a glob, one path a line, relative to the workspace and sorted;
 * at most 1,000, with a note when there are more. Its planner target is the glob under its folder.
 */
export function listFilesTool(workspace: Workspace | undefined, limits: FileLimits = FILE_LIMITS): Tool {
  return defineTool({
    category: 'file_op',
    name: 'list_files',
    description:
      'Lists the files of the workspace that match a glob ("**/*.ts", "src/**/*.md"), one path a line, relative to ' +
      'the workspace. .git and node_modules are skipped.',
    parameters: ListFilesArgs,
    kind: 'read',
    realTime: true, // disk I/O: under a simulated clock it takes no simulated time, and repeats
    idempotent: true,
    targets: ({ pattern = '**/*', path = '.' }) => [globTarget(workspace, path, pattern)],
    execute: async ({ pattern = '**/*', path = '.' }) => {
      const files = await findFiles(workspaceOf(workspace, 'list_files'), path, pattern, 'list_files');
      if (files.length === 0) return `No files match ${pattern}${path === '.' ? '' : ` in ${path}`}.`;
      const shown = files.slice(0, limits.listEntries).map((file) => file.relative);
      const more = files.length - shown.length;
      const note = more > 0 ? `\n[${more} more files not shown; narrow the pattern or the path.]` : '';
      return toolReply({ content: shown.join('\n') + note, metadata: { files: files.length } });
    },
  });
}
