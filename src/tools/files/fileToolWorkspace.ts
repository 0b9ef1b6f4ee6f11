import { ConfigurationError, WorkspaceEscapeError } from '../../errors.js';
import type { Workspace } from './Workspace.js';

/** The workspace of a file tool's call; a runtime without one makes every call an error result that says so. */
export function workspaceOf(workspace: Workspace | undefined, toolName: string): Workspace {
  if (workspace) return workspace;
  throw new ConfigurationError(
    `${toolName} has no workspace to work in: the runtime was made without one. Give it a folder with ` +
      'createRuntime({ workspace: dir }).',
  );
}

/** A file's planner target: its path relative to the workspace (the path as given when there is no workspace). */
export function fileTarget(workspace: Workspace | undefined, path: string): string {
  return workspace ? workspace.target(path) : path;
}

/**
 * The planner target of a glob searched in a folder: the folder's path relative to the workspace, a `/`, then the
 * glob (`*.ts` in `src` is `src/*.ts`), so that the planner orders it against the writes it may match.
 */
export function globTarget(workspace: Workspace | undefined, folder: string, pattern: string): string {
  const base = fileTarget(workspace, folder);
  return base === '.' ? pattern : `${base}/${pattern}`;
}

/**
 * Checks a glob a tool was given: it is read inside a folder of the workspace, so it may not be absolute or climb
 * out with `..`. Throws {@link WorkspaceEscapeError}.
 */
export function checkGlob(pattern: string): string {
  const parts = pattern.split(/[\\/]+/);
  if (pattern.startsWith('/') || /^[a-zA-Z]:/.test(pattern) || parts.includes('..')) {
    throw new WorkspaceEscapeError(pattern, 'outside');
  }
  return pattern;
}
