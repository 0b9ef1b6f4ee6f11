import { relative } from 'node:path';
import { Command } from 'commander';
import { misspellingWarnings } from '../../catalog/adaptAgentFile.js';
import { AgentFiles, shadowedMessage, type LoadedAgent } from '../../catalog/AgentFiles.js';
import type { AgentDefinition } from '../../catalog/defineAgent.js';
import { clip, firstLine } from '../../views/liveFormat.js';
import { CommandError, oneLine } from '../CommandError.js';
import { collect } from '../runOptions.js';
import { table } from '../table.js';

/** The project's own agent folder, read when it exists (as the runtime does). */
const PROJECT_AGENTS = 'agents';

interface AgentsFlags {
  agents?: string[];
  json?: boolean;
}

/** `troupe agents list | show NAME`: the agents kept as files in ./agents and in `--agents` folders. */
export function agentsCommand(): Command {
  const agents = new Command('agents').description('list the agents kept as files, or show one').addHelpText(
    'after',
    `
Agent files are <name>.md with YAML frontmatter (name, description, tools, …) and the system prompt as
the body, in ./agents and in every --agents DIR (later folders win on a name).

Examples:
  $ troupe agents list
  $ troupe agents show researcher --agents examples/agent-files/agents`,
  );
  agents
    .command('list')
    .description('list the agents: name, description, tools')
    .option('--agents <dir>', 'a folder of agent files, besides ./agents (may be repeated)', collect)
    .option('--json', 'print them as JSON')
    .addHelpText('after', '\nExamples:\n  $ troupe agents list\n  $ troupe agents list --agents team/ --json')
    .action((flags: AgentsFlags) => listAgents(flags));
  agents
    .command('show')
    .description('show one agent: its fields, file and system prompt')
    .argument('<name>', 'the agent name')
    .option('--agents <dir>', 'a folder of agent files, besides ./agents (may be repeated)', collect)
    .option('--json', 'print it as JSON')
    .addHelpText('after', '\nExamples:\n  $ troupe agents show researcher\n  $ troupe agents show researcher --agents examples/agent-files/agents --json')
    .action((name: string, flags: AgentsFlags) => showAgent(name, flags));
  return agents;
}

function listAgents(flags: AgentsFlags): void {
  const files = new AgentFiles(flags.agents ?? [], [PROJECT_AGENTS]);
  const { agents, errors, shadowed } = files.scan();
  for (const error of errors) process.stderr.write(`troupe: warning: ${oneLine(error)}\n`);
  for (const file of shadowed) process.stderr.write(`troupe: warning: ${shadowedMessage(file)}\n`);
  for (const warning of agents.flatMap(misspellingWarnings)) process.stderr.write(`troupe: warning: ${warning.message}\n`);
  const sorted = agents.sort((a, b) => a.definition.name.localeCompare(b.definition.name));
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(sorted.map(asJson), null, 2)}\n`);
    return;
  }
  if (sorted.length === 0) {
    process.stdout.write(`No agent files in ${describeFolders(files)}: add <name>.md files, or pass --agents DIR.\n`);
    return;
  }
  const rows = sorted.map(({ definition }) => [definition.name, clip(firstLine(definition.description), 70), toolNames(definition)]);
  process.stdout.write(`${table([['NAME', 'DESCRIPTION', 'TOOLS'], ...rows])}\n`);
}

function showAgent(name: string, flags: AgentsFlags): void {
  const files = new AgentFiles(flags.agents ?? [], [PROJECT_AGENTS]);
  const loaded = files.load(name);
  if (!loaded) {
    const known = files.scan().agents.map((agent) => agent.definition.name).sort();
    const others = known.length > 0 ? `the agents here are ${known.join(', ')}` : `no agent files in ${describeFolders(files)}`;
    throw new CommandError(`unknown agent "${name}": ${others}`);
  }
  if (flags.json) {
    process.stdout.write(`${JSON.stringify(asJson(loaded), null, 2)}\n`);
    return;
  }
  const { definition } = loaded;
  const fields: string[][] = [['file', relative(process.cwd(), loaded.file) || loaded.file]];
  for (const [key, value] of Object.entries(definition)) {
    if (key === 'name' || key === 'description' || key === 'systemPrompt' || value === undefined) continue;
    fields.push([key, Array.isArray(value) ? value.map(String).join(', ') : typeof value === 'object' ? JSON.stringify(value) : String(value)]);
  }
  const body = [definition.name, definition.description, '', table(fields.map(([key, value]) => [`${key}:`, value!])), '', definition.systemPrompt];
  process.stdout.write(`${body.join('\n')}\n`);
}

function asJson({ definition, file }: LoadedAgent) {
  return { ...definition, file };
}

function toolNames(definition: AgentDefinition): string {
  return (definition.tools ?? []).map((tool) => (typeof tool === 'string' ? tool : tool.name)).join(', ') || '-';
}

function describeFolders(files: AgentFiles): string {
  const dirs = files.dirs.map((dir) => relative(process.cwd(), dir) || '.');
  return dirs.length > 0 ? dirs.join(', ') : `./${PROJECT_AGENTS} (not there)`;
}
