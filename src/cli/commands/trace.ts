import { Command } from 'commander';
import { errorMessage, TroupeError } from '../../errors.js';
import { summarizeTrace } from '../../views/summarizeTrace.js';

/** The exit code of a trace that cannot be read: a missing or unreadable file, a corrupt trace, a newer format. */
export const TRACE_UNREADABLE = 2;

/**
 * The `troupe trace` command: `troupe trace summary <file>` prints the timeline and metrics table of a trace saved
 * with `--trace FILE` or `createRuntime({ trace })` (a `record` file reads the same). A file it cannot read is one
 * line on stderr and exit code {@link TRACE_UNREADABLE}, without a stack trace. Output goes through this command's
 * output configuration (`configureOutput`), and its exit through `exitOverride` when one is set on it.
 *
 * @example
 * program.addCommand(traceCommand());
 * // $ troupe trace summary run.trace.jsonl
 */
export function traceCommand(): Command {
  const trace = new Command('trace')
    .description('read a saved trace (what --trace or createRuntime({ trace }) writes)')
    .addHelpText('after', '\nExamples:\n  $ troupe run examples/scenario.ts --trace run.trace.jsonl\n  $ troupe trace summary run.trace.jsonl');
  trace
    .command('summary')
    .description('print the timeline and the metrics table of a saved trace')
    .argument('<file>', 'the trace file (JSON lines)')
    .addHelpText('after', '\nExample:\n  $ troupe trace summary run.trace.jsonl')
    .action(async (file: string) => {
      const summary = await summarizeTrace(file).catch((error: unknown) =>
        trace.error(`troupe trace summary: ${unreadable(file, error)}`, { exitCode: TRACE_UNREADABLE, code: 'troupe.trace.unreadable' }),
      );
      const write = trace.configureOutput().writeOut ?? ((text: string) => process.stdout.write(text));
      write(`${summary}\n`);
    });
  return trace;
}

/** Why a trace could not be read, on one line: troupe's own message, or the system's with what to check. */
export function unreadable(file: string, error: unknown): string {
  const text = error instanceof TroupeError ? error.message : `cannot read ${file}: ${errorMessage(error)}. Check the path and its permissions.`;
  return text.replace(/\s*\n\s*/g, ' ');
}
