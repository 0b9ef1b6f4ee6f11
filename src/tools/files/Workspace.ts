import { realpathSync, statSync } from 'node:fs';
import { readlink, realpath } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';
import { ConfigurationError, ToolError, WorkspaceEscapeError, errorMessage } from '../../errors.js';

/** A path inside a {@link Workspace}, checked. */
export interface WorkspacePath {
  /** The path relative to the workspace, with `/` between its parts (`.` for the workspace itself). */
  readonly relative: string;
  /** The real path to read or write: symbolic links inside the workspace resolved, the rest as named. */
  readonly real: string;
  /** False when nothing exists at the path yet (a file to be written). */
  readonly exists: boolean;
}

/**
 * The folder file tools work in, and the one check of every path they are given: a path resolves inside the folder,
 * or it is refused with a {@link WorkspaceEscapeError}. The check is lexical first (`../x`, `/etc/passwd`), then
 * real: the path, or for a path that does not exist yet its nearest existing parent, is resolved with `realpath`,
 * so a symbolic link inside that points out (to a file, or to a folder on the way) is refused too.
 *
 * @example
 * const workspace = Workspace.open('/tmp/project');
 * const { real } = await workspace.locate('src/index.ts');
 */
export class Workspace {
  private constructor(
    /** The folder as given, made absolute. */
    readonly root: string,
    /** The folder with its symbolic links resolved. */
    readonly realRoot: string,
  ) {}

  /** The workspace of a folder that exists; anything else is a {@link ConfigurationError}. */
  static open(folder: string): Workspace {
    if (typeof folder !== 'string' || folder.trim() === '') {
      throw new ConfigurationError('workspace must be the path of a folder.');
    }
    const root = resolve(folder);
    try {
      if (!statSync(root).isDirectory()) throw new Error('not a folder');
      return new Workspace(root, realpathSync(root));
    } catch (error) {
      throw new ConfigurationError(`The workspace ${root} cannot be used: ${errorMessage(error)}.`);
    }
  }

  /**
   * Checks a path a tool was given and says where it really is. Relative paths are read from the workspace; an
   * absolute path must lie inside it. Throws {@link WorkspaceEscapeError} for a path that leads out, lexically or
   * through a symbolic link, and a {@link ToolError} for one that is not a path at all.
   */
  async locate(path: string, toolName: string): Promise<WorkspacePath> {
    const inside = this.inside(path, toolName);
    // The nearest part of the path that exists, resolved; the parts below it are yet to be made.
    let existing = inside;
    const missing: string[] = [];
    for (;;) {
      try {
        const real = await realpath(existing);
        if (!within(this.realRoot, real)) throw new WorkspaceEscapeError(path, 'symlink');
        return { relative: this.relativeOf(inside), real: join(real, ...missing.reverse()), exists: missing.length === 0 };
      } catch (error) {
        if (!isMissing(error)) throw error instanceof WorkspaceEscapeError ? error : new ToolError(`${path}: ${this.why(error)}`, toolName);
      }
      // Nothing at `existing`: maybe a dangling link, which must not lead a new file or folder outside.
      if (await this.leadsOut(existing)) throw new WorkspaceEscapeError(path, 'symlink');
      missing.push(basename(existing));
      existing = dirname(existing);
    }
  }

  /**
   * Why a path cannot be resolved, in words and relative to the workspace: Node's own message names the errno and
   * the absolute path (`ENOTDIR: not a directory, realpath '/tmp/ws/a.txt/b.txt'`).
   */
  private why(error: unknown): string {
    const { code } = (error ?? {}) as NodeJS.ErrnoException;
    if (code === 'ENOTDIR') return 'a part of the path is a file, not a folder.';
    if (code === 'ELOOP') return 'its symbolic links form a loop.';
    if (code === 'EACCES') return 'permission denied.';
    return errorMessage(error).replaceAll(this.realRoot, '.').replaceAll(this.root, '.');
  }

  /** True for a symbolic link whose target (which does not exist) lies outside the workspace. */
  private async leadsOut(path: string): Promise<boolean> {
    let target: string;
    try {
      target = resolve(dirname(path), await readlink(path));
    } catch {
      return false; // not a link
    }
    return !within(this.root, target) && !within(this.realRoot, target);
  }

  /**
   * The path relative to the workspace, as a planner target (`src/a.ts`; `.` for the workspace), with the symbolic
   * links inside the workspace resolved (synchronously: planning is), so that a link and the file it points to are
   * one target and two writes of one file never run side by side. A path that leads out is given back as it was: its
   * call is refused when it runs.
   */
  target(path: string): string {
    let inside: string;
    try {
      inside = this.inside(path, 'target');
    } catch {
      return path;
    }
    // The nearest part of the path that exists, resolved; the parts below it are yet to be made.
    let existing = inside;
    const missing: string[] = [];
    for (;;) {
      try {
        const real = realpathSync(existing);
        if (!within(this.realRoot, real)) return this.relativeOf(inside);
        const target = relative(this.realRoot, join(real, ...missing.reverse()));
        return target.split(sep).join('/') || '.';
      } catch {
        const parent = dirname(existing);
        if (parent === existing || !within(this.root, parent)) return this.relativeOf(inside);
        missing.push(basename(existing));
        existing = parent;
      }
    }
  }

  /** The absolute lexical path of a path given to a tool, refused when it names a place outside the workspace. */
  private inside(path: string, toolName: string): string {
    if (typeof path !== 'string' || path.trim() === '' || path.includes('\0')) {
      throw new ToolError(`"${String(path)}" is not a path.`, toolName);
    }
    const absolute = isAbsolute(path) ? resolve(path) : resolve(this.root, path);
    if (within(this.root, absolute)) return absolute;
    // An absolute path may name the workspace by its real path.
    if (within(this.realRoot, absolute)) return join(this.root, relative(this.realRoot, absolute));
    throw new WorkspaceEscapeError(path, 'outside');
  }

  private relativeOf(absolute: string): string {
    return relative(this.root, absolute).split(sep).join('/') || '.';
  }
}

/** True when `path` is `root` or lies below it (both absolute and normalised). */
function within(root: string, path: string): boolean {
  return path === root || path.startsWith(root.endsWith(sep) ? root : root + sep);
}

function isMissing(error: unknown): boolean {
  return (error as NodeJS.ErrnoException | undefined)?.code === 'ENOENT';
}
