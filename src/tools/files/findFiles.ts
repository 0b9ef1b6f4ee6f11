import { stat } from 'node:fs/promises';
import { glob } from 'tinyglobby';
import { ToolError } from '../../errors.js';
import { IGNORED_FOLDERS } from './fileLimits.js';
import { checkGlob } from './fileToolWorkspace.js';
import type { Workspace } from './Workspace.js';

/** A file found in the workspace: its path relative to the workspace, and its real path. */
export interface FoundFile {
  readonly relative: string;
  readonly real: string;
}

/**
 * The files of a workspace folder that match a glob (tinyglobby), sorted by path. Hidden files are found; `.git` and
 * `node_modules` are not walked into; symbolic links are neither followed nor listed, so nothing outside is reached.
 * A path that names a file gives that file alone.
 */
export async function findFiles(workspace: Workspace, folder: string, pattern: string, toolName: string): Promise<FoundFile[]> {
  const located = await workspace.locate(folder, toolName);
  if (!located.exists) throw new ToolError(`${located.relative} does not exist.`, toolName);
  if (!(await stat(located.real)).isDirectory()) return [{ relative: located.relative, real: located.real }];
  const found = await glob(checkGlob(pattern), {
    cwd: located.real,
    dot: true,
    followSymbolicLinks: false,
    onlyFiles: true,
    ignore: [...IGNORED_FOLDERS],
  });
  const base = located.relative === '.' ? '' : `${located.relative}/`;
  return found.sort().map((path) => ({ relative: base + path, real: `${located.real}/${path}` }));
}
