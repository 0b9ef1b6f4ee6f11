// Delegation tree: a lead delegating to 10 agents that each delegate to 10 that each delegate to 10 (1,111 agents),
// against the same number of agents run flat, in µs per agent. A third run splits the tree's cost: its 111 leads and
// 1,000 leaves run flat, each lead's turn of 10 calls going to a tool that answers at once. What the tree costs above
// it is delegation's own (a sub-agent launched, awaited and reported back); what it costs above flat is the leads' own
// work, a second turn and ten tool calls each, which no delegation path can save.
import { z } from 'zod';
import { createRuntime, defineAgent, defineTool, type ModelRequest } from 'troupe';
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

/** A tool that takes assign_task's arguments and answers at once: a lead's calls without the sub-agents. */
const noDelegation = defineTool({
  name: 'no_delegation',
  description: 'Takes a task and answers at once.',
  kind: 'read',
  parameters: z.object({ description: z.string(), agent: z.string(), task: z.string() }),
  execute: () => 'done',
});
const soloLeads = levels.slice(0, -1).map((name, depth) =>
  defineAgent({ name: `solo-${name}`, description: `Level ${depth}, alone.`, systemPrompt: `You are at level ${depth}.`, tools: ['no_delegation'] }),
);

/** Non-leaves delegate FAN_OUT tasks in one turn (solo leads call the no-op tool), then answer; leaves answer at once. */
function reply(request: ModelRequest) {
  const solo = request.agentName.startsWith('solo-');
  const level = levels.indexOf(request.agentName.replace('solo-', '') as (typeof levels)[number]);
  const answered = request.messages.some((message) => message.role === 'tool');
  if (level === levels.length - 1 || answered) return 'done';
  return {
    content: '',
    toolCalls: Array.from({ length: FAN_OUT }, (_, index) => ({
      id: `d${index}`,
      name: solo ? 'no_delegation' : 'assign_task',
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

/** The tree's leads (each with its turn of FAN_OUT calls to the no-op tool) and leaves, all run flat at once. */
export async function leadsFlat(): Promise<void> {
  const runtime = createRuntime({
    model: new ScriptedModel(reply, { record: false }),
    agents: [...agents, ...soloLeads],
    tools: [noDelegation],
    maxParallel: TREE_SIZE,
    maxToolConcurrency: FAN_OUT,
  });
  const runs = levels.flatMap((name, depth) => Array.from({ length: FAN_OUT ** depth }, () => (depth === levels.length - 1 ? name : `solo-${name}`)));
  const results = await Promise.all(runs.map((name, index) => runtime.run(name, `task ${index}`)));
  if (results.some((result) => result.status !== 'completed')) throw new Error('A lead or leaf run flat did not complete.');
  await runtime.shutdown();
}

export async function delegationTree(): Promise<void> {
  // Warm both paths up first: measured cold, the tree's first runs compile the delegation path (assign_task, the
  // delegator, results back to the lead) and read 1.9-2.0× flat, against 1.4-1.5× once warm.
  for (let round = 0; round < 4; round++) {
    await tree();
    await flat();
    await leadsFlat();
  }
  const rounds = await inRounds(9, { tree, flat, leadsFlat });
  const { a: treeMs, b: flatMs, ratio } = medianRound(rounds, 'tree', 'flat');
  const leads = medianRound(rounds, 'leadsFlat', 'flat');
  const delegation = medianRound(rounds, 'tree', 'leadsFlat');
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
      // Delegation's own cost per sub-agent: the tree over its leads and leaves run flat, in the round of the median.
      delegationUsPerSubAgent: Number((((delegation.a - delegation.b) * 1000) / (TREE_SIZE - 1)).toFixed(1)),
    },
  });
  report({
    bench: 'delegation-tree',
    name: `µs per agent, the tree's ${TREE_SIZE - FAN_OUT ** 3} leads (10 no-op tool calls each) and ${FAN_OUT ** 3} leaves run flat`,
    value: (leads.a * 1000) / TREE_SIZE,
    unit: 'µs',
    baseline: `${TREE_SIZE} agents run flat`,
    baselineValue: (leads.b * 1000) / TREE_SIZE,
    ratio: leads.ratio,
    detail: { note: "the tree's floor: its leads' own turns and tool calls, with delegation free" },
  });
}
