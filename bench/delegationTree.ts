// Delegation tree: a lead delegating to 10 agents that each delegate to 10 that each delegate to 10 (1,111 agents),
// against the same number of agents run flat, in µs per agent.
import { createRuntime, defineAgent, type ModelRequest } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { inRounds, medianIn, medianRound, report } from './measure.js';

const FAN_OUT = 10;
const levels = ['lead', 'manager', 'team', 'leaf'] as const;
const agents = levels.map((name, depth) =>
  defineAgent({
    name,
    description: `Level ${depth} of the tree.`,
    systemPrompt: `You are at level ${depth}.`,
    ...(depth < levels.length - 1 ? { tools: ['assign_task'], subagents: [levels[depth + 1]!] } : {}),
  }),
);

/** Non-leaves delegate FAN_OUT tasks in one turn, then answer; leaves answer at once. */
function reply(request: ModelRequest) {
  const level = levels.indexOf(request.agentName as (typeof levels)[number]);
  const answered = request.messages.some((message) => message.role === 'tool');
  if (level === levels.length - 1 || answered) return 'done';
  return {
    content: '',
    toolCalls: Array.from({ length: FAN_OUT }, (_, index) => ({
      id: `d${index}`,
      name: 'assign_task',
      arguments: JSON.stringify({ description: 'part of the work', agent: levels[level + 1], task: `part ${index}` }),
    })),
  };
}

const TREE_SIZE = 1 + FAN_OUT + FAN_OUT ** 2 + FAN_OUT ** 3;

export async function tree(): Promise<void> {
  const runtime = createRuntime({ model: new ScriptedModel(reply, { record: false }), agents, maxParallel: TREE_SIZE, maxToolConcurrency: FAN_OUT, maxAgents: TREE_SIZE });
  const result = await runtime.run('lead', 'Do everything.');
  if (result.status !== 'completed' || runtime.metrics().total.agentsCompleted !== TREE_SIZE) {
    throw new Error(`The tree did not complete: ${result.error?.message ?? runtime.metrics().total.agentsCompleted}`);
  }
  await runtime.shutdown();
}

export async function flat(): Promise<void> {
  const runtime = createRuntime({ model: new ScriptedModel(reply, { record: false }), agents, maxParallel: TREE_SIZE });
  await Promise.all(Array.from({ length: TREE_SIZE }, (_, index) => runtime.run('leaf', `task ${index}`)));
  await runtime.shutdown();
}

export async function delegationTree(): Promise<void> {
  // Warm both paths up first: measured cold, the tree's first runs compile the delegation path (assign_task, the
  // delegator, results back to the lead) and read 1.9-2.0× flat, against 1.4-1.5× once warm.
  for (let round = 0; round < 4; round++) {
    await tree();
    await flat();
  }
  const rounds = await inRounds(9, { tree, flat });
  const { a: treeMs, b: flatMs, ratio } = medianRound(rounds, 'tree', 'flat');
  report({
    bench: 'delegation-tree',
    name: `µs per agent, tree of ${TREE_SIZE} (10 × 10 × 10)`,
    value: (treeMs * 1000) / TREE_SIZE,
    unit: 'µs',
    baseline: `${TREE_SIZE} agents run flat`,
    baselineValue: (flatMs * 1000) / TREE_SIZE,
    ratio,
    detail: {
      treeKB: Number((medianIn(rounds, (round) => round.tree.bytes) / 1024 / TREE_SIZE).toFixed(1)),
      flatKB: Number((medianIn(rounds, (round) => round.flat.bytes) / 1024 / TREE_SIZE).toFixed(1)),
    },
  });
}
