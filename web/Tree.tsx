import type { LiveAgent } from '../src/views/LiveTree.js';
import { count, counted, elapsed, firstLine, formatCost, formatDuration } from '../src/views/liveFormat.js';
import type { Store, StoreActions } from './store.js';
import { useVirtualRows } from './virtual.js';

const ROW = 24;

/** One row of the tree: an agent at its depth, open or closed. */
interface Row {
  readonly node: LiveAgent;
  readonly depth: number;
  readonly open: boolean;
}

/** The agents in tree order, without the children of closed nodes. */
function rowsOf(roots: readonly LiveAgent[], closed: ReadonlySet<string>): Row[] {
  const rows: Row[] = [];
  const stack: Row[] = [];
  for (let index = roots.length - 1; index >= 0; index -= 1) stack.push({ node: roots[index]!, depth: 0, open: !closed.has(roots[index]!.id) });
  while (stack.length > 0) {
    const row = stack.pop()!;
    rows.push(row);
    if (!row.open) continue;
    const { children } = row.node;
    for (let index = children.length - 1; index >= 0; index -= 1) {
      const child = children[index]!;
      stack.push({ node: child, depth: row.depth + 1, open: !closed.has(child.id) });
    }
  }
  return rows;
}

/**
 * The live agent tree: every agent under its parent with its state, task and figures, as a virtual list (1,000s of
 * agents draw the rows in view). A click selects an agent; the triangle opens or closes its sub-agents.
 */
export function Tree({ store, actions, closed, toggle }: { store: Store; actions: StoreActions; closed: Set<string>; toggle: (id: string) => void }) {
  const { tree } = store.model;
  const rows = rowsOf(tree.roots, closed);
  const list = useVirtualRows(rows.length, ROW);
  const now = store.model.lastAt;
  return (
    <section class="panel tree" aria-label="Agents">
      <header class="panel-head">
        <h2>Agents</h2>
        <span class="muted" data-testid="totals">
          {counted(tree.totals.agents, 'agent')} · {count(tree.totals.running)} running · {count(tree.totals.completed)} completed · {count(tree.totals.failed)} failed
        </span>
      </header>
      <div class="scroll" ref={list.scrollRef} role="tree">
        <div style={{ height: `${list.total}px`, position: 'relative' }}>
          {list.items.map((item) => {
            const { node, depth, open } = rows[item.index]!;
            const selected = store.selected === node.id;
            return (
              <div
                key={node.id}
                role="treeitem"
                aria-selected={selected}
                data-agent={node.id}
                data-state={node.state}
                class={`row agent-row${selected ? ' selected' : ''}`}
                style={{ transform: `translateY(${item.start}px)`, height: `${ROW}px`, paddingLeft: `${6 + depth * 16}px` }}
                onClick={() => actions.select(node.id)}
              >
                <button
                  class="twist"
                  aria-label={open ? 'close' : 'open'}
                  disabled={node.children.length === 0}
                  onClick={(event) => {
                    event.stopPropagation();
                    toggle(node.id);
                  }}
                >
                  {node.children.length === 0 ? '' : open ? '▾' : '▸'}
                </button>
                <span class={`dot ${node.state}`} title={node.state} />
                <span class="label">{node.label}</span>
                <span class="state-name">{node.state}</span>
                <span class="desc">{firstLine(node.description, 80)}</span>
                <span class="figures">
                  {node.children.length > 0 && !open ? `${count(node.children.length)} sub · ` : ''}
                  {count(node.figures.tokens)} tok · {formatCost(node.figures.costUsd)} · {formatDuration(elapsed(node, now))}
                </span>
              </div>
            );
          })}
        </div>
      </div>
    </section>
  );
}
