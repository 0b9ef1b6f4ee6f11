import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ConfigurationError } from '../errors.js';

/** The web inspector's page: one script and one style sheet, everything bundled (no CDN, nothing fetched). */
export interface WebAssets {
  readonly script: string;
  readonly style: string;
}

/** Where a build keeps the bundled page: beside this module (`dist/inspect/web/`). */
const BUILT = new URL('./web/', import.meta.url);
/** The page's source, in a checkout of troupe (`web/main.tsx` at the top of the repository). */
const SOURCE = fileURLToPath(new URL('../../web/main.tsx', import.meta.url));

let loading: Promise<WebAssets> | undefined;

/**
 * The page's script and style: the build's (`npm run build` bundles them into `dist/`), or, run from the sources, a
 * bundle made now with esbuild (once a process; a few hundred ms).
 */
export function loadWebAssets(): Promise<WebAssets> {
  loading ??= readBuilt().catch(() => bundleWebAssets());
  loading.catch(() => (loading = undefined));
  return loading;
}

async function readBuilt(): Promise<WebAssets> {
  const [script, style] = await Promise.all([readFile(new URL('app.js', BUILT), 'utf8'), readFile(new URL('app.css', BUILT), 'utf8')]);
  return { script, style };
}

/**
 * Bundles the page from its sources with esbuild: Preact, the virtual list, uPlot and ELK inlined, minified, for the
 * browsers of the last few years. What `npm run build` writes to `dist/inspect/web/`.
 */
export async function bundleWebAssets(): Promise<WebAssets> {
  let esbuild: typeof import('esbuild');
  try {
    esbuild = await import('esbuild');
  } catch (error) {
    // An installed troupe ships the bundle; only a checkout without its dev dependencies lands here.
    throw new ConfigurationError("The web inspector's page is not built and cannot be built here: run `npm run build` in troupe's folder.", { cause: error });
  }
  const result = await esbuild.build({
    entryPoints: { app: SOURCE },
    bundle: true,
    write: false,
    outdir: 'out',
    format: 'esm',
    target: ['es2022'],
    minify: true,
    legalComments: 'none',
    jsx: 'automatic',
    jsxImportSource: 'preact',
    logLevel: 'silent',
  });
  const text = (extension: string) => result.outputFiles.find((file) => file.path.endsWith(extension))?.text ?? '';
  return { script: text('.js'), style: text('.css') };
}
