import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ConfigurationError, createRuntime, defineAgent, defineTool, InvalidAgentError, InvalidToolError, type RuntimeOptions } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { describeUnknownKeys, unknownKeys } from '../src/unknownKeys.js';
import { worker } from './stubs.js';

// Options given from JavaScript, a scenario or a config file reach the runtime without the compiler's check.
const loose = <T>(value: Record<string, unknown>) => value as T;

describe('misspelled options and fields', () => {
  it('names each unknown key with the known one it most likely meant, and none when nothing is close', () => {
    const known = ['maxParallel', 'maxTurns', 'maxDepth', 'resident'];
    expect(unknownKeys({ maxParalel: 3, maxTurns: 2, MAXDEPTH: 1, colour: 'red', x: 1 }, known)).toEqual([
      { key: 'maxParalel', meant: 'maxParallel' },
      { key: 'MAXDEPTH', meant: 'maxDepth' },
      { key: 'colour' },
      { key: 'x' },
    ]);
    expect(unknownKeys({ maxTurns: 2 }, known)).toEqual([]);
    expect(describeUnknownKeys([{ key: 'maxParalel', meant: 'maxParallel' }, { key: 'colour' }], 'option')).toBe(
      'unknown option "maxParalel" (did you mean "maxParallel"?); unknown option "colour"',
    );
  });

  it('refuses a misspelled createRuntime option instead of running on its default', () => {
    const options = loose<RuntimeOptions>({ model: new ScriptedModel(['ok']), agents: [worker()], maxParalel: 1 });
    expect(() => createRuntime(options)).toThrow(ConfigurationError);
    expect(() => createRuntime(options)).toThrow('createRuntime: unknown option "maxParalel" (did you mean "maxParallel"?).');
  });

  it('refuses a misspelled spawn, run or resume option, and takes the right ones', async () => {
    const runtime = createRuntime({ model: new ScriptedModel(() => 'ok'), agents: [worker()] });
    try {
      expect(() => runtime.spawn('worker', 'Work.', loose({ maxTurn: 2 }))).toThrow('spawn: unknown option "maxTurn" (did you mean "maxTurns"?).');
      await expect(runtime.run('worker', 'Work.', loose({ Resident: true }))).rejects.toThrow(ConfigurationError);
      await expect(runtime.resume('agent:worker:x', 'Again.', loose({ histroy: [] }))).rejects.toThrow('resume: unknown option "histroy"');
      // Nothing was started by the refused calls; the right option runs.
      expect(runtime.metrics().total.agentsSpawned).toBe(0);
      const result = await runtime.run('worker', 'Work.', { maxTurns: 2 });
      expect(result.status).toBe('completed');
    } finally {
      await runtime.shutdown();
    }
  });

  it('refuses a misspelled agent field with InvalidAgentError', () => {
    const definition = { name: 'writer', description: 'Writes.', systemPrompt: 'Write.', maxTurn: 3 };
    expect(() => defineAgent(definition as never)).toThrow(InvalidAgentError);
    expect(() => defineAgent(definition as never)).toThrow('Agent "writer": unknown field "maxTurn" (did you mean "maxTurns"?)');
    // A defined agent is a definition too: it can be defined again, or given to createRuntime as it is.
    const agent = defineAgent({ name: 'writer', description: 'Writes.', systemPrompt: 'Write.', maxTurns: 3 });
    expect(defineAgent({ ...agent, name: 'editor' }).maxTurns).toBe(3);
  });

  it('refuses a misspelled tool field with InvalidToolError, and defines a tool again from a copy of another', async () => {
    const definition = {
      name: 'slow',
      description: 'Takes its time.',
      parameters: z.object({}),
      kind: 'read',
      timeoutMS: 100,
      execute: () => 'done',
    };
    expect(() => defineTool(definition as never)).toThrow(InvalidToolError);
    expect(() => defineTool(definition as never)).toThrow('Tool "slow": unknown field "timeoutMS" (did you mean "timeoutMs"?)');
    const tool = defineTool({ name: 'slow', description: 'Takes its time.', parameters: z.object({}), kind: 'read', timeoutMs: 100, execute: () => 'done' });
    const copy = defineTool({ ...tool, name: 'slower' });
    expect(copy.schema.name).toBe('slower');
    expect(copy.timeoutMs).toBe(100);
  });
});
