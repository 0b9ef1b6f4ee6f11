/**
 * How much of the workspace one file-tool call may bring into a conversation. A call that reaches a limit is cut,
 * and its result says so and how to get the rest.
 */
export interface FileLimits {
  /** Lines `read_file` gives at most per call (default 2,000). */
  readonly readLines: number;
  /** Bytes of text `read_file` gives at most per call (default 256 KiB). */
  readonly readBytes: number;
  /** Characters of one line `read_file` shows; the rest of a longer line is cut (default 2,000). */
  readonly lineChars: number;
  /** Paths `list_files` gives at most (default 1,000). */
  readonly listEntries: number;
  /** Matching lines `grep` gives at most (default 200). */
  readonly grepMatches: number;
  /** Characters of a matching line `grep` shows (default 300). */
  readonly grepLineChars: number;
  /** Larger files are skipped by `grep` and refused by `edit_file` (default 10 MiB). */
  readonly fileBytes: number;
}

/** The limits file tools use. */
export const FILE_LIMITS: FileLimits = Object.freeze({
  readLines: 2_000,
  readBytes: 256 * 1024,
  lineChars: 2_000,
  listEntries: 1_000,
  grepMatches: 200,
  grepLineChars: 300,
  fileBytes: 10 * 1024 * 1024,
});

/** Folders `list_files` and `grep` never walk into: version-control data and installed packages. */
export const IGNORED_FOLDERS: readonly string[] = Object.freeze(['**/.git/**', '**/node_modules/**']);
