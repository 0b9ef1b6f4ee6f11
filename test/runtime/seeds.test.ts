// Seeds: the same seed gives the same run ids and agent ids; seeds that differ, even only above 32 bits, do not; a
// resumed or pooled agent draws anew in each run, the same way for the same seed.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';

const worker = defineAgent({ name: 'worker', description: 'Works.', systemPrompt: 'Work.' });

async function idsOf(seed: number) {
  const runtime = createRuntime({ model: new ScriptedModel((request) => `drew ${request.random!().toFixed(6)}`), agents: [worker], seed, projectAgentDir: false });
  const result = await runtime.run('worker', 'Work.');
  await runtime.shutdown();
  return { runId: runtime.runId, agentId: result.id, output: result.output };
}

describe('seeds', () => {
  it('repeat a run for the same seed, small or large', async () => {
    expect(await idsOf(7)).toEqual(await idsOf(7));
    expect(await idsOf(1_764_000_000_123)).toEqual(await idsOf(1_764_000_000_123));
  });

  it('give other ids and draws for seeds that differ only above their low 32 bits (Date.now() as the seed)', async () => {
    const small = await idsOf(7);
    const large = await idsOf(2 ** 32 + 7);
    expect(large.runId).not.toBe(small.runId);
    expect(large.agentId).not.toBe(small.agentId);
    expect(large.output).not.toBe(small.output);
  });

  it('give a resumed agent, and a pooled one reused, draws of their own in each run, the same for the same seed', async () => {
    const draws = async (seed: number) => {
      const drawing = new ScriptedModel((request) => `drew ${request.random!().toFixed(6)}`);
      const pooled = defineAgent({ name: 'pooled', description: 'Pooled.', systemPrompt: 'Pool.', persist: true });
      const runtime = createRuntime({ model: drawing, agents: [worker, pooled], seed, projectAgentDir: false });
      const first = await runtime.run('worker', 'One.');
      const second = await (await runtime.resume(first.id, 'Two.')).result;
      const third = await (await runtime.resume(first.id, 'Three.')).result;
      const pool = [await runtime.run('pooled', 'One.'), await runtime.run('pooled', 'Two.')];
      await runtime.shutdown();
      expect(pool[1]!.id).toBe(pool[0]!.id);
      return [first, second, third, ...pool].map((result) => result.output);
    };
    const seven = await draws(7);
    expect(new Set(seven.slice(0, 3)).size).toBe(3);
    expect(new Set(seven.slice(3)).size).toBe(2);
    expect(await draws(7)).toEqual(seven);
  });
});
