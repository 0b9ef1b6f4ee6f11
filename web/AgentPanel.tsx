import type { TroupeEvent } from '../src/events/events.js';
import { count, elapsed, formatCost, formatDuration } from '../src/views/liveFormat.js';
import { Conversation } from './Conversation.js';
import { Statechart } from './Statechart.js';
import type { Store } from './store.js';

/** The selected agent: who it is, its figures, its statechart with its state lit, and its conversation. */
export function AgentPanel({ store }: { store: Store }) {
  const { model } = store;
  const node = store.selected === null ? undefined : model.agent(store.selected);
  if (!node) {
    return (
      <section class="panel agent" aria-label="Agent">
        <p class="muted empty">Select an agent in the tree to see its statechart, conversation and figures.</p>
      </section>
    );
  }
  const state = model.stateOf(node.id);
  const figures: Array<[string, string]> = [
    ['state', state ?? node.state],
    ['model calls', count(node.figures.modelCalls)],
    ['tokens', count(node.figures.tokens)],
    ['cost', formatCost(node.figures.costUsd)],
    ['tool calls', count(node.figures.toolCalls)],
    ['tool errors', count(node.figures.toolErrors)],
    ['sub-agents', count(node.children.length)],
    ['time', formatDuration(elapsed(node, model.lastAt))],
  ];
  return (
    <section class="panel agent" aria-label="Agent" data-testid="agent-panel" data-agent={node.id}>
      <header class="panel-head">
        <h2>
          <span class={`dot ${node.state}`} /> {node.label}
        </h2>
        <span class="muted mono">{node.id}</span>
      </header>
      <dl class="figures-grid" data-testid="agent-figures">
        {figures.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
      {node.failure ? (
        <p class="failure" data-testid="failure">
          <strong>{node.failure.reason}</strong>: {node.failure.message}
        </p>
      ) : null}
      <Statechart machine={store.machines[node.group ? 'group' : 'agent']} state={state} />
      <Conversation events={store.events as TroupeEvent[]} model={model} id={node.id} />
    </section>
  );
}
