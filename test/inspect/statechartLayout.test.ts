// The web inspector's statechart layout (ELK, run here in Node as in the page): every state of the agent's and the
// group's machine placed inside the state that holds it, every transition routed between boxes.
import { describe, expect, it } from 'vitest';
import { machineGraph, type MachineGraph } from 'troupe';
import { agentMachine } from '../../src/machines/agentMachine.js';
import { groupMachine } from '../../src/machines/groupMachine.js';
import { layOut } from '../../web/layout.js';

async function check(graph: MachineGraph): Promise<void> {
  const drawing = await layOut(graph);
  const placed = new Map(drawing.states.map((state) => [state.id, state]));
  for (const state of graph.states) {
    if (state.parent === null) continue;
    const box = placed.get(state.id);
    expect(box, state.id).toBeDefined();
    expect(box!.width).toBeGreaterThan(0);
    expect(box!.height).toBeGreaterThan(0);
    const parent = placed.get(state.parent);
    if (!parent) continue; // a child of the root: the drawing itself holds it
    expect(box!.x).toBeGreaterThanOrEqual(parent.x);
    expect(box!.y).toBeGreaterThanOrEqual(parent.y);
    expect(box!.x + box!.width).toBeLessThanOrEqual(parent.x + parent.width + 0.001);
    expect(box!.y + box!.height).toBeLessThanOrEqual(parent.y + parent.height + 0.001);
  }
  const between = graph.transitions.filter((transition) => transition.source !== graph.id);
  expect(drawing.transitions).toHaveLength(between.length);
  for (const transition of drawing.transitions) expect(transition.points.length).toBeGreaterThanOrEqual(2);
}

describe('the statechart layout', () => {
  it("places every state of an agent's machine in its parent and routes every transition", () => check(machineGraph(agentMachine)));
  it("lays out a group's machine, leaving out the transitions of its root (CANCEL from any state)", () => check(machineGraph(groupMachine)));
});
