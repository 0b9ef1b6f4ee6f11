// Runs the troupe command as a user would, in a child process from the source (node --import tsx src/cli/main.ts),
// offline unless a test gives it a server.
import { execFile, spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createRequire } from 'node:module';
import { fileURLToPath, pathToFileURL } from 'node:url';

/** The worktree's root: the command runs from here unless told otherwise (its tsconfig resolves `troupe`). */
export const root = fileURLToPath(new URL('../..', import.meta.url));

/** tsx's loader, by its full address: the command may run in another folder. */
export const tsxLoader = pathToFileURL(createRequire(import.meta.url).resolve('tsx')).href;

/** What a run of the command gave. */
export interface CommandRun {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `troupe <args>`; never rejects on a non-zero exit code (the test checks it). */
export function troupe(args: readonly string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): Promise<CommandRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', tsxLoader, `${root}src/cli/main.ts`, ...args],
      { cwd: options.cwd ?? root, env: { ...offlineEnv(), ...options.env }, timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') reject(error);
        else resolve({ code: error ? Number(error.code) : 0, stdout, stderr });
      },
    );
  });
}

/** The environment of a machine with no model configured. */
export function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  for (const name of ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'OPENAI_MODEL', 'NO_COLOR', 'FORCE_COLOR']) delete env[name];
  return env;
}

/** A troupe command running as a child process, its output gathered as it comes. */
export interface LiveCommand {
  readonly child: ChildProcessWithoutNullStreams;
  readonly stdout: () => string;
  readonly stderr: () => string;
  /** Resolves with the first match of `pattern` in stderr, waiting for more output as it comes. */
  waitForStderr(pattern: RegExp): Promise<RegExpMatchArray>;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Starts `troupe <args>` and leaves it running (a command that serves a page until Ctrl-C). */
export function startTroupe(args: readonly string[], options: { cwd?: string } = {}): LiveCommand {
  const child = spawn(process.execPath, ['--import', tsxLoader, `${root}src/cli/main.ts`, ...args], { cwd: options.cwd ?? root, env: offlineEnv() });
  started.add(child);
  child.once('exit', () => started.delete(child));
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += String(chunk)));
  child.stderr.on('data', (chunk: Buffer) => (stderr += String(chunk)));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exited,
    waitForStderr: (pattern) =>
      new Promise((resolve, reject) => {
        const check = () => {
          const match = stderr.match(pattern);
          if (!match) return;
          child.stderr.off('data', check);
          resolve(match);
        };
        child.stderr.on('data', check);
        exited.then(() => reject(new Error(`troupe exited before printing ${pattern}: ${stderr}`)));
        check();
      }),
  };
}

/** Commands {@link startTroupe} started that have not exited yet. */
const started = new Set<ChildProcessWithoutNullStreams>();

/**
 * Kills every command {@link startTroupe} started that is still running: a test that failed before it sent its
 * Ctrl-C would leave a `troupe run --ui` serving its page, and waiting for that Ctrl-C, after the tests ended.
 */
export async function killStartedTroupes(): Promise<void> {
  await Promise.all(
    [...started].map((child) => {
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      return exited;
    }),
  );
}
