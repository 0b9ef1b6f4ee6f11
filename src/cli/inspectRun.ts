import type { StatelyInspector } from '../inspect/statelyInspector.js';
import type { WebInspector } from '../inspect/webInspector.js';
import type { Runtime } from '../runtime/Runtime.js';
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
 * `--ui [port]`: starts troupe's web inspector for the run (on `port`, or any free one) and prints the page to open on
 * stderr, before the run begins. It cannot listen (the port is taken): a {@link CommandError}.
 */
export async function startWebUi(port: number, title: string): Promise<WebInspector> {
  const { createWebInspector } = await import('../inspect/webInspector.js');
  const inspector = createWebInspector({ port, title });
  try {
    process.stderr.write(`troupe: watch the run in the web inspector: open ${await inspector.url}\n`);
  } catch (error) {
    throw new CommandError(`cannot start the web inspector: ${oneLine(error)}`);
  }
  return inspector;
}

/** An inspector a run is shown in, as the command keeps it open after the run. */
interface Shown {
  readonly name: string;
  readonly url: Promise<string>;
  close(): Promise<void>;
}

/** The inspectors the command started for a runtime (`--inspect`, `--ui`). */
export function inspectorsOf(runtime: Runtime): Shown[] {
  const shown: Shown[] = [];
  if (runtime.inspector) shown.push({ name: 'the Stately inspector', url: runtime.inspector.url, close: () => runtime.inspector!.close() });
  if (runtime.ui) shown.push({ name: 'the web inspector', url: runtime.ui.url, close: () => runtime.ui!.close() });
  return shown;
}

/**
 * After a run watched with `--inspect` or `--ui`: the pages keep showing it (every agent in its last state) until
 * Ctrl-C, then the inspectors close. An interrupted run closes them at once.
 */
export async function keepShowing(inspectors: readonly Shown[], interrupted: boolean): Promise<void> {
  if (!interrupted) {
    for (const inspector of inspectors) {
      const url = await inspector.url;
      process.stderr.write(`troupe: the run has ended; ${inspector.name} still shows it at ${url} (Ctrl-C to exit)\n`);
    }
    await new Promise((resolve) => process.once('SIGINT', resolve));
  }
  await Promise.all(inspectors.map((inspector) => inspector.close()));
}
