import type { Tool } from '../defineTool.js';
import { editFileTool } from './editFileTool.js';
import { FILE_LIMITS, type FileLimits } from './fileLimits.js';
import { grepTool } from './grepTool.js';
import { listFilesTool } from './listFilesTool.js';
import { readFileTool } from './readFileTool.js';
import { writeFileTool } from './writeFileTool.js';
import type { Workspace } from './Workspace.js';

/**
 * The file tools, rooted at one workspace: `read_file`, `list_files`, `grep` (reads) and `write_file`, `edit_file`
 * (writes), each with its planner targets relative to the workspace. Without a workspace each call is an error
 * result that says how to give one. `limits` changes how much one call may bring into a conversation.
 *
 * @example
 * const tools = fileTools(Workspace.open('./project'), { readLines: 500 });
 */
export function fileTools(workspace: Workspace | undefined, limits: Partial<FileLimits> = {}): readonly Tool[] {
  const all: FileLimits = { ...FILE_LIMITS, ...limits };
  return Object.freeze([
    readFileTool(workspace, all),
    listFilesTool(workspace, all),
    grepTool(workspace, all),
    writeFileTool(workspace),
    editFileTool(workspace, all),
  ]);
}
