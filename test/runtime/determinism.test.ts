// seeded simulated runs repeat exactly, with patterns, delegation, topics and request/reply.
import { describe, expect, it } from 'vitest';
import { createRuntime, race, sequence, step, type ModelRequest } from 'troupe';
import { ScriptedModel, assignCall, callTools, toolCall } from 'troupe/testing';
import { leader, resident, simulatedClock, worker } from '../stubs.js';

async function scenario(seed: number): Promise<string[]> {
  const clock = simulatedClock();
  const model = new ScriptedModel(
    (request: ModelRequest) => {
      const turn = request.messages.filter((m) => m.role === 'assistant').length;
      const r = request.random!();
      if (request.agentName === 'lead') return turn === 0 ? callTools(assignCall('helper', `help ${r.toFixed(3)}`)) : 'lead done';
      if (request.agentName === 'echo') {
        const last = request.messages.at(-1)!;
        return last.role === 'user' && last.content.startsWith('[message') && turn > 0
          ? callTools(toolCall('reply', { content: `echo ${r.toFixed(3)}` }, `r${turn}`), toolCall('publish', { topic: 'news', content: 'n' }, `p${turn}`))
          : `ready ${turn}`;
      }
      return `${request.agentName} ${r.toFixed(3)}`;
    },
    { latencyMs: (request) => Math.floor(request.random!() * 1000) + 1 },
  );
  const runtime = createRuntime({
    model,
    agents: [leader('lead'), worker('helper'), worker('a'), worker('b'), resident('echo', ['reply', 'publish']), resident('listener', [], { subscribe: ['news'] })],
    clock,
    seed,
    projectAgentDir: false,
  });
  const lines: string[] = [];
  runtime.events$.subscribe((event) => lines.push(JSON.stringify(event)));
  runtime.spawn('listener', 'Listen.');
  const echo = runtime.spawn('echo', 'Echo.');
  void runtime.run('lead', 'Lead.');
  void race([step('a', 'A.'), sequence([step('b', 'B.'), step('a', 'A again.')])]).run(runtime, 'go');
  void runtime.request(echo.id, 'ping', { timeoutMs: 50_000 }).catch(() => {});
  await runtime.runUntilIdle();
  await runtime.shutdown();
  return lines;
}

describe('determinism', () => {
  it('two runs with the same seed give the same events', async () => {
    const first = await scenario(7);
    const second = await scenario(7);
    expect(first.length).toBeGreaterThan(30);
    expect(second).toEqual(first);
  });
});
