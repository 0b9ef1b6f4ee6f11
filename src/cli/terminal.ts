import { createLogUpdate } from 'log-update';
import type { Runtime } from '../runtime/Runtime.js';
import { LiveTree } from '../views/LiveTree.js';
import { plainEventLine } from '../views/plainEventLine.js';
import { renderLiveTree, runFooter } from '../views/renderLiveTree.js';

/**
 * How a run is shown. `tree`: a live tree redrawn in place (a terminal). `plain`: one line per event worth reading,
 * no control codes (CI, pipes). `json`: every event as a JSON line. `quiet`: nothing but the result.
 */
export type OutputMode = 'tree' | 'plain' | 'json' | 'quiet';

/** The least time between two frames of the live tree: redraws follow a clock, never each event. */
export const REDRAW_MS = 80;

/** Where the output goes: a stream, with a terminal's size when it is one. */
export type Output = Pick<NodeJS.WriteStream, 'write'> & { isTTY?: boolean; columns?: number; rows?: number };

/** The mode for these flags and this output: `--json`, `--quiet`, else a tree on a terminal and plain lines elsewhere. */
export function outputMode(flags: { json?: boolean; quiet?: boolean }, output: Output, env: NodeJS.ProcessEnv = process.env): OutputMode {
  if (flags.json) return 'json';
  if (flags.quiet) return 'quiet';
  return output.isTTY === true && env.TERM !== 'dumb' ? 'tree' : 'plain';
}

/** A view of a run's events; `stop` draws the last frame and lets go of the runtime. */
export interface EventView {
  stop(): void;
}

/** Shows a runtime's events on an output in a mode, until stopped. Subscribe it before anything is spawned. */
export function showEvents(runtime: Runtime, mode: OutputMode, output: Output): EventView {
  switch (mode) {
    case 'tree':
      return liveView(runtime, output);
    case 'plain':
      return plainView(runtime, output);
    case 'json': {
      const subscription = runtime.events$.subscribe((event) => output.write(`${JSON.stringify(event)}\n`));
      return { stop: () => subscription.unsubscribe() };
    }
    case 'quiet':
      return { stop: () => {} };
  }
}

/** The live tree: folded from every event, drawn by a timer at most every {@link REDRAW_MS} when it changed. */
function liveView(runtime: Runtime, output: Output): EventView {
  const tree = new LiveTree();
  // A terminal nobody sized (a pseudo-terminal made without a size: `script`, some CI runners and containers) reports
  // 0 columns and 0 rows, and log-update would draw nothing at all: such a terminal is taken as 80 × 24.
  const sized = {
    isTTY: output.isTTY,
    write: (text: string) => output.write(text),
    get columns() {
      return output.columns || 80;
    },
    get rows() {
      return output.rows || 24;
    },
  };
  const log = createLogUpdate(sized as unknown as NodeJS.WriteStream, { showCursor: false });
  const colour = process.env.NO_COLOR === undefined || process.env.NO_COLOR === '';
  let drawn = -1;
  const draw = () => {
    // log-update keeps a blank last line: the frame gets one row less than the screen.
    const screen = { width: sized.columns, height: Math.max(2, sized.rows - 1), now: runtime.now() };
    const frame = renderLiveTree(tree, screen);
    log(colour ? paint(frame) : frame);
    drawn = tree.version;
  };
  const subscription = runtime.events$.subscribe((event) => tree.apply(event));
  // Running agents' times move on without events: redraw while any runs.
  const timer = setInterval(() => {
    if (tree.version !== drawn || tree.totals.running > 0) draw();
  }, REDRAW_MS);
  return {
    stop() {
      clearInterval(timer);
      subscription.unsubscribe();
      draw();
      log.done();
    },
  };
}

/** Plain lines: each event worth reading as it comes, and the run's figures at the end. */
function plainView(runtime: Runtime, output: Output): EventView {
  const tree = new LiveTree();
  const subscription = runtime.events$.subscribe((event) => {
    const node = tree.apply(event);
    const line = node && plainEventLine(event, node);
    if (line !== undefined) output.write(`${line}\n`);
  });
  return {
    stop() {
      subscription.unsubscribe();
      if (tree.roots.length > 0) output.write(`${runFooter(tree, runtime.now())}\n`);
    },
  };
}

/** Colours the marks of a frame: ✓ green, ✗ red, ► cyan. */
function paint(frame: string): string {
  return frame.replace(/[✓✗►]/g, (mark) => `\u001B[${mark === '✓' ? 32 : mark === '✗' ? 31 : 36}m${mark}\u001B[39m`);
}
