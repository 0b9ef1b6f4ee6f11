import { inspect } from 'node:util';
import { errorMessage } from '../errors.js';
import type { AgentResult } from '../runtime/AgentResults.js';
import type { Runtime } from '../runtime/Runtime.js';
import { CommandError, EXIT } from './CommandError.js';
import { inspectorsOf, keepShowing } from './inspectRun.js';
import { outputMode, showEvents, type Output, type OutputMode } from './terminal.js';

/**
 * Runs `work` on a runtime while its events are shown (a live tree, plain lines, JSON lines or nothing, as the flags
 * and the output say), shuts the runtime down (cancelling what is left, writing the sessions), then prints the
 * result. A failed result becomes a {@link CommandError} with {@link EXIT.failed}; Ctrl-C shuts the runtime down and
 * ends with {@link EXIT.interrupted} (twice: at once). With a Stately inspector (`--inspect`) or the web inspector
 * (`--ui`), their pages keep showing the run after it ended, until Ctrl-C.
 */
export async function watchRun(
  runtime: Runtime,
  flags: { json?: boolean; quiet?: boolean },
  work: () => Promise<unknown>,
  output: Output = process.stdout,
): Promise<void> {
  const inspectors = inspectorsOf(runtime);
  if (inspectors.length === 0) return watchOnly(runtime, flags, work, output);
  try {
    await watchOnly(runtime, flags, work, output);
  } catch (error) {
    await keepShowing(inspectors, error instanceof CommandError && error.exitCode === EXIT.interrupted);
    throw error;
  }
  await keepShowing(inspectors, false);
}

async function watchOnly(runtime: Runtime, flags: { json?: boolean; quiet?: boolean }, work: () => Promise<unknown>, output: Output): Promise<void> {
  const mode = outputMode(flags, output);
  const view = showEvents(runtime, mode, output);
  const interrupt = onInterrupt(runtime);
  let value: unknown;
  let closing: { error: unknown } | undefined;
  try {
    // Interrupted, the runtime shuts down and the work usually ends with it; work that waits on something else (a
    // scenario's own timer) is not waited for once the runtime has shut down.
    value = await Promise.race([work(), interrupt.stopped]);
  } finally {
    try {
      await runtime.shutdown();
    } catch (error) {
      closing = { error }; // a store that could not be written: said after the result, which is not lost with it
    } finally {
      view.stop();
      interrupt.dispose();
    }
  }
  printResult(value, mode, output);
  if (closing) throw closing.error;
  if (interrupt.happened) throw new CommandError('interrupted', EXIT.interrupted);
  if (isAgentResult(value) && value.status === 'failed') {
    const why = value.error?.message ?? value.reason ?? 'failed';
    throw new CommandError(`${value.agent} failed (${value.reason ?? 'error'}): ${why}`, EXIT.failed);
  }
}

/** True for a value shaped like an {@link AgentResult}: what `runtime.run` and `handle.result` give. */
export function isAgentResult(value: unknown): value is AgentResult {
  if (value === null || typeof value !== 'object') return false;
  const candidate = value as Partial<AgentResult>;
  return typeof candidate.id === 'string' && typeof candidate.agent === 'string' && (candidate.status === 'completed' || candidate.status === 'failed');
}

/**
 * Prints what a run returned: with `--json` one last JSON line `{"type":"result","result":…}`; otherwise a completed
 * result's answer, a string as it is, anything else (but undefined) as JSON. A failed result prints nothing here:
 * its one-line error goes to stderr.
 */
function printResult(value: unknown, mode: OutputMode, output: Output): void {
  if (mode === 'json') {
    output.write(`${resultLine(value)}\n`);
    return;
  }
  let text: string | undefined;
  if (isAgentResult(value)) text = value.status === 'completed' ? value.output : undefined;
  else if (typeof value === 'string') text = value;
  else if (value !== undefined) text = asJson(value);
  if (text === undefined) return;
  output.write(`${mode === 'quiet' ? '' : '\n'}${text}\n`);
}

/**
 * The `--json` result line. A result JSON cannot hold (a cycle, a bigint) is given as Node prints it, with why it is
 * not JSON (`notJson`), so the line is still JSON and the run still succeeds, as it does without `--json`.
 */
function resultLine(value: unknown): string {
  try {
    return JSON.stringify({ type: 'result', result: value ?? null });
  } catch (error) {
    return JSON.stringify({ type: 'result', result: inspect(value, { depth: 4 }), notJson: errorMessage(error).split('\n')[0] });
  }
}

/** A value as indented JSON, or as Node prints it when it is not JSON (a cycle, a bigint). */
function asJson(value: unknown): string {
  try {
    return JSON.stringify(value, null, 2) ?? inspect(value);
  } catch {
    return inspect(value, { depth: 4 });
  }
}

/** Ctrl-C: the first shuts the runtime down (the run ends cancelled), the second exits at once. */
function onInterrupt(runtime: Runtime): { readonly happened: boolean; readonly stopped: Promise<undefined>; dispose(): void } {
  let happened = false;
  let shutDown: () => void = () => {};
  // Never settles unless interrupted: then once the runtime has shut down.
  const stopped = new Promise<undefined>((resolve) => (shutDown = () => resolve(undefined)));
  const handler = () => {
    if (happened) {
      process.stderr.write('troupe: interrupted\n');
      process.exit(EXIT.interrupted);
    }
    happened = true;
    process.stderr.write('troupe: stopping the run (Ctrl-C again to quit at once)\n');
    void runtime.shutdown().then(shutDown, shutDown);
  };
  process.on('SIGINT', handler);
  return {
    get happened() {
      return happened;
    },
    stopped,
    dispose: () => process.off('SIGINT', handler),
  };
}
