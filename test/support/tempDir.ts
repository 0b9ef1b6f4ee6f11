// Real temporary folders for tests that touch files; each test removes its own.
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
