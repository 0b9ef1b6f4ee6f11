import { useEffect, useLayoutEffect, useRef, useState } from 'preact/hooks';
import type { MachineGraph } from '../src/inspect/machineGraph.js';
import { layOut, type Drawing } from './layout.js';

const drawings = new Map<MachineGraph, Promise<Drawing>>();

/** A machine's drawing, laid out once a page. */
function drawingOf(machine: MachineGraph): Promise<Drawing> {
  let drawing = drawings.get(machine);
  if (!drawing) {
    drawing = layOut(machine);
    drawings.set(machine, drawing);
  }
  return drawing;
}

/**
 * An agent's lifecycle statechart, drawn from its machine's definition, with the state it is in lit (and the states
 * that hold it). `state` is a path below the machine's root, such as `running.acting.working`.
 */
export function Statechart({ machine, state }: { machine: MachineGraph | undefined; state: string | undefined }) {
  const [drawing, setDrawing] = useState<Drawing | undefined>(undefined);
  const [failure, setFailure] = useState<string | undefined>(undefined);
  const box = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (!machine) return;
    let current = true;
    drawingOf(machine).then(
      (laid) => current && setDrawing(laid),
      (error: unknown) => current && setFailure(error instanceof Error ? error.message : String(error)),
    );
    return () => {
      current = false;
    };
  }, [machine]);
  const active = machine && state !== undefined ? `${machine.id}.${state}` : undefined;
  // The drawing is at its own size, wider than the panel: the current state is scrolled into view.
  useLayoutEffect(() => {
    const placed = drawing?.states.find((candidate) => candidate.id === active);
    const element = box.current;
    if (placed && element) element.scrollLeft = Math.max(0, placed.x + placed.width / 2 - element.clientWidth / 2);
  }, [drawing, active]);
  if (failure !== undefined) return <div class="statechart-box muted">The statechart could not be laid out: {failure}</div>;
  if (!machine || !drawing) return <div class="statechart-box muted">Drawing the statechart…</div>;
  const lit = new Set<string>();
  if (state !== undefined) {
    const parts = state.split('.');
    for (let length = 1; length <= parts.length; length += 1) lit.add(`${machine.id}.${parts.slice(0, length).join('.')}`);
  }
  return (
    <div class="statechart-box" ref={box}>
    <svg
      class="statechart"
      data-testid="statechart"
      data-active={active}
      width={drawing.width}
      height={drawing.height}
      viewBox={`0 0 ${drawing.width} ${drawing.height}`}
      role="img"
      aria-label={`statechart, in ${state ?? 'no state yet'}`}
    >
      <defs>
        <marker id="arrow" viewBox="0 0 8 8" refX="7" refY="4" markerWidth="7" markerHeight="7" orient="auto-start-reverse">
          <path d="M0,0 L8,4 L0,8 z" class="arrowhead" />
        </marker>
      </defs>
      {drawing.states.map((placed) => (
        <g
          key={placed.id}
          data-state-id={placed.id}
          class={`state${placed.compound ? ' compound' : ''}${placed.final ? ' final' : ''}${lit.has(placed.id) ? ' lit' : ''}${placed.id === active ? ' active' : ''}`}
        >
          <rect x={placed.x} y={placed.y} width={placed.width} height={placed.height} rx={placed.compound ? 8 : 6} />
          <text x={placed.x + (placed.compound ? 10 : placed.width / 2)} y={placed.y + (placed.compound ? 17 : placed.height / 2 + 4)} text-anchor={placed.compound ? 'start' : 'middle'}>
            {placed.key}
          </text>
        </g>
      ))}
      {drawing.transitions.map((transition, index) => (
        <g key={index} class={`transition${lit.has(transition.source) ? ' from-lit' : ''}`}>
          <title>{transition.label}</title>
          <polyline points={transition.points.map((point) => `${point.x},${point.y}`).join(' ')} marker-end="url(#arrow)" />
        </g>
      ))}
      {/* The ways out of the current state (and the states that hold it) are named; the rest on hover. */}
      {drawing.transitions
        .filter((transition) => lit.has(transition.source))
        .map((transition, index) => (
          <text key={`label${index}`} class="transition-label" x={transition.labelAt.x} y={transition.labelAt.y - 3} text-anchor="middle">
            {transition.label}
          </text>
        ))}
    </svg>
    </div>
  );
}
