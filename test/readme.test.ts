// Every ```ts block of README.md is checked code: a new user copies these first, so each must type-check against the
// package as it is, with the project's own strictness. One tsc run covers them all (a module per block, in a temporary
// folder), and a block that fails is named by its line in README.md with tsc's message.
//
// The convention for README.md:
// - A block is a whole module a user can paste: it brings its own imports (`troupe`, `troupe/testing`, `zod`, `xstate`,
//   `vitest`). `troupe` and `troupe/testing` resolve to this checkout's src/, through tsconfig.json's `paths`.
// - A block that continues one before it, or stands for a part of a program, is a fragment: the line right before its
//   fence is `<!-- fragment: runtime, model -->`, naming the values it assumes the reader has. Each name must be one
//   of ASSUMED below (which gives its type) and must occur in the block; the test declares them after the block's own
//   code, so the block's lines keep their numbers. A block without that comment assumes nothing.
// - A whole block that runs offline (a `ScriptedModel`, no network) may be marked `<!-- run -->` on the line before
//   its fence: the test then also runs it as a user would, with tsx (when it imports vitest, as a vitest test file,
//   with `troupe` aliased to src/ as vitest.config.ts does; when it has a default export, as a scenario, with
//   `troupe run`), and it must exit with status 0.
// The `troupe` command lines it shows (in ```sh blocks and in `code`) name commands and options the CLI has, and its
// agent files (```markdown blocks that open with `---`) load.
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, watch, writeFileSync, type FSWatcher } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Command } from 'commander';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentsCommand } from '../src/cli/commands/agents.js';
import { runCommand } from '../src/cli/commands/run.js';
import { sessionsCommand } from '../src/cli/commands/sessions.js';
import { traceCommand } from '../src/cli/commands/trace.js';
import { uiCommand } from '../src/cli/commands/ui.js';
import { parseAgentFile } from 'troupe';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const tsc = join(root, 'node_modules', '.bin', 'tsc');

/** The values a fragment may assume, with their types (as a user's program would have them). */
const ASSUMED: Record<string, string> = {
  model: "import('troupe').Model",
  runtime: "import('troupe').Runtime",
  other: "import('troupe').Runtime",
  task: 'string',
  id: 'string',
  leadId: 'string',
  agents: "import('troupe').Agent[]",
  lead: "import('troupe').Agent",
  researcher: "import('troupe').Agent",
  con: "import('troupe').Agent",
  buyer: "import('troupe').Agent",
  seller: "import('troupe').Agent",
  searchDocs: "import('troupe').Tool",
  dropTable: "import('troupe').Tool",
  delegationPolicy: "import('troupe').DelegationPolicy",
  toolPolicy: "import('troupe').ToolPolicy",
  messagePolicy: "import('troupe').MessagePolicy",
  clock: "import('xstate').SimulatedClock",
  prices: "import('troupe').PriceTable",
  dbPassword: 'string',
  token: 'string',
  limits: 'Record<string, number>',
  bank: '{ move(from: string, to: string, amount: number): Promise<string> }',
};

/** One ```ts block of README.md. */
interface Block {
  /** The line of its opening fence in README.md (from 1). */
  fence: number;
  code: string;
  assumes: string[];
  /** Marked `<!-- run -->`: run it too. */
  run: boolean;
}

/** The ```ts blocks of a Markdown text, each with the names its `<!-- fragment: … -->` comment gives. */
function tsBlocks(markdown: string): Block[] {
  const lines = markdown.split('\n');
  const blocks: Block[] = [];
  for (let index = 0; index < lines.length; index++) {
    if (!/^```(ts|typescript)\s*$/.test(lines[index]!)) continue;
    const end = lines.findIndex((line, at) => at > index && /^```\s*$/.test(line));
    if (end < 0) throw new Error(`README.md:${index + 1}: a \`\`\`ts block that never closes.`);
    const before = lines[index - 1] ?? '';
    const comment = /^<!--\s*fragment:\s*(.*?)\s*-->$/.exec(before);
    const assumes = comment ? comment[1]!.split(',').map((name) => name.trim()).filter(Boolean) : [];
    blocks.push({ fence: index + 1, code: lines.slice(index + 1, end).join('\n'), assumes, run: /^<!--\s*run\s*-->$/.test(before) });
    index = end;
  }
  return blocks;
}

const readme = readFileSync(join(root, 'README.md'), 'utf8');
const blocks = tsBlocks(readme);
const fileOf = (block: Block) => `readme-${String(block.fence).padStart(4, '0')}.ts`;
// A use of troupe that tsc must refuse: it proves that the run sees the blocks and resolves `troupe` to its types.
const CANARY = 'canary.ts';

let scratch: string | undefined;
/** tsc's messages by file name, each with its line and column in that file. */
const reports = new Map<string, { line: number; column: number; text: string }[]>();
/** The vitest config of the folder: named after the folder, so what is made of it elsewhere is known as this run's. */
let configName = 'vitest.config.mjs';
/** Files named after that config that appeared in the project's node_modules while the blocks ran (none should). */
const writtenToModules: string[] = [];
let modulesWatch: FSWatcher | undefined;

/** How each block marked `<!-- run -->` ended, by its fence's line. */
const runs = new Map<number, { code: number | string; stdout: string; stderr: string }>();

/** The environment of a machine with no model configured, so a block that runs stays offline. */
function offlineEnv(): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.OPENAI_API_KEY;
  delete env.OPENAI_BASE_URL;
  return env;
}

/**
 * A vitest config for the folder: `troupe` and `troupe/testing` from this checkout's src/, as vitest.config.ts has; its
 * cache in the folder, not in the node_modules it links to.
 */
function vitestConfig(): string {
  const source = (file: string) => JSON.stringify(join(root, 'src', file));
  return `export default {
  cacheDir: '.vite',
  resolve: { alias: [{ find: /^troupe$/, replacement: ${source('index.ts')} }, { find: /^troupe\\/testing$/, replacement: ${source('testing.ts')} }] },
  test: { include: ['readme-*.ts'] },
};
`;
}

/**
 * Runs one block's module in the folder: with tsx (whose tsconfig.json gives tsx the `paths` to this checkout), as a
 * vitest test file when it imports vitest, or as a scenario of the troupe command (from src/) when it has a default
 * export.
 */
async function runBlock(folder: string, block: Block): Promise<void> {
  const args = /from 'vitest'/.test(block.code)
    ? // The config is imported as it is: bundled (vite's default), it is written to the nearest node_modules' .vite-temp,
      // which is the project's through the link.
      [join(root, 'node_modules', 'vitest', 'vitest.mjs'), 'run', '--config', configName, '--configLoader', 'native', fileOf(block)]
    : /^export default/m.test(block.code)
      ? ['--import', 'tsx', join(root, 'src', 'cli', 'main.ts'), 'run', fileOf(block), '--quiet']
      : ['--import', 'tsx', fileOf(block)];
  const ended = await exec(process.execPath, args, { cwd: folder, env: offlineEnv(), timeout: 60_000 }).then(
    ({ stdout, stderr }) => ({ code: 0, stdout, stderr }),
    (error: { code?: number | string; stdout?: string; stderr?: string; message: string }) => ({
      code: error.code ?? 'killed',
      stdout: error.stdout ?? '',
      stderr: error.stderr || error.message,
    }),
  );
  runs.set(block.fence, ended);
}

beforeAll(async () => {
  scratch = mkdtempSync(join(tmpdir(), 'troupe-readme-'));
  // Bare imports (zod, xstate, vitest, @types/node) resolve as in the project; the folder is ESM, as a user's must be.
  symlinkSync(join(root, 'node_modules'), join(scratch, 'node_modules'), 'dir');
  writeFileSync(join(scratch, 'package.json'), JSON.stringify({ name: 'readme-blocks', private: true, type: 'module' }));
  configName = `vitest.config.${basename(scratch)}.mjs`;
  writeFileSync(join(scratch, configName), vitestConfig());
  // Vite would write a bundled config to .vite-temp in node_modules (made by the project's own vitest run, or not yet).
  const temp = join(root, 'node_modules', '.vite-temp');
  const watched = existsSync(temp) ? temp : join(root, 'node_modules');
  try {
    modulesWatch = watch(watched, (_, name) => {
      if (name !== null && (name.startsWith(configName) || (watched !== temp && name === '.vite-temp'))) writtenToModules.push(String(name));
    });
  } catch {
    // A host out of file watchers (ENOSPC) checks the blocks all the same, only not this.
  }
  // The project's options and its `paths` (which resolve relative to tsconfig.json, so to this checkout's src/).
  // The project's declarations of untyped modules (src/inspect/ws.d.ts) come in too, as tsconfig.json's `src` brings them.
  const include = ['*.ts', join(root, 'src', '**', '*.d.ts')];
  writeFileSync(join(scratch, 'tsconfig.json'), JSON.stringify({ extends: join(root, 'tsconfig.json'), include }));
  for (const block of blocks) {
    const declarations = block.assumes.map((name) => `declare const ${name}: ${ASSUMED[name] ?? 'unknown'};`);
    writeFileSync(join(scratch, fileOf(block)), `${block.code}\n${declarations.join('\n')}\nexport {};\n`);
  }
  writeFileSync(join(scratch, CANARY), `import { createRuntime } from 'troupe';\ncreateRuntime({ maxParallel: 'many' });\n`);
  const [output] = await Promise.all([
    exec(tsc, ['-p', scratch, '--pretty', 'false'], { cwd: scratch, timeout: 120_000 }).then(
      ({ stdout }) => stdout,
      (error: { stdout?: string; message: string }) => error.stdout || error.message,
    ),
    ...blocks.filter((block) => block.run).map((block) => runBlock(scratch!, block)),
  ]);
  // `file(line,col): error TSnnnn: text`, with a message's further lines indented below it.
  let last: { text: string } | undefined;
  for (const line of output.split('\n')) {
    const head = /^(?:.*[\\/])?([^\\/(]+)\((\d+),(\d+)\): (.*)$/.exec(line);
    if (head) {
      const entry = { line: Number(head[2]), column: Number(head[3]), text: head[4]! };
      reports.set(head[1]!, [...(reports.get(head[1]!) ?? []), entry]);
      last = entry;
    } else if (line.trim() && last) last.text += `\n${line}`;
    else if (line.trim()) reports.set('(tsc)', [...(reports.get('(tsc)') ?? []), { line: 0, column: 0, text: line }]);
  }
}, 180_000);

afterAll(() => {
  modulesWatch?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('README.md', () => {
  it('has its ```ts blocks found, and the check refuses a wrong use of troupe', () => {
    expect(blocks.length).toBeGreaterThanOrEqual(20);
    expect(reports.get(CANARY)?.map((report) => report.text).join('\n')).toMatch(/TS2322.*'string'.*'number'/);
  });

  it('has no tsc error outside its blocks (a broken source, a bad option)', () => {
    const elsewhere = [...reports].filter(([file]) => file !== CANARY && !blocks.some((block) => fileOf(block) === file));
    expect(elsewhere.map(([file, list]) => `${file}: ${list.map((report) => report.text).join('\n')}`)).toEqual([]);
  });

  it.each(blocks.map((block) => [block.fence, block] as const))('the block at README.md:%i type-checks (and runs, when marked <!-- run -->)', (_, block) => {
    const problems: string[] = [];
    for (const name of block.assumes) {
      if (!(name in ASSUMED)) problems.push(`README.md:${block.fence - 1}: the fragment assumes "${name}", which test/readme.test.ts does not declare (ASSUMED)`);
      else if (!new RegExp(`\\b${name}\\b`).test(block.code)) problems.push(`README.md:${block.fence - 1}: the fragment assumes "${name}", which the block does not use`);
    }
    for (const report of reports.get(fileOf(block)) ?? []) {
      const inBlock = report.line <= block.code.split('\n').length;
      problems.push(`README.md:${inBlock ? block.fence + report.line : block.fence}:${report.column}: ${report.text}`);
    }
    const ran = runs.get(block.fence);
    if (ran && ran.code !== 0) {
      problems.push(`README.md:${block.fence}: the block (marked <!-- run -->) exited with ${ran.code}: ${ran.stderr.trim()}\n${ran.stdout.trim()}`);
    }
    expect(problems, problems.join('\n')).toEqual([]);
  });

  it('declares only names some fragment assumes', () => {
    expect(Object.keys(ASSUMED).filter((name) => !blocks.some((block) => block.assumes.includes(name)))).toEqual([]);
  });

  it('runs the blocks marked <!-- run -->', () => {
    expect(blocks.filter((block) => block.run).length).toBeGreaterThanOrEqual(1);
    expect([...runs.keys()].sort()).toEqual(blocks.filter((block) => block.run).map((block) => block.fence).sort());
  });

  it('writes nothing into the node_modules it links to while it runs them (the vitest config is not bundled there)', () => {
    expect(blocks.some((block) => block.run && /from 'vitest'/.test(block.code))).toBe(true);
    expect(writtenToModules).toEqual([]);
  });
});

/** The `troupe …` command lines of a Markdown text: in ```sh blocks (after `npx ` or `$ `) and in `code` spans. */
function commandLines(markdown: string): { line: number; words: string[] }[] {
  const found: { line: number; words: string[] }[] = [];
  let shell = false;
  markdown.split('\n').forEach((text, index) => {
    if (/^```/.test(text)) shell = /^```(sh|bash|shell)\s*$/.test(text);
    const spans = shell ? [text.replace(/\s#.*$/, '')] : [...text.matchAll(/`([^`]+)`/g)].map((match) => match[1]!);
    for (const span of spans) {
      const command = /(?:^|\s|^\$ )(?:npx )?troupe((?: [^|&;]*)?)$/.exec(span.split(/\s(?:&&|\|\|?)\s/).at(-1)!.trim());
      const words = command?.[1]!.trim().split(/\s+/).filter(Boolean) ?? [];
      // `troupe trace summary: …` is the start of an error message, not a command line.
      if (command && !words.some((word) => word.endsWith(':'))) found.push({ line: index + 1, words });
    }
  });
  return found;
}

/** What is wrong with one command line: an unknown command or subcommand, or an option its command does not have. */
function commandProblem(program: Command, words: string[]): string | undefined {
  let command = program;
  for (const word of words.map((each) => each.replace(/^\[|\]$/g, ''))) {
    if (word.startsWith('--')) {
      const flag = word.split('=')[0]!;
      if (flag !== '--help' && !command.options.some((option) => option.long === flag)) return `${command.name()} has no option ${flag}`;
    } else if (command.commands.length > 0) {
      const next = command.commands.find((sub) => sub.name() === word);
      if (!next) return `${command.name()} has no command "${word}" (it has ${command.commands.map((sub) => sub.name()).join(', ')})`;
      command = next;
    }
  }
  return undefined;
}

describe("README.md's troupe command lines", () => {
  const program = new Command('troupe').option('-v, --version');
  for (const make of [runCommand, agentsCommand, sessionsCommand, traceCommand, uiCommand]) program.addCommand(make());
  const lines = commandLines(readme);

  it('name commands and options the troupe command has', () => {
    expect(lines.length).toBeGreaterThanOrEqual(10);
    const problems = lines.flatMap(({ line, words }) => {
      const problem = commandProblem(program, words);
      return problem ? [`README.md:${line}: troupe ${words.join(' ')}: ${problem}`] : [];
    });
    expect(problems).toEqual([]);
  });

  it('and its npm scripts are scripts of package.json', () => {
    const { scripts } = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')) as { scripts: Record<string, string> };
    const named = [...readme.matchAll(/\bnpm (?:run ([\w:-]+)|(start|test))\b/g)].map((match) => match[1] ?? match[2]!);
    expect(named.length).toBeGreaterThanOrEqual(5);
    expect(named.filter((script) => !(script in scripts))).toEqual([]);
  });

  it('list, for run and sessions resume, options both have', () => {
    const lines = readme.split('\n');
    const start = lines.findIndex((line) => line.startsWith('`troupe run` and `troupe sessions resume` take:'));
    expect(start).toBeGreaterThan(0);
    const table = lines.slice(start + 1).findIndex((line) => line.startsWith('|'));
    const end = lines.slice(start + 1 + table).findIndex((line) => !line.startsWith('|'));
    const rows = lines.slice(start + 1 + table, start + 1 + table + end);
    const options = rows.map((row) => /^\| `(--[a-z-]+)/.exec(row)?.[1]).filter((flag) => flag !== undefined);
    expect(options.length).toBeGreaterThanOrEqual(10);
    const problems = options.flatMap((flag) =>
      [['run'], ['sessions', 'resume']].flatMap((words) => {
        const problem = commandProblem(program, [...words, flag]);
        return problem ? [`troupe ${words.join(' ')} ${flag}: ${problem}`] : [];
      }),
    );
    expect(problems).toEqual([]);
  });
});

describe("README.md's agent files", () => {
  const files = [...readme.matchAll(/^```markdown\n(---\n[\s\S]*?)^```$/gm)].map((match) => ({
    line: readme.slice(0, match.index).split('\n').length,
    text: match[1]!,
  }));

  it('are found', () => {
    expect(files.length).toBeGreaterThanOrEqual(3);
  });

  it.each(files.map((file) => [file.line, file] as const))('the agent file at README.md:%i loads', (_, file) => {
    const name = /^name: *(\S+)/m.exec(file.text)?.[1] ?? 'unnamed';
    expect(() => parseAgentFile(`${name}.md`, file.text)).not.toThrow();
  });
});
