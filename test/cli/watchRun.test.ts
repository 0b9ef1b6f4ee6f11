// watchRun: the command's way to show a run and end it, driven directly with an output of its own.
import { stripVTControlCharacters } from 'node:util';
import { describe, expect, it } from 'vitest';
import { createRuntime, InMemoryMemory, type MemoryPort } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { watchRun } from '../../src/cli/watchRun.js';
import { worker } from '../stubs.js';

describe('watchRun', () => {
  it('prints the answer of a completed run before it reports that the sessions could not be written', async () => {
    const inner = new InMemoryMemory();
    const full = () => Promise.reject(new Error('ENOSPC: no space left on device'));
    const store: MemoryPort = {
      get: (key) => inner.get(key),
      keys: (prefix) => inner.keys(prefix),
      append: full,
      delete: full,
      clear: full,
      set: full,
      update: full,
    };
    const runtime = createRuntime({ model: new ScriptedModel(['The answer.']), agents: [worker()], store, projectAgentDir: false });
    let written = '';
    const output = { write: (text: string) => ((written += text), true) };

    await expect(watchRun(runtime, { quiet: true }, () => runtime.run('worker', 'Answer.'), output)).rejects.toThrow('ENOSPC');
    expect(written).toBe('The answer.\n');
  });
});

describe('watchRun on a terminal that reports no size', () => {
  // A pseudo-terminal nobody sized (`script` run without a terminal, some CI runners and containers) says it has 0
  // columns and 0 rows: the live tree is drawn at 80 × 24 there, not cut to nothing.
  it('draws the live tree at 80 columns, not an empty frame', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(['The answer.']), agents: [worker()], projectAgentDir: false });
    let written = '';
    const output = { isTTY: true, columns: 0, rows: 0, write: (text: string) => ((written += text), true) };

    await watchRun(runtime, {}, () => runtime.run('worker', 'Answer the question.'), output);

    const shown = stripVTControlCharacters(written);
    expect(shown).toContain('► worker (Answer the question.)');
    expect(shown).toMatch(/^1 agent • 1 done • 0 calls • /m);
    expect(shown).toMatch(/The answer\.\n$/);
  });
});
