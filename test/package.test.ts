// The package as a user gets it: `npm pack` (which builds dist/ through prepack), the tarball installed in an empty
// folder outside the source tree, then a plain ESM script, a strict TypeScript consumer and the `troupe` binary.
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const exec = promisify(execFile);
const root = fileURLToPath(new URL('..', import.meta.url));
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const tsc = join(root, 'node_modules', '.bin', 'tsc');

let scratch: string;
let consumer: string;
let tarball: string;

beforeAll(async () => {
  // What an earlier build left (a declaration map, the output of a source since removed): the build starts afresh.
  mkdirSync(join(root, 'dist'), { recursive: true });
  writeFileSync(join(root, 'dist', 'removed.d.ts.map'), '{}');
  scratch = mkdtempSync(join(tmpdir(), 'troupe-pack-'));
  consumer = join(scratch, 'consumer');
  await exec(npm, ['pack', '--pack-destination', scratch, '--silent'], { cwd: root, timeout: 240_000 });
  tarball = join(scratch, readdirSync(scratch).find((file) => file.endsWith('.tgz'))!);
  await exec('mkdir', ['-p', consumer]);
  writeFileSync(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
  // From the npm cache where it can (npm ci filled it); @types/node as any Node project in TypeScript has it.
  await exec(npm, ['install', '--prefer-offline', '--no-audit', '--no-fund', '--silent', tarball, '@types/node@^20.19.0'], {
    cwd: consumer,
    timeout: 240_000,
  });
}, 480_000);

afterAll(() => {
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the packed package', () => {
  it('ships the build (its maps holding their sources), the README and the licence, and no sources, tests, benches or examples', async () => {
    const { stdout } = await exec('tar', ['-tzf', tarball]);
    const files = stdout.trim().split('\n').map((file) => file.replace(/^package\//, ''));
    expect(files).toEqual(
      expect.arrayContaining(['package.json', 'README.md', 'LICENSE', 'dist/index.js', 'dist/index.d.ts', 'dist/testing.js', 'dist/cli/main.js', 'dist/inspect/web/app.js', 'dist/inspect/web/app.css']),
    );
    expect(files.filter((file) => !file.startsWith('dist/') && !['package.json', 'README.md', 'LICENSE'].includes(file))).toEqual([]);
    expect(files.some((file) => file.endsWith('.js.map'))).toBe(true);
    // The sources are not shipped, so a map carries its source's text (a debugger or --enable-source-maps shows the
    // TypeScript), and no declaration map points at a .ts file that is not there.
    expect(files.filter((file) => file.endsWith('.d.ts.map'))).toEqual([]);
    const map = JSON.parse((await exec('tar', ['-xzOf', tarball, 'package/dist/index.js.map'])).stdout) as { sources: string[]; sourcesContent?: string[] };
    expect(map.sourcesContent?.[0]).toContain('export { createRuntime }');
    expect(map.sources).toEqual(['../src/index.ts']);
  });

  it('runs a scripted two-agent delegation from a plain .mjs file importing troupe and troupe/testing', async () => {
    writeFileSync(
      join(consumer, 'delegate.mjs'),
      `import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel, assignCall, callTools } from 'troupe/testing';
const lead = defineAgent({ name: 'lead', description: 'Leads.', systemPrompt: 'Lead.', tools: ['assign_task'] });
const helper = defineAgent({ name: 'helper', description: 'Helps.', systemPrompt: 'Help.' });
const model = ScriptedModel.perAgent({ lead: [callTools(assignCall('helper', 'Add 2 and 2.')), 'The helper says 4.'], helper: ['4'] });
const runtime = createRuntime({ model, agents: [lead, helper], projectAgentDir: false });
const result = await runtime.run('lead', 'What is 2 + 2?');
await runtime.shutdown();
model.assertDone();
console.log(JSON.stringify({ status: result.status, output: result.output, agents: runtime.metrics().total.agentsCompleted }));
`,
    );
    const { stdout } = await exec(process.execPath, ['delegate.mjs'], { cwd: consumer });
    expect(JSON.parse(stdout)).toEqual({ status: 'completed', output: 'The helper says 4.', agents: 2 });
  });

  // tsc over the consumer and the shipped .d.ts: seconds alone, more beside the suite's other files on two cores.
  it('type-checks a strict TypeScript consumer (nodenext) against the shipped .d.ts, and refuses a wrong use', async () => {
    writeFileSync(
      join(consumer, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: ['node'] } }),
    );
    writeFileSync(
      join(consumer, 'consumer.ts'),
      `import { createRuntime, defineAgent, type AgentResult, type ErrorInfo } from 'troupe';
import { ScriptedModel, textReply } from 'troupe/testing';
const agent = defineAgent({ name: 'solo', description: 'Alone.', systemPrompt: 'Answer.' });
const runtime = createRuntime({ model: new ScriptedModel([textReply('hi')]), agents: [agent] });
const result: AgentResult = await runtime.run('solo', 'Say hi.');
const code: ErrorInfo['code'] | undefined = result.error?.code;
export { code };
`,
    );
    await exec(tsc, ['-p', '.'], { cwd: consumer });
    writeFileSync(join(consumer, 'wrong.ts'), `import { createRuntime } from 'troupe';\ncreateRuntime({ maxParallel: 'many' });\n`);
    const wrong = await exec(tsc, ['-p', '.'], { cwd: consumer }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    rmSync(join(consumer, 'wrong.ts'));
    expect(wrong).toMatch(/wrong\.ts.*maxParallel|wrong\.ts\(2/);
  }, 90_000);

  // TypeScript 6 and later read no @types package unless `types` names it, and `tsc --init` writes `"types": []`: a
  // project that installed @types/node, as the README asks, must not also have to list it for troupe's own .d.ts.
  it('type-checks a consumer whose tsconfig lists no types (tsc --init writes "types": []), with @types/node installed', async () => {
    const strictTypes = join(consumer, 'no-types');
    mkdirSync(strictTypes, { recursive: true });
    writeFileSync(
      join(strictTypes, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { module: 'nodenext', moduleResolution: 'nodenext', target: 'es2022', strict: true, noEmit: true, types: [] } }),
    );
    writeFileSync(
      join(strictTypes, 'consumer.ts'),
      `import { createRuntime, defineAgent, Redactor } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
const agent = defineAgent({ name: 'solo', description: 'Alone.', systemPrompt: 'Answer.' });
const runtime = createRuntime({ model: new ScriptedModel(['hi']), agents: [agent] });
export const shown: string = new Redactor({ secrets: [] }).redactText('text');
export { runtime };
`,
    );
    const errors = await exec(tsc, ['-p', '.'], { cwd: strictTypes }).then(
      () => '',
      (error: { stdout: string }) => error.stdout,
    );
    expect(errors).toBe('');
  }, 90_000);

  it("serves the web inspector's page from the bundle the build made (the page's sources are not shipped)", async () => {
    writeFileSync(
      join(consumer, 'ui.mjs'),
      `import { createWebInspector } from 'troupe';
const inspector = createWebInspector();
const url = await inspector.url;
const sizes = {};
for (const asset of ['app.js', 'app.css']) sizes[asset] = (await (await fetch(url + 'assets/' + asset)).text()).length;
await inspector.close();
console.log(JSON.stringify(sizes));
`,
    );
    const { stdout } = await exec(process.execPath, ['ui.mjs'], { cwd: consumer });
    const sizes = JSON.parse(stdout) as Record<string, number>;
    expect(sizes['app.js']).toBeGreaterThan(100_000);
    expect(sizes['app.css']).toBeGreaterThan(1_000);
  });

  it('installs the troupe command, which answers --help', async () => {
    const { stdout } = await exec(join(consumer, 'node_modules', '.bin', 'troupe'), ['--help'], { cwd: consumer });
    expect(stdout).toMatch(/Usage: troupe/);
    expect(stdout).toMatch(/\brun\b/);
  });

  it('runs a .ts scenario, and says what to do with one in a CommonJS package (what npm init makes)', async () => {
    const scenario = `import { defineAgent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
const echo = defineAgent({ name: 'echo', description: 'Answers.', systemPrompt: 'Answer.' });
export default { agents: [echo], model: new ScriptedModel(['answer']), run: (runtime: any) => runtime.run('echo', 'Answer.') };
`;
    const commonJs = join(consumer, 'cjs');
    await exec('mkdir', ['-p', commonJs]);
    writeFileSync(join(commonJs, 'package.json'), JSON.stringify({ type: 'commonjs' }));
    writeFileSync(join(commonJs, 'team.ts'), scenario);
    writeFileSync(join(consumer, 'team.ts'), scenario);
    const troupe = join(consumer, 'node_modules', '.bin', 'troupe');

    const ok = await exec(troupe, ['run', 'team.ts', '--quiet', '--store', join(scratch, 'esm.json')], { cwd: consumer });
    expect(ok.stdout).toBe('answer\n');
    const refused = await exec(troupe, ['run', 'cjs/team.ts', '--quiet', '--store', join(scratch, 'cjs.json')], { cwd: consumer }).then(
      () => undefined,
      (error: { code?: number; stderr?: string }) => error,
    );
    expect(refused?.code).toBe(2);
    // Its last line (some Node versions print a warning of their own before it).
    expect(refused?.stderr).toMatch(/(^|\n)troupe: cannot load scenario cjs\/team\.ts: .*name the file \.mts, or set "type": "module" in its package\.json\)\n$/);
  });
});
