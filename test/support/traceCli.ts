// The trace command as a process, as the troupe command will run it, for its exit codes and output:
//   node --import tsx test/support/traceCli.ts summary <file>
import { traceCommand } from '../../src/cli/commands/trace.js';

await traceCommand().parseAsync(process.argv.slice(2), { from: 'user' });
