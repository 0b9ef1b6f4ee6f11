// docs/architecture.md's Layout is the map of src/ a new contributor reads first: every file under src/ must be named
// in it, under its own folder, and it must name no file that is gone. The descriptions are prose; this test checks only
// that each file has a place on the map.
//
// How the Layout block is read: an entry is a line whose first word, before the description column, is a file
// (`name.ts`) or a folder (`name/`); its indentation places it under the folder entries above it. A line may name
// several files of one folder side by side (`sequence.ts  parallel.ts  …   one builder each`: the words up to the
// first that is not a file), and a folder with no entries of its own may name its files in its description
// (`commands/`: `run.ts (…), agents.ts …`). The block's entries after src/ (web/, examples/, …) are not checked.
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));

/** Every file under `folder`, as paths relative to the repository's root with `/` between parts. */
function filesUnder(folder: string): string[] {
  return readdirSync(join(root, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => relative(root, join(entry.parentPath, entry.name)).split('\\').join('/'))
    .sort();
}

/** The lines of the fenced block that follows `## Layout`. */
function layoutLines(markdown: string): string[] {
  const lines = markdown.split('\n');
  const heading = lines.indexOf('## Layout');
  const open = lines.findIndex((line, index) => index > heading && line.startsWith('```'));
  const close = lines.findIndex((line, index) => index > open && line.startsWith('```'));
  if (heading < 0 || open < 0 || close < 0) throw new Error('docs/architecture.md has no fenced block under "## Layout"');
  return lines.slice(open + 1, close);
}

/** The paths under src/ that the Layout names, read as the header explains. */
function namedInLayout(lines: readonly string[]): string[] {
  const named: string[] = [];
  const folders: { indent: number; path: string }[] = [];
  // Files a folder's description names count only for a folder with no entries of its own (cli/commands/): others
  // mention files elsewhere in passing (cli/: "index.ts re-exports the Scenario types").
  const describedFiles = new Map<string, string[]>();
  const withEntries = new Set<string>();
  let described: string | undefined; // the folder whose description lines follow, if the last entry was a folder
  for (const line of lines) {
    const indent = line.length - line.trimStart().length;
    const words = line.trim().split(/\s+/);
    const isEntry = indent < 25 && /^[\w.-]+(\.ts|\/)$/.test(words[0] ?? '');
    if (!isEntry) {
      if (described) describedFiles.get(described)!.push(...(line.match(/[\w.-]+\.ts\b/g) ?? []));
      continue;
    }
    while (folders.length > 0 && folders[folders.length - 1]!.indent >= indent) folders.pop();
    const parent = folders[folders.length - 1]?.path ?? '';
    if (indent === 0 && words[0] !== 'src/') break; // past src/: web/, scripts/, examples/, …
    withEntries.add(parent);
    described = undefined;
    if (words[0]!.endsWith('/')) {
      const path = `${parent}${words[0]}`;
      folders.push({ indent, path });
      described = path;
      describedFiles.set(path, line.slice(indent + words[0]!.length).match(/[\w.-]+\.ts\b/g) ?? []);
      continue;
    }
    for (const word of words) {
      if (!/^[\w.-]+\.ts$/.test(word)) break;
      named.push(`${parent}${word}`);
    }
  }
  for (const [folder, files] of describedFiles) if (!withEntries.has(folder)) named.push(...files.map((file) => `${folder}${file}`));
  return [...new Set(named)].sort();
}

describe('docs/architecture.md', () => {
  const layout = namedInLayout(layoutLines(readFileSync(join(root, 'docs', 'architecture.md'), 'utf8')));

  it('names every file under src/ in its Layout, under the file\'s own folder', () => {
    const missing = filesUnder('src').filter((file) => !layout.includes(file));
    expect(missing).toEqual([]);
  });

  it('names no file under src/ that does not exist', () => {
    const files = new Set(filesUnder('src'));
    expect(layout.filter((file) => !files.has(file))).toEqual([]);
  });
});
