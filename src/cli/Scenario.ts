import { accessSync, constants, statSync } from 'node:fs';
import { basename, dirname, extname, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Agent, AgentDefinition } from '../catalog/defineAgent.js';
import type { Model } from '../models/Model.js';
import type { Runtime, RuntimeOptions } from '../runtime/Runtime.js';
import type { Tool } from '../tools/defineTool.js';
import { CommandError } from './CommandError.js';

/** What `troupe run` hands a scenario besides the runtime. */
export interface ScenarioContext {
  /** The `--task` text, when one was given. */
  task?: string;
}

/** The body of a scenario: runs agents on the runtime it is given and returns a result (an `AgentResult`, or anything). */
export type ScenarioRun = (runtime: Runtime, context: ScenarioContext) => unknown;

/**
 * Runtime options a scenario sets for the runtime `troupe run` makes for it: a simulated `clock`, a `seed`, inbox
 * sizes, limits, policies, a `record` file and so on. The command's flags win (`--seed`, `--max-parallel`; `--agents`
 * adds its folders after `agentDirs`); what it
 * owns itself is not among them: the `store` (`--store`), the `trace` (`--trace`) and the inspectors (`--inspect`,
 * `--ui`), and the scenario's `agents`, `model` and `tools` have fields of their own.
 */
export type ScenarioRuntimeOptions = Omit<RuntimeOptions, 'model' | 'agents' | 'tools' | 'store' | 'trace' | 'inspect' | 'ui'>;

/** The options the command sets itself, refused in a scenario's `options` with the flag (or field) to use instead. */
const COMMAND_OWNED: Readonly<Record<string, string>> = {
  model: 'the scenario\'s model field (or --model / --base-url)',
  agents: "the scenario's agents field",
  tools: "the scenario's tools field",
  store: '--store',
  trace: '--trace',
  inspect: '--inspect',
  ui: '--ui',
};

/** A scenario that brings the agents, model and tools its runtime is made with, besides its `run`. */
export interface ScenarioDefinition {
  /** Agents defined in code (agent files come from `--agents` and `./agents`). */
  agents?: readonly (Agent | AgentDefinition)[];
  /** The model agents use (a scripted one, to run offline); `--model` or `--base-url` replace it with a real one. */
  model?: Model;
  /** Tools agents may name. */
  tools?: readonly Tool[];
  /**
   * Options of the runtime: `{ clock: new SimulatedClock(), seed: 7 }` runs a simulation, whose `run` then drives its
   * time (`runtime.runUntilIdle()`; see the README's Messaging and simulations).
   */
  options?: ScenarioRuntimeOptions;
  run: ScenarioRun;
}

/**
 * The default export of a scenario file that `troupe run <file>` runs: a function of the runtime, or a
 * {@link ScenarioDefinition} that also gives the agents, model, tools and runtime options. The command makes the runtime
 * from its options (`--seed`, `--max-parallel`, `--store`, `--agents`, `--trace`) over the scenario's,
 * watches its events, and shuts it down when `run` has returned.
 *
 * @example
 * // scenario.ts: troupe run scenario.ts
 * export default {
 *   agents: [greeter],
 *   model: new ScriptedModel(['Hello!']),
 *   run: (runtime) => runtime.run('greeter', 'Say hello.'),
 * } satisfies Scenario;
 */
export type Scenario = ScenarioRun | ScenarioDefinition;

const TYPESCRIPT = /\.(?:ts|mts|cts|tsx)$/;
const SCRIPT = /\.(?:ts|mts|cts|tsx|js|mjs|cjs)$/;

/** True when `troupe run` should read its target as a scenario file rather than an agent name. */
export function isScenarioPath(target: string): boolean {
  return SCRIPT.test(target) || /[\\/]/.test(target);
}

let typescriptLoader: Promise<unknown> | undefined;

/**
 * The absolute path of a scenario file that can be read and is a script (.ts, .mts, .js, .mjs), or the
 * {@link CommandError} that says why not; its code is not run.
 */
export function scenarioPath(file: string): string {
  const path = resolve(file);
  try {
    accessSync(path, constants.R_OK);
    if (!statSync(path).isFile()) throw new Error('not a file');
  } catch (error) {
    throw new CommandError(`cannot read scenario ${file}: ${reason(error)}`);
  }
  if (!SCRIPT.test(path)) throw new CommandError(notAScenario(file));
  return path;
}

/**
 * Loads a scenario file: TypeScript through tsx's loader (registered once, so the scenario's `troupe` is the same
 * module the command uses), JavaScript with `import()`. An unreadable file, one that does not load, or one whose
 * default export is not a scenario is a {@link CommandError}.
 */
export async function loadScenario(file: string): Promise<ScenarioDefinition> {
  const path = scenarioPath(file);
  let loaded: { default?: unknown };
  try {
    if (TYPESCRIPT.test(path)) {
      typescriptLoader ??= import('tsx/esm/api').then((tsx) => tsx.register());
      await typescriptLoader;
    }
    loaded = (await import(pathToFileURL(path).href)) as { default?: unknown };
  } catch (error) {
    throw new CommandError(`cannot load scenario ${file}: ${reason(error)}${commonJsHint(error)}`);
  }
  return asScenario(loaded.default, file);
}

/** What to say of a file that is no script: an agent file (`researcher.md`) is run by its name. */
function notAScenario(file: string): string {
  const agentFile = extname(file) === '.md' ? `; to run the agent of an agent file, give its name and folder: troupe run ${basename(file, '.md')} --agents ${dirname(file)} --task TEXT` : '';
  return `cannot load scenario ${file}: a scenario is a .ts, .mts, .js or .mjs file${agentFile}`;
}

function asScenario(value: unknown, file: string): ScenarioDefinition {
  const expected = `${file} must export default a function (runtime) => result, or an object { agents?, model?, tools?, options?, run }`;
  if (typeof value === 'function') return { run: value as ScenarioRun };
  // A script (most of examples/) does its work as it is loaded and exports nothing: what it printed was its own run.
  if (value === undefined) {
    throw new CommandError(`${file} has no default export: it is a script, which ran as it was loaded, not a scenario; run it with tsx, or make it a scenario: ${expected.slice(file.length + 1)}`);
  }
  if (value === null || typeof value !== 'object' || typeof (value as ScenarioDefinition).run !== 'function') {
    throw new CommandError(expected);
  }
  const scenario = value as ScenarioDefinition;
  if (scenario.agents !== undefined && !Array.isArray(scenario.agents)) throw new CommandError(`${file}: agents must be a list`);
  if (scenario.tools !== undefined && !Array.isArray(scenario.tools)) throw new CommandError(`${file}: tools must be a list`);
  if (scenario.model !== undefined && typeof scenario.model?.complete !== 'function') {
    throw new CommandError(`${file}: model must be a Model (an object with complete(request))`);
  }
  checkOptions(scenario.options, file);
  return scenario;
}

/** A scenario's runtime options: a plain object, without what the command sets itself (the rest createRuntime checks). */
function checkOptions(options: unknown, file: string): void {
  if (options === undefined) return;
  if (options === null || typeof options !== 'object' || Array.isArray(options)) throw new CommandError(`${file}: options must be an object of runtime options`);
  for (const key of Object.keys(options)) {
    const instead = COMMAND_OWNED[key];
    if (instead !== undefined) throw new CommandError(`${file}: options.${key} is set by the command; use ${instead}`);
  }
}

/**
 * What to do when a scenario was loaded as CommonJS (a `.ts` file in a package without `"type": "module"`, which
 * `npm init` writes): troupe ships ES modules only, so `require` cannot load it.
 */
function commonJsHint(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : String(error);
  // Node versions say it differently: a require() of troupe refused, or the scenario's own `import` refused.
  const commonJs =
    code === 'ERR_REQUIRE_ESM' ||
    code === 'ERR_REQUIRE_CYCLE_MODULE' ||
    code === 'ERR_PACKAGE_PATH_NOT_EXPORTED' ||
    /require\(\) (of )?ES Module|Cannot use import statement outside a module/i.test(message);
  return commonJs ? ' (it was loaded as CommonJS, and troupe is ES modules only: name the file .mts, or set "type": "module" in its package.json)' : '';
}

/**
 * The reason of a file error, without the path Node repeats in its message. A first line that ends in `:` gets the
 * line after it: a scenario that does not compile says where and what (`Transform failed with 1 error: file:2:12:
 * ERROR: Unexpected ";"`).
 */
function reason(error: unknown): string {
  const code = (error as { code?: unknown } | null)?.code;
  if (code === 'ENOENT') return 'no such file';
  if (code === 'EACCES') return 'permission denied';
  if (code === 'EISDIR') return 'not a file';
  const message = error instanceof Error ? error.message : String(error);
  const lines = message.split('\n').map((line) => line.trim()).filter((line) => line !== '');
  if (lines.length === 0) return 'unknown error';
  return lines[0]!.endsWith(':') && lines[1] !== undefined ? `${lines[0]} ${lines[1]}` : lines[0]!;
}
