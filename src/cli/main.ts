#!/usr/bin/env node
// The `troupe` command: `troupe run`, `troupe agents`, `troupe sessions`, `troupe trace`, `troupe ui`. Every failure is
// one line on stderr (`troupe: <message>`) with an exit code that means something (see EXIT); never a stack trace.
import { readFileSync } from 'node:fs';
import { Command, CommanderError } from 'commander';
import { agentsCommand } from './commands/agents.js';
import { runCommand } from './commands/run.js';
import { sessionsCommand } from './commands/sessions.js';
import { traceCommand } from './commands/trace.js';
import { uiCommand } from './commands/ui.js';
import { EXIT, exitCodeOf, oneLine } from './CommandError.js';

/**
 * The commands of `troupe`, in the order `--help` lists them. A command is a file in `commands/` exporting a function
 * that returns a commander `Command`; add it here (e.g. `traceCommand` from `commands/trace.ts`).
 */
const COMMANDS: readonly (() => Command)[] = [runCommand, agentsCommand, sessionsCommand, traceCommand, uiCommand];

/** The whole program: every command, each failing by throwing (the caller prints the one line). */
function program(): Command {
  const { version } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as { version: string };
  const root = new Command('troupe')
    .description('Run and watch troupe agents: scenarios, single agents, agent files and stored sessions.')
    .version(version, '-v, --version')
    .addHelpText('after', '\nExamples:\n  $ troupe run examples/scenario.ts\n  $ troupe run examples/scenario.ts --ui\n  $ troupe ui run.jsonl\n  $ troupe agents list\n  $ troupe sessions list');
  for (const make of COMMANDS) root.addCommand(make());
  for (const command of everyCommand(root)) {
    command.exitOverride().configureOutput({ outputError: () => {} }); // errors are printed once, in one line, below
  }
  return root;
}

function everyCommand(command: Command): Command[] {
  return [command, ...command.commands.flatMap(everyCommand)];
}

/** Runs the command line; resolves with the exit code. */
async function main(argv: readonly string[]): Promise<number> {
  try {
    await program().parseAsync([...argv]);
    return EXIT.ok;
  } catch (error) {
    if (error instanceof CommanderError) {
      if (error.exitCode === 0) return EXIT.ok; // --help, --version
      if (error.code === 'commander.help') return EXIT.usage; // a command without its subcommand: its help is shown
      // A command's own failure (`troupe trace summary: …`) already names the command; commander's need the hint.
      const own = !error.code.startsWith('commander.');
      process.stderr.write(own ? `${oneLine(error)}\n` : `troupe: ${oneLine(error)} (see --help)\n`);
      return own ? error.exitCode : EXIT.usage;
    }
    process.stderr.write(`troupe: ${oneLine(error)}\n`);
    return exitCodeOf(error);
  }
}

// A reader that leaves early (`troupe run … | head -1`) closes the pipe: what is written after goes nowhere, but the
// run goes on to its end and writes its sessions, rather than dying of an unhandled EPIPE with a stack trace.
process.stdout.on('error', (error: NodeJS.ErrnoException) => {
  if (error.code !== 'EPIPE') process.stderr.write(`troupe: cannot write the output: ${error.message}\n`);
});

const code = await main(process.argv);
// Exit now, once the output is written: a scenario may leave a timer or a socket behind.
process.stdout.write('', () => process.exit(code));
