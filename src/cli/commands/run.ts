import { Command } from 'commander';
import { CommandError, EXIT, oneLine } from '../CommandError.js';
import { addRunOptions, discard, missingModel, openStore, realModel, refusedAgentFile, requireModel, runtimeFor, type RunFlags } from '../runOptions.js';
import { isScenarioPath, loadScenario, scenarioPath } from '../Scenario.js';
import { watchRun } from '../watchRun.js';

const EXAMPLES = `
A target with a path or a .ts, .mts, .js or .mjs ending is a scenario file: its default export is a
function (runtime) => result, or { agents?, model?, tools?, options?, run(runtime) }; options are
runtime options, such as a simulated clock (--seed and --max-parallel win). It runs on its own (scripted) model
unless --model or --base-url asks for a real one. Any other target is an agent name (from ./agents or
--agents DIR), run on --task with a real model: OPENAI_API_KEY or --base-url.

Exit codes: 0 the run completed, 1 it failed, 2 a bad argument, agent, file or model, 130 interrupted.

Examples:
  $ troupe run examples/scenario.ts
  $ troupe run examples/scenario.ts --json > events.jsonl
  $ troupe run examples/scenario.ts --inspect
  $ troupe run researcher --task "What changed in 2.0?" --agents team/ --base-url http://127.0.0.1:11434/v1 --model llama3.1`;

/** `troupe run <scenario | agent>`: runs a scenario file, or one agent on a task, and shows the run as it goes. */
export function runCommand(): Command {
  const command = new Command('run')
    .description('run a scenario file, or one agent on a task, watching it live')
    .argument('<target>', 'a scenario file (.ts, .mts, .js, .mjs) or an agent name');
  return addRunOptions(command, 'optional')
    .addHelpText('after', EXAMPLES)
    .action(async (target: string, flags: RunFlags) => {
      if (isScenarioPath(target)) await runScenario(target, flags);
      else await runAgent(target, flags);
    });
}

async function runScenario(file: string, flags: RunFlags): Promise<void> {
  // The store before the scenario is loaded: a store that cannot be used stops the run before the scenario's own code
  // runs (a file that is no scenario is said first, and makes no store folder).
  scenarioPath(file);
  const store = openStore(flags.store);
  const scenario = await loadScenario(file);
  // A scenario brings its own (scripted) model; --model or --base-url ask for a real one instead.
  const model = flags.model !== undefined || flags.baseUrl !== undefined ? await requireModel(flags) : (scenario.model ?? (await realModel(flags)) ?? missingModel);
  const runtime = await runtimeFor(flags, { ...scenario.options, model, agents: scenario.agents ?? [], tools: scenario.tools ?? [] }, store);
  await watchRun(runtime, flags, async () => {
    try {
      return await scenario.run(runtime, flags.task === undefined ? {} : { task: flags.task });
    } catch (error) {
      throw new CommandError(`scenario ${file} failed: ${oneLine(error)}`, EXIT.failed);
    }
  });
}

async function runAgent(name: string, flags: RunFlags): Promise<void> {
  const task = flags.task;
  if (task === undefined || task.trim() === '') throw new CommandError(`an agent needs a task: troupe run ${name} --task TEXT`);
  const model = await requireModel(flags);
  const runtime = await runtimeFor(flags, { model });
  if (!runtime.agentNames.includes(name)) {
    await discard(runtime);
    // A file of that name that was refused is why the agent is missing: say so, not that nobody defines it.
    throw refusedAgentFile(runtime, name) ?? new CommandError(`unknown agent "${name}": the agents here are ${runtime.agentNames.join(', ')} (from ./agents and --agents DIR)`);
  }
  await watchRun(runtime, flags, () => runtime.run(name, task));
}
