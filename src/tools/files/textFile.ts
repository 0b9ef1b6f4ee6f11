import { randomBytes } from 'node:crypto';
import { chmod, mkdir, open, rename, stat, unlink, writeFile, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';

/** Bytes looked at to tell a binary file from text, as git does: a NUL byte among the first 8,000 means binary. */
const SNIFF_BYTES = 8_000;

/** True when the start of a file holds a NUL byte: a binary file, which file tools do not show or edit. */
export async function isBinaryFile(path: string): Promise<boolean> {
  let handle: FileHandle | undefined;
  try {
    handle = await open(path, 'r');
    const buffer = Buffer.alloc(SNIFF_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, SNIFF_BYTES, 0);
    return buffer.subarray(0, bytesRead).includes(0);
  } finally {
    await handle?.close();
  }
}

/** True for the text of a file that holds a NUL byte near its start (see {@link isBinaryFile}). */
export function isBinaryText(text: Buffer): boolean {
  return text.subarray(0, SNIFF_BYTES).includes(0);
}

/** A size in bytes for people: `512 bytes`, `12.5 KB`, `3.1 MB`. */
export function formatSize(bytes: number): string {
  if (bytes < 1024) return `${bytes} byte${bytes === 1 ? '' : 's'}`;
  if (bytes < 1024 * 1024) return `${(bytes / 1024).toFixed(1)} KB`;
  return `${(bytes / 1024 / 1024).toFixed(1)} MB`;
}

/** The number of lines of a text, as an editor counts them (a last line without a newline counts). */
export function countLines(text: string): number {
  if (text === '') return 0;
  let lines = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < text.length - 1; i = text.indexOf('\n', i + 1)) lines += 1;
  return lines;
}

/**
 * Writes a file atomically: the text goes to a temporary file beside it, which is then renamed over it, so a reader
 * sees the old file or the new one, never half of one. Missing parent folders are made; an existing file keeps its
 * permissions. Returns true when the file was new.
 */
export async function writeAtomically(path: string, text: string): Promise<boolean> {
  const folder = dirname(path);
  await mkdir(folder, { recursive: true });
  const mode = await stat(path).then(
    (stats) => stats.mode & 0o7777,
    () => undefined,
  );
  const temporary = join(folder, `.${basename(path)}.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await writeFile(temporary, text, { encoding: 'utf8', flag: 'wx' });
    if (mode !== undefined) await chmod(temporary, mode);
    await rename(temporary, path);
  } catch (error) {
    await unlink(temporary).catch(() => {});
    throw error;
  }
  return mode === undefined;
}
