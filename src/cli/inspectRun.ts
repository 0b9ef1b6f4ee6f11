import type { StatelyInspector } from '../inspect/statelyInspector.js';
import { CommandError, oneLine } from './CommandError.js';

/**
 * `--inspect`: starts a Stately inspector for the run and prints the page to open on stderr, before the run begins (a
 * page opened later is still told of every actor first). It cannot listen: a {@link CommandError}.
 */
export async function startInspector(): Promise<StatelyInspector> {
  const { createStatelyInspector } = await import('../inspect/statelyInspector.js');
  const inspector = createStatelyInspector();
  try {
    process.stderr.write(`troupe: watch the run in the Stately inspector: open ${await inspector.url}\n`);
  } catch (error) {
    throw new CommandError(`cannot start the Stately inspector: ${oneLine(error)}`);
  }
  return inspector;
}

/**
 * After a run watched with `--inspect`: the page keeps showing it (every agent in its last state) until Ctrl-C, then the
 * inspector closes. An interrupted run closes it at once.
 */
export async function keepShowing(inspector: StatelyInspector, interrupted: boolean): Promise<void> {
  if (!interrupted) {
    const url = await inspector.url;
    process.stderr.write(`troupe: the run has ended; the Stately inspector still shows it at ${url} (Ctrl-C to exit)\n`);
    await new Promise((resolve) => process.once('SIGINT', resolve));
  }
  await inspector.close();
}
