// `npm run bench` starts here. It measures troupe as npm installs it: the tsc build in dist/, which the script makes
// first. The bench's own files still run through tsx, but with tsconfig.bench.json (no `paths`) `troupe` and
// `troupe/testing` resolve to the package's own exports, dist/, and not to the sources through tsx's transform. That
// transform names every function it makes (esbuild's `keepNames`: an `Object.defineProperty` call each time a closure
// is made), which cost troupe 3–15 % of a trader turn in A/B runs, while XState, the baseline, always ran as published.
// The component benches that need what the package does not export (the planner, the event pipeline, the views) import
// it from src/ and run it through tsx as before. `--small` and other arguments pass on to bench/index.ts.
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

if (!existsSync(new URL('../dist/index.js', import.meta.url))) {
  console.error('The bench measures the build: run `npm run build` first (`npm run bench` does).');
  process.exit(1);
}
process.env.TSX_TSCONFIG_PATH = fileURLToPath(new URL('../tsconfig.bench.json', import.meta.url));
const { register } = await import('tsx/esm/api');
register();
await import('./index.ts');
