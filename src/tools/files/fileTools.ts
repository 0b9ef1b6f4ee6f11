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

/**
 * The names Claude Code gives its tools, with the built-in tool each stands for, so an agent file written for Claude
 * Code (`tools: Read, Grep, Glob, TodoWrite`) loads as it is. `MultiEdit` (several edits of one file) becomes
 * `edit_file`, one edit a call; `TodoWrite` and `TodoRead` are the agent's todo list (`todo_write`, `todo_read`).
 */
export const CLAUDE_CODE_TOOLS: Readonly<Record<string, string>> = Object.freeze({
  Read: 'read_file',
  Glob: 'list_files',
  LS: 'list_files',
  Grep: 'grep',
  Write: 'write_file',
  Edit: 'edit_file',
  MultiEdit: 'edit_file',
  TodoWrite: 'todo_write',
  TodoRead: 'todo_read',
});

/** The tool a name in an agent's `tools` list stands for: a Claude Code name's file tool, else the name itself. */
export function toolNameOf(listed: string): string {
  return Object.hasOwn(CLAUDE_CODE_TOOLS, listed) ? (CLAUDE_CODE_TOOLS[listed] as string) : listed;
}
