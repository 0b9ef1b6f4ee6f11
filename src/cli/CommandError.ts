import { TroupeError } from '../errors.js';

/** What the troupe command's exit codes mean. */
export const EXIT = {
  /** The run completed (or the command did what it was asked). */
  ok: 0,
  /** The run failed: a failed result, or a scenario that threw. */
  failed: 1,
  /** The command was given something it cannot use: a bad argument, an unknown agent, an unreadable file, no model. */
  usage: 2,
  /** Interrupted (Ctrl-C). */
  interrupted: 130,
} as const;

/**
 * A failure of the troupe command, reported as one line (`troupe: <message>`) with the exit code it means. It never
 * leaves the command: the library's own errors are `TroupeError`s.
 */
export class CommandError extends Error {
  constructor(
    message: string,
    /** The process's exit code (default {@link EXIT.usage}). */
    readonly exitCode: number = EXIT.usage,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

/**
 * The exit code an error means: its own for a {@link CommandError}; {@link EXIT.usage} for a troupe error the user
 * can fix (a bad option or agent file, an unknown agent or session, a store that does not parse); otherwise
 * {@link EXIT.failed}.
 */
export function exitCodeOf(error: unknown): number {
  if (error instanceof CommandError) return error.exitCode;
  if (error instanceof TroupeError && (error.fault === 'user' || error.code === 'corrupt_store')) return EXIT.usage;
  return EXIT.failed;
}

/** An error as one line: its message's first line (never a stack trace). */
export function oneLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/^error: /, '').split('\n').map((part) => part.trim()).filter(Boolean).join(' ') || 'failed';
}
