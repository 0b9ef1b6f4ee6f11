import { Command } from 'commander';
import { EXIT, oneLine } from '../CommandError.js';
import { port } from '../runOptions.js';
import { TRACE_UNREADABLE, unreadable } from './trace.js';

/**
 * The `troupe ui` command: `troupe ui <file>` serves a saved run (a `--trace` file, or what
 * `createRuntime({ record })` or `trace` wrote) in troupe's web inspector, to scrub through with its slider. It prints
 * the page to open and serves it until Ctrl-C. A file it cannot read is one line on stderr and exit code
 * {@link TRACE_UNREADABLE}; a port it cannot listen on, exit code 2 too.
 *
 * @example
 * program.addCommand(uiCommand());
 * // $ troupe ui run.jsonl
 */
export function uiCommand(): Command {
  const ui = new Command('ui')
    .description("replay a saved run in troupe's web inspector (what --trace or createRuntime({ record, trace }) write)")
    .argument('<file>', 'the recorded run (JSON lines)')
    .option('--port <port>', 'the port on 127.0.0.1 (default: any free port)', port)
    .addHelpText('after', '\nExample:\n  $ troupe run examples/scenario.ts --trace run.jsonl\n  $ troupe ui run.jsonl')
    .action(async (file: string, flags: { port?: number }) => {
      const { openWebReplay } = await import('../../inspect/webInspector.js');
      const inspector = await openWebReplay(file, flags.port === undefined ? {} : { port: flags.port }).catch((error: unknown) =>
        // The file was read; its server could not listen (a port taken, or not ours to take).
        (error as NodeJS.ErrnoException).syscall === 'listen'
          ? ui.error(`troupe ui: cannot start the web inspector: ${oneLine(error)}`, { exitCode: EXIT.usage, code: 'troupe.ui.listen' })
          : ui.error(`troupe ui: ${unreadable(file, error)}`, { exitCode: TRACE_UNREADABLE, code: 'troupe.ui.unreadable' }),
      );
      if (inspector.tornLine !== undefined) {
        process.stderr.write(`troupe: line ${inspector.tornLine} of ${file}, its last, was cut short, as by a crash, and is left out\n`);
      }
      process.stderr.write(`troupe: the saved run is in the web inspector: open ${await inspector.url} (Ctrl-C to exit)\n`);
      await new Promise((resolve) => process.once('SIGINT', resolve));
      await inspector.close();
    });
  return ui;
}
