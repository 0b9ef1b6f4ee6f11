import { existsSync, mkdirSync, statSync } from 'node:fs';
import { basename, dirname, resolve } from 'node:path';
import { InvalidArgumentError, Option, type Command } from 'commander';
import { ConfigurationError, CorruptStoreError } from '../errors.js';
import { isReadOnlyStoreFile, JsonFileMemory, readStoreFile } from '../memory/JsonFileMemory.js';
import { NOTES_KEY } from '../memory/NoteStore.js';
import { SESSIONS_KEY } from '../memory/SessionStore.js';
import type { Model } from '../models/Model.js';
import type { OpenAIModel } from '../models/OpenAIModel.js';
import type { Runtime, RuntimeOptions } from '../runtime/Runtime.js';
import { checkRecordingTarget } from '../views/recordingTarget.js';
import { CommandError, oneLine } from './CommandError.js';
import { startInspector, startWebUi } from './inspectRun.js';

/** Where the command keeps sessions unless `--store` says otherwise (the folder is ignored by git). */
export const DEFAULT_STORE = '.troupe/sessions.json';

/** The model used with a key or base URL unless `--model` (or `OPENAI_MODEL`) names another. */
export const DEFAULT_MODEL = 'gpt-4o-mini';

/** The options of a command that runs agents (`troupe run`, `troupe sessions resume`), as commander parses them. */
export interface RunFlags {
  task?: string;
  model?: string;
  baseUrl?: string;
  agents?: string[];
  store?: string;
  maxParallel?: number;
  seed?: number;
  trace?: string;
  inspect?: boolean;
  /** `--ui` (true) or `--ui PORT`. */
  ui?: boolean | number;
  json?: boolean;
  quiet?: boolean;
}

/** Adds the options of a command that runs agents. */
export function addRunOptions(command: Command, task: 'optional' | 'required'): Command {
  const taskOption = new Option('--task <text>', task === 'required' ? 'the task to give' : 'the task for an agent (a scenario gets it too)');
  if (task === 'required') taskOption.makeOptionMandatory();
  return command
    .addOption(taskOption)
    .option('--model <name>', `the model's name on the server (default $OPENAI_MODEL or ${DEFAULT_MODEL})`)
    .option('--base-url <url>', 'an OpenAI-compatible server, such as http://127.0.0.1:11434/v1 (default $OPENAI_BASE_URL)', url)
    .option('--agents <dir>', 'a folder of agent files, besides ./agents (may be repeated)', collect)
    .option('--store <file>', `the JSON file sessions are kept in (default ${DEFAULT_STORE})`)
    .option('--max-parallel <n>', 'agents running at once (default 5)', positiveWhole)
    .option('--seed <n>', 'seeds ids and scripted randomness, for runs that repeat', whole)
    .option('--trace <file>', 'writes every event to this file as JSON lines, secrets redacted')
    .option('--inspect', 'shows the run in the Stately inspector: prints a page on 127.0.0.1 to open, kept after the run until Ctrl-C')
    .option('--ui [port]', "shows the run in troupe's web inspector: prints a page on 127.0.0.1 (any free port, or PORT) to open, kept after the run until Ctrl-C", uiPort)
    .addOption(new Option('--json', 'print every event as a JSON line, then the result').conflicts('quiet'))
    .option('--quiet', 'print only the result');
}

/**
 * A runtime made from the flags over `base` (what a scenario brings, the model), with a Stately inspector of its own
 * for `--inspect` (the command closes it: see `watchRun`). Agent files that were refused are warned about, one line each
 * on stderr: the other agents still run. The runtime's code is loaded here, not when the
 * command starts, so `--help` and argument errors answer at once.
 */
export async function runtimeFor(flags: RunFlags, base: RuntimeOptions, store = openStore(flags.store)): Promise<Runtime> {
  const { createRuntime } = await import('../createRuntime.js');
  const options = runtimeOptions(flags, base, store);
  // The web inspector first: its port may be one the user chose, and taken; then the run stops with that one line,
  // before a Stately inspector was started and its page printed.
  const ui = flags.ui === undefined || flags.ui === false ? undefined : await startWebUi(flags.ui === true ? 0 : flags.ui, 'troupe run');
  let inspector: Awaited<ReturnType<typeof startInspector>> | undefined;
  try {
    inspector = flags.inspect ? await startInspector() : undefined;
  } catch (error) {
    await ui?.close();
    throw error;
  }
  let runtime: Runtime;
  try {
    runtime = createRuntime({ ...options, ...(inspector ? { inspect: inspector } : {}), ...(ui ? { ui } : {}) });
  } catch (error) {
    await Promise.all([inspector?.close(), ui?.close()]);
    throw error;
  }
  for (const error of runtime.agentFileErrors) process.stderr.write(`troupe: warning: ${oneLine(error)}\n`);
  for (const warning of runtime.agentFileWarnings) process.stderr.write(`troupe: warning: ${oneLine(warning.message)}\n`);
  return runtime;
}

/** Shuts down a runtime that will not run (its agent or session is unknown), and closes its inspectors. */
export async function discard(runtime: Runtime): Promise<void> {
  await runtime.shutdown();
  await Promise.all([runtime.inspector?.close(), runtime.ui?.close()]);
}

/** The runtime's options from the flags, over what a scenario brings. */
function runtimeOptions(flags: RunFlags, base: RuntimeOptions, store: JsonFileMemory): RuntimeOptions {
  return {
    ...base,
    // `--agents` adds folders (as it does to ./agents): a scenario's own folders stay, before them.
    ...(flags.agents ? { agentDirs: [...(base.agentDirs ?? []), ...flags.agents] } : {}),
    store,
    ...(flags.maxParallel !== undefined ? { maxParallel: flags.maxParallel } : {}),
    ...(flags.seed !== undefined ? { seed: flags.seed } : {}),
    ...(flags.trace !== undefined ? { trace: traceFile(flags.trace, flags.store ?? DEFAULT_STORE) } : {}),
  };
}

/**
 * The `--trace` file, once it can be written: its folder exists, it is not a folder itself, not the session store, and
 * holds nothing but an earlier trace if anything (a trace is written anew, over what the file held).
 */
function traceFile(file: string, store: string): string {
  const path = resolve(file);
  if (!isFolder(dirname(path))) throw new CommandError(`cannot write trace ${file}: its folder ${dirname(file)} does not exist`);
  if (isFolder(path)) throw new CommandError(`cannot write trace ${file}: it is a folder`);
  if (path === resolve(store)) throw new CommandError(`cannot write trace ${file}: it is the session store (--store); give the trace a file of its own`);
  try {
    checkRecordingTarget(path, 'trace');
  } catch {
    throw new CommandError(`cannot write trace ${file}: it holds something else than a troupe trace; it was left as it is`);
  }
  return file;
}

/**
 * A real model when the flags or the environment give a way to reach one (`--base-url`, `OPENAI_BASE_URL` or
 * `OPENAI_API_KEY`); undefined otherwise.
 */
export async function realModel(flags: Pick<RunFlags, 'model' | 'baseUrl'>, env: NodeJS.ProcessEnv = process.env): Promise<OpenAIModel | undefined> {
  const fromEnv = nonEmpty(env.OPENAI_BASE_URL);
  // Checked as --base-url is: otherwise the run started and every model call failed with an "Invalid URL".
  if (flags.baseUrl === undefined && fromEnv !== undefined && !isHttpUrl(fromEnv)) {
    throw new CommandError(`OPENAI_BASE_URL "${fromEnv}" ${URL_EXPECTED}`);
  }
  const baseURL = flags.baseUrl ?? fromEnv;
  if (baseURL === undefined && nonEmpty(env.OPENAI_API_KEY) === undefined) return undefined;
  const { OpenAIModel } = await import('../models/OpenAIModel.js'); // the openai package, only when it is used
  return new OpenAIModel({ model: flags.model ?? nonEmpty(env.OPENAI_MODEL) ?? DEFAULT_MODEL, ...(baseURL ? { baseURL } : {}) });
}

const NO_MODEL = 'no model: set OPENAI_API_KEY or pass --base-url';

/** {@link realModel}, or a {@link CommandError} that says how to give one. */
export async function requireModel(flags: Pick<RunFlags, 'model' | 'baseUrl'>): Promise<OpenAIModel> {
  const model = await realModel(flags);
  if (!model) throw new CommandError(NO_MODEL);
  return model;
}

/**
 * The model of a scenario that brings none, when no real one is configured either: the scenario still runs (it may
 * not ask a model at all), and an agent that asks fails with an error that says how to give one.
 */
export const missingModel: Model = {
  name: 'none',
  complete: () => Promise.reject(new ConfigurationError(NO_MODEL)),
};

/**
 * The session store to write: `--store FILE`, or {@link DEFAULT_STORE} (its folder made when missing). A file there must
 * be a store troupe can use, checked before anything runs (see {@link checkedStore}): a scenario opens it before its
 * file is loaded (its top-level code run).
 */
export function openStore(file: string | undefined): JsonFileMemory {
  const path = resolve(file ?? DEFAULT_STORE);
  if (file === undefined) makeStoreFolder(dirname(path));
  else if (!isFolder(dirname(path))) throw new CommandError(`cannot use store ${file}: its folder ${dirname(file)} does not exist`);
  return checkedStore(path, file ?? DEFAULT_STORE, 'use');
}

/** Makes the default store's folder (`.troupe`), or says in one line why it cannot be made. */
function makeStoreFolder(folder: string): void {
  try {
    mkdirSync(folder, { recursive: true });
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    const why = code === 'EEXIST' || code === 'ENOTDIR' ? 'a file of that name is there' : code === 'EACCES' ? 'permission denied' : oneLine(error);
    throw new CommandError(`cannot use store ${DEFAULT_STORE}: its folder ${dirname(DEFAULT_STORE)} cannot be made (${why}); give another --store`);
  }
}

/**
 * The {@link CommandError} for an agent the runtime does not have although a file of its name is in its folders: the
 * file was refused (a bad field), and its error says why. Undefined when no such file was refused.
 */
export function refusedAgentFile(runtime: Runtime, name: string): CommandError | undefined {
  const refused = runtime.agentFileErrors.find((error) => basename(error.file) === `${name}.md`);
  return refused && new CommandError(`the agent file of "${name}" was refused: ${oneLine(refused)}`);
}

/** The session store to read: it must exist. */
export function existingStore(file: string | undefined, verb: 'read' | 'use' = 'read'): JsonFileMemory {
  const name = file ?? DEFAULT_STORE;
  if (!existsSync(name)) throw new CommandError(`cannot ${verb} store ${name}: no such file (a run writes it; --store FILE reads another)`);
  if (!statSync(name).isFile()) throw new CommandError(`cannot ${verb} store ${name}: not a file`);
  return checkedStore(resolve(name), name, verb);
}

/**
 * A store on `path`, once its file (if any) is one troupe may use: not corrupt, not newer, not a folder, not some
 * other program's JSON, and (to write it) not read-only. A file without a `schemaVersion` is read as an old store, so one that holds keys but neither
 * sessions nor notes is refused, never rewritten (a `package.json` given as `--store` would be).
 */
function checkedStore(path: string, name: string, verb: 'use' | 'read'): JsonFileMemory {
  let found: ReturnType<typeof readStoreFile>;
  try {
    found = readStoreFile(path);
  } catch (error) {
    const why = error instanceof CorruptStoreError ? `${error.reason}; it was left as it is` : oneLine(error);
    throw new CommandError(`cannot ${verb} store ${name}: ${why}`);
  }
  if (found && !found.versioned && found.keys.length > 0 && !found.keys.some((key) => TROUPE_KEYS.includes(key))) {
    throw new CommandError(`cannot ${verb} store ${name}: it is not a troupe store (no schemaVersion, no sessions or notes); give another file`);
  }
  // Sessions that are not an object of records (a list, a number: written by hand or by another program) would read
  // as no sessions at all, and a run would fail to write its own only once its work was done.
  const sessions = found?.data[SESSIONS_KEY];
  if (sessions !== undefined && sessions !== null && (typeof sessions !== 'object' || Array.isArray(sessions))) {
    const what = Array.isArray(sessions) ? 'a list' : `a ${typeof sessions}`;
    throw new CommandError(`cannot ${verb} store ${name}: it holds ${what} under "${SESSIONS_KEY}", not session records; it was left as it is (move it, or give another --store)`);
  }
  // A run writes its sessions at the end: a store it cannot write is refused now, not after the run's work is done.
  if (found && verb === 'use' && isReadOnlyStoreFile(path)) {
    throw new CommandError(`cannot use store ${name}: it is read-only; it was left as it is (make it writable, or give another --store)`);
  }
  return new JsonFileMemory(path);
}

/** The keys troupe's own stores write. */
const TROUPE_KEYS: readonly string[] = [SESSIONS_KEY, NOTES_KEY];

function isFolder(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value;
}

/**
 * Parses `--ui`'s optional port. Its value is optional, so commander takes the word after `--ui` for it: a target
 * (or session id) given after the flag (`troupe run --ui team.ts`) lands here, and the message says to put `--ui` after it.
 */
function uiPort(value: string): number {
  if (/^\s*\d+\s*$/.test(value)) return port(value);
  throw new InvalidArgumentError(`must be a port number, 0 to 65535; --ui takes the word after it as its port: put --ui after the target or session id (… ${value} --ui)`);
}

/** Parses a port number, 0 to 65535 (`--ui PORT`; 0 is any free port). */
export function port(value: string): number {
  const number = Number(value.trim());
  if (!/^\d+$/.test(value.trim()) || number > 65_535) throw new InvalidArgumentError('must be a port number, 0 to 65535.');
  return number;
}

/** Parses a whole number (`--seed`). */
function whole(value: string): number {
  if (!/^-?\d+$/.test(value.trim())) throw new InvalidArgumentError('must be a whole number.');
  return Number(value);
}

/** Parses a whole number from 1 up (`--max-parallel`). */
function positiveWhole(value: string): number {
  if (!/^\d+$/.test(value.trim()) || Number(value) < 1) throw new InvalidArgumentError('must be a whole number from 1 up.');
  return Number(value);
}

const URL_EXPECTED = 'must be an http(s) URL, such as http://127.0.0.1:11434/v1';

function isHttpUrl(value: string): boolean {
  try {
    const { protocol } = new URL(value);
    return protocol === 'http:' || protocol === 'https:';
  } catch {
    return false;
  }
}

function url(value: string): string {
  if (!isHttpUrl(value)) throw new InvalidArgumentError(`${URL_EXPECTED}.`);
  return value;
}

/** Gathers the values of a repeatable option (`--agents a --agents b`). */
export function collect(value: string, previous: string[] | undefined): string[] {
  return [...(previous ?? []), value];
}
