import elk, { type ElkExtendedEdge, type ElkNode } from 'elkjs/lib/elk.bundled.js';
import type { MachineGraph } from '../src/inspect/machineGraph.js';

/** A state placed on the drawing, in the drawing's coordinates. */
export interface PlacedState {
  readonly id: string;
  readonly key: string;
  readonly compound: boolean;
  readonly final: boolean;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** A transition's route and label. */
export interface PlacedTransition {
  readonly source: string;
  readonly target: string;
  readonly label: string;
  /** Its points, start to end. */
  readonly points: ReadonlyArray<Point>;
  /** Halfway along it, where its label goes. */
  readonly labelAt: Point;
}

interface Point {
  readonly x: number;
  readonly y: number;
}

/** A statechart laid out. */
export interface Drawing {
  readonly width: number;
  readonly height: number;
  readonly states: PlacedState[];
  readonly transitions: PlacedTransition[];
}

/** ELK's layout engine, as the page and Node's tests both construct it. */
type Elk = new () => { layout(graph: ElkNode): Promise<ElkNode> };
// elkjs is CommonJS whose types say `export default`: a bundler's default import is the constructor, TypeScript's
// `nodenext` (the tests' settings) sees it under `.default`. Either way, this is the constructor.
const ELK = ((elk as unknown as { default?: Elk }).default ?? elk) as unknown as Elk;

const CHAR = 6.6; // px per character at the drawing's font size
const LEAF_HEIGHT = 26;

/**
 * Lays a machine's states out with ELK's layered algorithm, compound states around their children and transitions
 * routed between them (ELK, the layout engine of Eclipse and of Stately's own editor). Every coordinate comes back
 * relative to the drawing (`json.shapeCoords` and `json.edgeCoords` set to the root).
 */
export async function layOut(machine: MachineGraph): Promise<Drawing> {
  const nodes = new Map<string, ElkNode>();
  const root: ElkNode = {
    id: machine.id,
    layoutOptions: {
      'elk.algorithm': 'layered',
      'elk.direction': 'RIGHT',
      'elk.hierarchyHandling': 'INCLUDE_CHILDREN',
      'elk.edgeRouting': 'ORTHOGONAL',
      'elk.layered.spacing.nodeNodeBetweenLayers': '30',
      'elk.spacing.nodeNode': '14',
      'elk.json.shapeCoords': 'ROOT',
      'elk.json.edgeCoords': 'ROOT',
    },
    children: [],
    edges: [],
  };
  nodes.set(machine.id, root);
  const compound = new Set(machine.states.filter((state) => state.parent !== null && machine.states.some((other) => other.parent === state.id)).map((state) => state.id));
  for (const state of machine.states) {
    if (state.parent === null) continue;
    const node: ElkNode = compound.has(state.id)
      ? { id: state.id, children: [], labels: [{ text: state.key }], layoutOptions: { 'elk.padding': '[top=26,left=10,bottom=10,right=10]' } }
      : { id: state.id, width: Math.max(48, state.key.length * CHAR + 20), height: LEAF_HEIGHT };
    nodes.set(state.id, node);
    nodes.get(state.parent)?.children?.push(node);
  }
  // Labels are left to the page (it names the transitions out of the current state): all of them at once crowd it.
  // A transition of the machine's root (the group's CANCEL, from any state) has no box to start from: left out.
  const drawn = machine.transitions.filter((transition) => transition.source !== machine.id && transition.target !== machine.id);
  const edges: ElkExtendedEdge[] = drawn.map((transition, index) => ({ id: `t${index}`, sources: [transition.source], targets: [transition.target] }));
  root.edges = edges;
  const laid = await new ELK().layout(root);
  const states: PlacedState[] = [];
  const walk = (node: ElkNode) => {
    for (const child of node.children ?? []) {
      const state = machine.states.find((candidate) => candidate.id === child.id);
      states.push({
        id: child.id,
        key: state?.key ?? child.id,
        compound: compound.has(child.id),
        final: state?.type === 'final',
        x: child.x ?? 0,
        y: child.y ?? 0,
        width: child.width ?? 0,
        height: child.height ?? 0,
      });
      walk(child);
    }
  };
  walk(laid);
  const transitions = (laid.edges ?? []).map((edge: ElkExtendedEdge, index: number): PlacedTransition => {
    const section = edge.sections?.[0];
    const points = section ? [section.startPoint, ...(section.bendPoints ?? []), section.endPoint] : [];
    const source = drawn[index]!;
    return { source: source.source, target: source.target, label: source.events.join(' / '), points, labelAt: halfway(points) };
  });
  return { width: laid.width ?? 0, height: laid.height ?? 0, states, transitions };
}

/** The point halfway along a polyline, by length. */
function halfway(points: ReadonlyArray<Point>): Point {
  const lengths = points.slice(1).map((point, index) => Math.hypot(point.x - points[index]!.x, point.y - points[index]!.y));
  let left = lengths.reduce((sum, length) => sum + length, 0) / 2;
  for (let index = 0; index < lengths.length; index += 1) {
    const length = lengths[index]!;
    if (left <= length && length > 0) {
      const from = points[index]!;
      const to = points[index + 1]!;
      return { x: from.x + ((to.x - from.x) * left) / length, y: from.y + ((to.y - from.y) * left) / length };
    }
    left -= length;
  }
  return points[0] ?? { x: 0, y: 0 };
}
