import { readFile, stat } from 'node:fs/promises';
import { z } from 'zod';
import { ToolError, errorMessage } from '../../errors.js';
import { defineTool, type Tool } from '../defineTool.js';
import { toolReply } from '../toolReply.js';
import { FILE_LIMITS, type FileLimits } from './fileLimits.js';
import { globTarget, workspaceOf } from './fileToolWorkspace.js';
import { findFiles, type FoundFile } from './findFiles.js';
import { isBinaryText } from './textFile.js';
import type { Workspace } from './Workspace.js';

const GrepArgs = z.object({
  pattern: z.string().min(1).describe('A JavaScript regular expression, such as "function \\\\w+Tool" or "export (const|class)".'),
  path: z.string().optional().describe('A file or folder to search, relative to the workspace (default: the workspace).'),
  glob: z.string().optional().describe('Only files that match this glob under path, such as "**/*.ts" (default: every file).'),
  ignore_case: z.boolean().optional().describe('Match letters of either case.'),
});

/** What a search found: the matching lines as `path:line:text`, and what it left out. */
interface Findings {
  readonly lines: string[];
  /** Matching lines past the limit. */
  more: number;
  /** Files not searched: binary, or larger than the limit. */
  skipped: number;
}

/**
 * `grep`: the lines of workspace files that match a regular expression, as `path:line:text`, in path order; the
 * files are those of `glob` under `path`. At most 200 lines of 300 characters each, with a note when there are more;
 * binary files and files over 10 MiB are skipped and counted. Its planner target is the glob under its folder.
 */
export function grepTool(workspace: Workspace | undefined, limits: FileLimits = FILE_LIMITS): Tool {
  return defineTool({
    category: 'file_op',
    name: 'grep',
    description:
      'Searches the text files of the workspace for a regular expression and gives each matching line as ' +
      'path:line:text. Narrow it with path (a file or folder) and glob ("**/*.ts").',
    parameters: GrepArgs,
    kind: 'read',
    realTime: true, // disk I/O: under a simulated clock it takes no simulated time, and repeats
    idempotent: true,
    targets: ({ path = '.', glob = '**/*' }) => [globTarget(workspace, path, glob)],
    execute: async ({ pattern, path = '.', glob = '**/*', ignore_case }, { signal }) => {
      const expression = regexOf(pattern, ignore_case === true);
      const files = await findFiles(workspaceOf(workspace, 'grep'), path, glob, 'grep');
      const findings: Findings = { lines: [], more: 0, skipped: 0 };
      for (const file of files) {
        signal.throwIfAborted();
        await search(file, expression, findings, limits);
      }
      return toolReply({ content: report(findings, pattern), metadata: { matches: findings.lines.length + findings.more, files: files.length } });
    },
  });
}

function regexOf(pattern: string, ignoreCase: boolean): RegExp {
  try {
    return new RegExp(pattern, ignoreCase ? 'iu' : 'u');
  } catch (unicode) {
    try {
      return new RegExp(pattern, ignoreCase ? 'i' : ''); // patterns like "\\-" that only the unicode mode refuses
    } catch {
      throw new ToolError(`"${pattern}" is not a valid regular expression: ${errorMessage(unicode)}`, 'grep');
    }
  }
}

/** Adds a file's matching lines to the findings (counting those past the limit), or counts it as skipped. */
async function search(file: FoundFile, expression: RegExp, findings: Findings, limits: FileLimits): Promise<void> {
  const size = await stat(file.real).then((stats) => (stats.isFile() ? stats.size : -1), () => -1);
  if (size < 0) return; // gone since it was listed, or not a regular file (a pipe would never end)
  if (size > limits.fileBytes) {
    findings.skipped += 1;
    return;
  }
  const bytes = await readFile(file.real);
  if (isBinaryText(bytes)) {
    findings.skipped += 1;
    return;
  }
  const lines = bytes.toString('utf8').split(/\r?\n/);
  lines.forEach((line, index) => {
    if (!expression.test(line)) return;
    if (findings.lines.length >= limits.grepMatches) {
      findings.more += 1;
      return;
    }
    const text = line.length > limits.grepLineChars ? `${line.slice(0, limits.grepLineChars)}…` : line;
    findings.lines.push(`${file.relative}:${index + 1}:${text}`);
  });
}

function report({ lines, more, skipped }: Findings, pattern: string): string {
  const notes = [
    more > 0 ? `${more} more matching lines not shown; narrow the pattern, path or glob.` : '',
    skipped > 0 ? `${skipped} binary or very large files not searched.` : '',
  ].filter((note) => note !== '');
  const body = lines.length > 0 ? lines.join('\n') : `No line matches /${pattern}/.`;
  return notes.length > 0 ? `${body}\n[${notes.join(' ')}]` : body;
}
