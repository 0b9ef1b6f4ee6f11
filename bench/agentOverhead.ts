// Agent overhead: N agents, one model turn each on a zero-latency ScriptedModel, no tools, through runtime.run;
// against Promise.all over N async functions and raw XState (N children spawned in one assign, each invoking one
// fromPromise), measured in the same run.
import { createRuntime, defineAgent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { promiseAll, rawXState } from './baselines.js';
import { heapAfterGc, inRounds, medianRound, report, timed } from './measure.js';

const worker = defineAgent({ name: 'worker', description: 'Answers at once.', systemPrompt: 'Answer.' });

/** Runs N agents to completion on a fresh runtime; returns the wall ms (with the runtime shut down after). */
export async function runAgents(n: number, afterRun?: () => Promise<void>): Promise<number> {
  const model = new ScriptedModel(() => 'ok', { record: false });
  const runtime = createRuntime({ model, agents: [worker], maxParallel: n, projectAgentDir: false });
  let completed = 0;
  const ms = await timed(() =>
    Promise.all(
      Array.from({ length: n }, (_, index) =>
        runtime.run('worker', `task ${index}`).then((result) => {
          if (result.status === 'completed') completed += 1;
        }),
      ),
    ),
  );
  if (completed !== n) throw new Error(`Only ${completed} of ${n} agents completed.`);
  await afterRun?.();
  await runtime.shutdown();
  return ms;
}

/** The heap a runtime keeps per finished agent (records, metrics, results, sessions), measured after full GCs. */
export async function retainedPerAgent(n: number): Promise<number> {
  let before = 0;
  let after = 0;
  await runAgents(n, async () => {
    after = await heapAfterGc();
  });
  // The same runtime, empty: what it costs before any agent, so its fixed cost is not spread over the agents.
  const model = new ScriptedModel(() => 'ok', { record: false });
  const empty = createRuntime({ model, agents: [worker], maxParallel: n, projectAgentDir: false });
  before = await heapAfterGc();
  await empty.shutdown();
  return (after - before) / n;
}

export async function agentOverhead(sizes: readonly number[]): Promise<void> {
  // Warm both sides up so that neither pays for the JIT in what is measured (troupe's longer code path takes some
  // ten runs to settle).
  const warm = Math.min(1_000, sizes[0] ?? 1_000);
  for (let round = 0; round < 10; round++) {
    await runAgents(warm);
    await rawXState(warm);
    await promiseAll(warm);
  }
  const perAgent: number[] = [];
  const rawPerAgent: number[] = [];
  for (const n of sizes) {
    const runs = n >= 100_000 ? 1 : n >= 10_000 ? 5 : 9;
    const rounds = await inRounds(runs, { troupe: () => runAgents(n), promises: () => promiseAll(n), xstate: () => rawXState(n) });
    const { a: troupe, b: xstate, ratio } = medianRound(rounds, 'troupe', 'xstate');
    const toPromises = medianRound(rounds, 'troupe', 'promises');
    const us = (troupe * 1000) / n;
    perAgent.push(us);
    rawPerAgent.push((xstate * 1000) / n);
    report({
      bench: 'agent-overhead',
      name: `µs per agent, N=${n}`,
      value: us,
      unit: 'µs',
      baseline: 'raw XState (children spawned in one assign, one fromPromise each)',
      baselineValue: (xstate * 1000) / n,
      ratio,
      target: 'at most 1.5× raw XState',
      pass: ratio <= 1.5,
      detail: { promiseAllUs: round3((toPromises.b * 1000) / n), ratioToPromiseAll: round3(toPromises.ratio) },
    });
    const retained = await retainedPerAgent(n);
    report({
      bench: 'agent-overhead',
      name: `retained heap per finished agent, N=${n}`,
      value: retained,
      unit: 'bytes',
      target: 'under 2 KB (records and metrics may stay; actors may not)',
      pass: retained < 2048,
    });
  }
  if (perAgent.length > 1) {
    const growth = perAgent[perAgent.length - 1]! / perAgent[0]!;
    report({
      bench: 'agent-overhead',
      name: `growth of µs per agent, N=${sizes[0]} → N=${sizes[sizes.length - 1]}`,
      value: perAgent[perAgent.length - 1]!,
      unit: 'µs',
      baseline: `µs per agent at N=${sizes[0]}`,
      baselineValue: perAgent[0]!,
      ratio: growth,
      target: 'at most 1.5× (linear)',
      pass: growth <= 1.5,
      // The same sizes' growth in raw XState, measured beside it: how much of the growth is the machine's.
      detail: { rawXStateGrowth: Number((rawPerAgent[rawPerAgent.length - 1]! / rawPerAgent[0]!).toFixed(2)) },
    });
  }
}

function round3(value: number): number {
  return Number(value.toFixed(3));
}
