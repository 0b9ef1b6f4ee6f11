// A wide turn's calls start in waves: up to CALLS_STARTED_TOGETHER at once, the rest a microtask apart. With 100
// assign_task calls all 100 sub-agents are under way together; with 1,000 only a little more than one wave is (139),
// and every one of them still runs and answers, in the order asked.
import { describe, expect, it } from 'vitest';
import { createRuntime, defineAgent, type TroupeEvent } from 'troupe';
import { ScriptedModel } from 'troupe/testing';
import { CALLS_STARTED_TOGETHER } from '../../src/tools/executePlan.js';
import { collect, ofType } from '../stubs.js';

const lead = defineAgent({ name: 'lead', description: 'Splits the work.', systemPrompt: 'Split.', tools: ['assign_task'], subagents: ['worker'] });
const worker = defineAgent({ name: 'worker', description: 'Answers at once.', systemPrompt: 'Answer.' });

/** The most sub-agents that had started (`agent.started`) and not yet ended at any one event. */
function mostUnderWay(events: readonly TroupeEvent[]): number {
  const under = new Set<string>();
  let most = 0;
  for (const event of events) {
    if (event.parentId === null) continue; // the lead
    if (event.type === 'agent.started') most = Math.max(most, under.add(event.agentId).size);
    if (event.type === 'agent.completed' || event.type === 'agent.failed') under.delete(event.agentId);
  }
  return most;
}

/** One lead hands `n` tasks to workers in one turn; returns the most sub-agents under way at once. */
async function fanOut(n: number): Promise<number> {
  const model = new ScriptedModel((request) => {
    if (request.agentName === 'worker') return `done: ${request.messages.at(-1)!.content.slice(-9)}`;
    if (request.messages.some((message) => message.role === 'tool')) return 'all done';
    return {
      content: '',
      toolCalls: Array.from({ length: n }, (_, index) => ({ id: `t${index}`, name: 'assign_task', arguments: JSON.stringify({ description: 'part', agent: 'worker', task: `part ${String(index).padStart(4, '0')}` }) })),
    };
  });
  const runtime = createRuntime({ model, agents: [lead, worker], maxParallel: n + 1, maxToolConcurrency: n, maxAgents: n + 1, projectAgentDir: false });
  const events = collect(runtime.events$);
  const result = await runtime.run('lead', 'Split the work.');
  expect(result.status).toBe('completed');
  // Every call started, in the order asked, and every sub-agent's answer came back to its call.
  expect(ofType(events, 'tool.call').map((event) => event.callId)).toEqual(Array.from({ length: n }, (_, index) => `t${index}`));
  const results = ofType(events, 'tool.result');
  expect(results).toHaveLength(n);
  expect(results.every((event) => event.status === 'ok')).toBe(true);
  const lastRequest = model.calls.filter((request) => request.agentName === 'lead').at(-1)!;
  const answers = lastRequest.messages.filter((message) => message.role === 'tool').map((message) => message.content);
  expect(answers.every((answer, index) => answer.startsWith(`done: part ${String(index).padStart(4, '0')}\n`))).toBe(true);
  await runtime.shutdown();
  return mostUnderWay(events);
}

describe('the calls of a wide turn', () => {
  it('start together up to a wave, and past it keep about one wave of sub-agents under way, however many there are', async () => {
    // Started a microtask apart from the first, 16 of 100 were under way at most; started in one loop, 1,000 of 1,000.
    const [hundred, thousand] = [await fanOut(100), await fanOut(1_000)];
    expect(CALLS_STARTED_TOGETHER).toBeGreaterThan(100);
    expect(hundred).toBe(100);
    expect(thousand).toBeGreaterThanOrEqual(CALLS_STARTED_TOGETHER);
    expect(thousand).toBeLessThan(CALLS_STARTED_TOGETHER * 1.5);
  });
});
