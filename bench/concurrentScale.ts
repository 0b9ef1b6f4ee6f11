// Concurrent scale: N agents alive at once in simulated time, each taking 3 model turns of 1 simulated second
// (a tool call between turns), maxParallel N: peak heap, heap per live agent, wall time, and the simulated makespan
// against the ideal of 3 s.
import { z } from 'zod';
import { SimulatedClock } from 'xstate';
import { createRuntime, defineAgent, defineTool } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { nextTimerAt, settleMicrotasks } from 'troupe/testing';
import { heapAfterGc, report, timed } from './measure.js';

const noop = defineTool({
  name: 'noop',
  description: 'Does nothing.',
  parameters: z.object({}),
  kind: 'read',
  execute: () => 'nothing',
});
const thinker = defineAgent({ name: 'thinker', description: 'Thinks three times.', systemPrompt: 'Think.', tools: [noop] });
const TURNS = 3;
const TURN_MS = 1_000;

export async function concurrentScale(n: number): Promise<void> {
  const before = await heapAfterGc();
  const clock = new SimulatedClock();
  const model = new ScriptedModel(
    (request) => {
      const toolAnswers = request.messages.filter((message) => message.role === 'tool').length;
      return toolAnswers < TURNS - 1 ? { content: '', toolCalls: [{ id: `t${toolAnswers}`, name: 'noop', arguments: '{}' }] } : 'done';
    },
    { latencyMs: TURN_MS, record: false },
  );
  const runtime = createRuntime({ model, agents: [thinker], tools: [noop], clock, maxParallel: n, idleTimeoutMs: 60_000 });
  let completed = 0;
  let live = 0;
  let peak = 0;
  const wall = await timed(async () => {
    const all = Promise.all(
      Array.from({ length: n }, (_, index) =>
        runtime.run('thinker', `task ${index}`).then((result) => {
          if (result.status === 'completed') completed += 1;
        }),
      ),
    );
    let settled = false;
    void all.then(() => (settled = true));
    for (let step = 0; !settled; step++) {
      await settleMicrotasks();
      await settleMicrotasks();
      if (step === 0) live = await heapAfterGc() - before; // every agent is alive, waiting for its first reply
      peak = Math.max(peak, process.memoryUsage().heapUsed - before);
      if (settled) break;
      const next = nextTimerAt(clock);
      if (next === undefined) throw new Error('The run stalled before every agent ended.');
      clock.set(next);
    }
  });
  if (completed !== n) throw new Error(`Only ${completed} of ${n} agents completed.`);
  const makespan = clock.now();
  await runtime.shutdown();
  report({ bench: 'concurrent-scale', name: `wall time, N=${n} live agents × ${TURNS} turns`, value: wall / 1000, unit: 's' });
  report({
    bench: 'concurrent-scale',
    name: `heap per live agent, N=${n}`,
    value: live / n,
    unit: 'bytes',
    target: 'under 20 KB',
    pass: live / n < 20_480,
  });
  report({ bench: 'concurrent-scale', name: `peak heap above the start, N=${n}`, value: peak / 1024 / 1024, unit: 'MiB' });
  report({
    bench: 'concurrent-scale',
    name: `simulated makespan, N=${n}`,
    value: makespan,
    unit: 'ms',
    baseline: `ideal (${TURNS} turns × ${TURN_MS} ms)`,
    baselineValue: TURNS * TURN_MS,
    ratio: makespan / (TURNS * TURN_MS),
    target: 'within 1% of the ideal',
    pass: Math.abs(makespan / (TURNS * TURN_MS) - 1) <= 0.01,
  });
}
