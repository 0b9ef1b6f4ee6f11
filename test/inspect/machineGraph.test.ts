// The machines the web inspector draws, read from the machines that run.
import { describe, expect, it } from 'vitest';
import { machineGraph } from 'troupe';
import { agentMachine } from '../../src/machines/agentMachine.js';
import { groupMachine } from '../../src/machines/groupMachine.js';

describe('machineGraph', () => {
  it("gives the agent's lifecycle: pending → running (thinking ⇄ acting, waiting) → completed | failed", () => {
    const graph = machineGraph(agentMachine);
    expect(graph.id).toBe('agent');
    const ids = graph.states.map((state) => state.id);
    for (const id of ['agent.pending.queued', 'agent.pending.awaitingApproval', 'agent.running.thinking', 'agent.running.acting.working', 'agent.running.acting.waitingForAgents', 'agent.running.waiting', 'agent.completed', 'agent.failed']) {
      expect(ids).toContain(id);
    }
    // Parents come before their children.
    for (const state of graph.states) if (state.parent !== null) expect(ids.indexOf(state.parent)).toBeLessThan(ids.indexOf(state.id));
    expect(graph.states.find((state) => state.id === 'agent.running')).toMatchObject({ type: 'compound', initial: 'agent.running.thinking' });
    expect(graph.states.find((state) => state.id === 'agent.completed')?.type).toBe('final');
    const between = (source: string, target: string) => graph.transitions.find((transition) => transition.source === source && transition.target === target);
    expect(between('agent.pending.queued', 'agent.running')?.events).toEqual(['START']);
    expect(between('agent.running.thinking', 'agent.running.acting')?.events).toEqual(['MODEL.DONE']);
    expect(between('agent.running.acting', 'agent.running.thinking')?.events).toEqual(['TOOLS.DONE']);
    expect(between('agent.running.waiting', 'agent.running.thinking')?.events).toEqual(['MESSAGE', 'WAKE']);
    // One transition per pair of states, none to its own source.
    const pairs = graph.transitions.map((transition) => `${transition.source}→${transition.target}`);
    expect(new Set(pairs).size).toBe(pairs.length);
    expect(graph.transitions.every((transition) => transition.source !== transition.target)).toBe(true);
    expect(JSON.parse(JSON.stringify(graph))).toEqual(graph);
  });

  it("gives a group's: pending → running → completed | failed", () => {
    const graph = machineGraph(groupMachine);
    expect(graph.states.map((state) => state.key)).toEqual(['group', 'pending', 'running', 'completed', 'failed']);
    expect(graph.transitions.map((transition) => `${transition.source} ${transition.events.join('/')} ${transition.target}`)).toEqual(
      expect.arrayContaining(['group.pending START group.running', 'group.running END group.completed', 'group.running FAIL group.failed']),
    );
  });
});
