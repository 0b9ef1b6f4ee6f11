// `npm run build`, after tsc: bundles the web inspector's page (web/) into dist/inspect/web/, where the installed
// package's server reads it. Run from the sources, the server bundles the page itself instead.
import { mkdir, writeFile } from 'node:fs/promises';
import { bundleWebAssets } from '../src/inspect/webAssets.js';

const folder = new URL('../dist/inspect/web/', import.meta.url);
const assets = await bundleWebAssets();
await mkdir(folder, { recursive: true });
await writeFile(new URL('app.js', folder), assets.script);
await writeFile(new URL('app.css', folder), assets.style);
process.stdout.write(`web inspector: ${Math.round(assets.script.length / 1024)} KB of script, ${Math.round(assets.style.length / 1024)} KB of style\n`);
