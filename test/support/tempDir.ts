// Real temporary folders for tests that touch files; each test removes its own.
import { afterEach, beforeEach } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Makes a fresh temporary folder; call the returned `remove` when done. */
export function tempDir(prefix = 'troupe-'): { path: string; remove: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

/** The text of an agent file. */
export function agentFile(name: string, fields: string[] = [], body = `You are ${name}.`): string {
  return `---\nname: ${name}\ndescription: The ${name}.\n${fields.join('\n')}${fields.length ? '\n' : ''}---\n${body}\n`;
}

/** A fresh temporary folder for each test of the file (made before it, removed after it); read `.path` in a test. */
export function eachTestTempDir(): { readonly path: string } {
  let current: ReturnType<typeof tempDir> | undefined;
  beforeEach(() => {
    current = tempDir();
  });
  afterEach(() => current?.remove());
  return {
    get path() {
      if (!current) throw new Error('eachTestTempDir: read .path inside a test or a hook.');
      return current.path;
    },
  };
}
