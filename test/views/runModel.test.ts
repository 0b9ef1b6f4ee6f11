// The web inspector's model of a run, folded from the events of a real (scripted) run: the tree, each agent's state in
// its machine, its conversation, the messages, and the figures over time.
import { describe, expect, it } from 'vitest';
import { createRuntime, type TroupeEvent } from 'troupe';
import { RunModel } from '../../src/views/RunModel.js';
import { collect, simulatedClock } from '../stubs.js';
import { teamAgents, teamModel } from '../support/team.js';

async function teamEvents(): Promise<TroupeEvent[]> {
  const runtime = createRuntime({ agents: teamAgents, model: teamModel({ latencyMs: 100 }), clock: simulatedClock(), seed: 3 });
  const events = collect(runtime.events$);
  const handle = runtime.spawn('lead', 'Compare apples and pears.');
  await runtime.runUntilIdle();
  expect((await handle.result).status).toBe('completed');
  await runtime.shutdown();
  return events;
}

function fold(events: readonly TroupeEvent[], upTo = events.length): RunModel {
  const model = new RunModel();
  for (const event of events.slice(0, upTo)) model.apply(event);
  return model;
}

describe('RunModel', () => {
  it('folds a run into its tree, each agent ending in its final state, with its conversation and the messages', async () => {
    const events = await teamEvents();
    const model = fold(events);
    expect(model.count).toBe(events.length);
    const [lead] = model.tree.roots;
    expect(lead?.name).toBe('lead');
    expect(lead?.children.map((child) => child.label)).toEqual(['worker', 'worker#2']);
    for (const node of [lead!, ...lead!.children]) expect(model.stateOf(node.id)).toBe('completed');

    const worker = lead!.children[0]!;
    const conversation = model.entriesOf(worker.id).map((index) => events[index]!.type);
    expect(conversation[0]).toBe('agent.spawned');
    expect(conversation).toContain('tool.result');
    expect(conversation.at(-1)).toBe('agent.completed');
    const result = model.entriesOf(worker.id).map((index) => events[index]!).find((event) => event.type === 'tool.result' && event.tool === 'lookup');
    expect(result).toMatchObject({ status: 'ok', content: 'Notes on fruit: ripe in autumn.' });

    expect(model.messages).toHaveLength(2);
    const delivered = model.entriesOf(lead!.id).map((index) => events[index]!).find((event) => event.type === 'message.delivered');
    expect(delivered?.type === 'message.delivered' && model.sentIndex(delivered.messageId)).toBe(model.messages[0]);
    expect(model.series.messages.at(-1)).toBe(2);
    expect(model.series.tokens.at(-1)).toBe(model.tree.totals.tokens);
    expect(model.series.running.at(-1)).toBe(0);
  });

  it('shows each agent where it was at any moment: the lead waits on its workers while they run', async () => {
    const events = await teamEvents();
    const firstWorkerTool = events.findIndex((event) => event.type === 'tool.call' && event.tool === 'lookup');
    const model = fold(events, firstWorkerTool + 1);
    const lead = model.tree.roots[0]!;
    expect(model.stateOf(lead.id)).toBe('running.acting.waitingForAgents');
    expect(model.stateOf(lead.children[0]!.id)).toBe('running.acting.working');
    expect(model.stateOf(lead.children[1]!.id)).toMatch(/^running\./);
    const lastWorkerEnd = events.findLastIndex((event) => event.type === 'agent.completed' && event.agentId !== lead.id);
    expect(fold(events, lastWorkerEnd + 1).stateOf(lead.id)).toBe('running.acting.working');
    expect(fold(events, 1).stateOf(lead.id)).toBe('pending.queued');
  });

  it('keeps at most 600 points a series however long the run, the last one exact', () => {
    const model = new RunModel();
    const header = { runId: 'r', parentId: null, toolCallId: null };
    model.apply({ type: 'agent.spawned', ...header, agentId: 'agent:a:1', at: 0, name: 'a', depth: 0, task: 't' });
    for (let turn = 1; turn <= 5_000; turn += 1) {
      model.apply({
        type: 'model.response',
        ...header,
        agentId: 'agent:a:1',
        at: turn * 7,
        turn,
        model: 'm',
        usage: { inputTokens: 2, outputTokens: 1 },
        costUsd: 0.001,
        durationMs: 1,
        toolCalls: 0,
      });
    }
    const { series } = model;
    expect(series.t.length).toBeLessThanOrEqual(600);
    expect(series.t.length).toBeGreaterThan(100);
    for (const list of [series.running, series.tokens, series.costUsd, series.messages]) expect(list).toHaveLength(series.t.length);
    expect(series.t.at(-1)).toBe(35_000);
    expect(series.tokens.at(-1)).toBe(15_000);
    // 5,000 × $0.001, summed on the metrics' grid (a plain sum drifts to 5.000000000000004).
    expect(series.costUsd.at(-1)).toBe(5);
    expect(model.tree.totals.costUsd).toBe(5);
    expect([...series.t].sort((a, b) => a - b)).toEqual(series.t);
  });
});
