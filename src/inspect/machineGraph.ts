import type { AnyStateMachine } from 'xstate';

/** One state of a machine, as a page draws it. */
export interface GraphState {
  /** The state's full id, such as `agent.running.thinking`. */
  readonly id: string;
  /** Its own name, such as `thinking`. */
  readonly key: string;
  /** The state it is in, or null for the machine's root. */
  readonly parent: string | null;
  readonly type: 'atomic' | 'compound' | 'parallel' | 'final' | 'history';
  /** For a compound state: the child it starts in. */
  readonly initial?: string;
}

/** One way from a state to another: every event that takes it, in one label. */
export interface GraphTransition {
  readonly source: string;
  readonly target: string;
  /** The events, such as `START` or `done / error` (an invoked actor's end). */
  readonly events: readonly string[];
}

/** A machine's states and transitions as plain JSON: what the web inspector draws its statechart from. */
export interface MachineGraph {
  /** The machine's id (its root state's id), such as `agent`. */
  readonly id: string;
  /** Every state, parents before their children. */
  readonly states: readonly GraphState[];
  /** Every transition with a target other than its own source, one per pair of states. */
  readonly transitions: readonly GraphTransition[];
}

/** The shape of a state node's definition that the graph reads (XState's `StateNodeDefinition`). */
interface NodeDefinition {
  id: string;
  key: string;
  type: GraphState['type'];
  initial?: { target?: ReadonlyArray<{ id: string }> };
  states: Record<string, NodeDefinition>;
  transitions: ReadonlyArray<{ eventType: string; target?: ReadonlyArray<{ id: string }> }>;
}

/**
 * The states and transitions of a machine, read from its definition (`machine.root.definition`), so the drawing is
 * the machine that runs. Transitions that stay in their state (actions only) are left out; several events between the
 * same two states share one transition, and an invoked actor's end is named `done` or `error`.
 */
export function machineGraph(machine: AnyStateMachine): MachineGraph {
  const states: GraphState[] = [];
  const byPair = new Map<string, { source: string; target: string; events: string[] }>();
  const visit = (node: NodeDefinition, parent: string | null): void => {
    const initial = node.initial?.target?.[0]?.id;
    states.push({ id: node.id, key: node.key, parent, type: node.type, ...(initial === undefined ? {} : { initial }) });
    for (const transition of node.transitions) {
      for (const target of transition.target ?? []) {
        if (target.id === node.id) continue;
        const pair = `${node.id}→${target.id}`;
        const entry = byPair.get(pair) ?? { source: node.id, target: target.id, events: [] };
        const name = eventName(transition.eventType);
        if (!entry.events.includes(name)) entry.events.push(name);
        byPair.set(pair, entry);
      }
    }
    for (const child of Object.values(node.states)) visit(child, node.id);
  };
  const root = machine.root.definition as unknown as NodeDefinition;
  visit(root, null);
  return { id: root.id, states, transitions: [...byPair.values()] };
}

/** `xstate.done.actor.*` as `done`, `xstate.error.actor.*` as `error`; other events as they are named. */
function eventName(type: string): string {
  if (type.startsWith('xstate.done.actor')) return 'done';
  if (type.startsWith('xstate.error.actor')) return 'error';
  return type;
}
