// watchRun: the command's way to show a run and end it, driven directly with an output of its own.
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
