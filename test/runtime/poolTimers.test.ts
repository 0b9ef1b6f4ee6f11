// an idle pooled agent must not keep the process alive (AgentPool unrefs its timer).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { describe, expect, it } from 'vitest';

describe('pool timers', () => {
  it('a process whose persist agent went back to the pool exits without shutdown()', () => {
    const src = resolve('src');
    const dir = mkdtempSync(join(tmpdir(), 'troupe-pool-'));
    const script = join(dir, 'pool.mts');
    writeFileSync(
      script,
      `import { createRuntime, defineAgent } from ${JSON.stringify(join(src, 'index.ts'))};
import { ScriptedModel } from ${JSON.stringify(join(src, 'testing.ts'))};
const keeper = defineAgent({ name: 'keeper', description: 'Keeps.', systemPrompt: 'Keep.', persist: true });
const runtime = createRuntime({ model: new ScriptedModel(['kept']), agents: [keeper], projectAgentDir: false });
const result = await runtime.run('keeper', 'Keep.');
console.log(result.status, runtime.poolStats().idle);
`,
    );
    const started = Date.now();
    const run = spawnSync(process.execPath, ['--import', 'tsx', script], { encoding: 'utf8', timeout: 8_000 });
    expect(run.stdout.trim()).toBe('completed 1');
    // Before the runtime clock wrapped the pool's clock, the idle timer was unref'd and the process ended at once.
    expect(run.signal).toBeNull();
    expect(Date.now() - started).toBeLessThan(8_000);
  }, 15_000);
});
