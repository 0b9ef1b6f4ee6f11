import type { Figures, MetricsSnapshot, TotalMetrics } from '../events/metrics.js';

/**
 * A plain-text table of a metrics snapshot: one row an agent (indented under its parent; at the top when its parent has
 * no entry), then the total, whose state says how many agents completed and failed, and how many still run or wait to
 * start when some do (a live run, or a trace a crash cut short).
 */
export function formatMetrics(snapshot: MetricsSnapshot): string {
  const rows: string[][] = [['agent', 'state', 'tokens in', 'tokens out', 'cost $', 'model', 'tools', 'msgs out/in', 'ms']];
  const children = new Map<string | null, string[]>();
  for (const [id, agent] of Object.entries(snapshot.agents)) {
    // An agent whose parent has no entry (a fold that began after the parent was spawned) is a row at the top: the
    // total counts it, so the table shows it.
    const parent = agent.parentId !== null && snapshot.agents[agent.parentId] ? agent.parentId : null;
    const siblings = children.get(parent) ?? [];
    siblings.push(id);
    children.set(parent, siblings);
  }
  const visit = (id: string, depth: number) => {
    const agent = snapshot.agents[id];
    if (!agent) return;
    // A group (a pattern run) does no work of its own: its row shows its members' sum.
    rows.push([`${'  '.repeat(depth)}${id.includes(':') ? id.split(':').slice(1).join(':') : id}`, agent.state, ...figures(agent.group ? agent.subtree : agent.own)]);
    for (const child of children.get(id) ?? []) visit(child, depth + 1);
  };
  for (const root of children.get(null) ?? []) visit(root, 0);
  rows.push(['total', agentCounts(snapshot.total), ...figures(snapshot.total)]);
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)));
  return rows.map((row) => row.map((cell, column) => (column < 2 ? cell.padEnd(widths[column]!) : cell.padStart(widths[column]!))).join('  ')).join('\n');
}

function figures(f: Figures): string[] {
  return [
    String(f.inputTokens),
    String(f.outputTokens),
    f.costUsd.toFixed(6),
    String(f.modelCalls),
    `${f.toolCalls}${f.toolErrors ? ` (${f.toolErrors} err)` : ''}`,
    `${f.messagesOut}/${f.messagesIn}`,
    String(Math.round(f.durationMs)),
  ];
}

/** `2 ok, 1 failed`, then `, 1 running` and `, 2 pending` for agents that have not ended. */
function agentCounts(total: TotalMetrics): string {
  const pending = total.agentsSpawned - total.agentsCompleted - total.agentsFailed - total.agentsRunning;
  const open = [total.agentsRunning > 0 ? `, ${total.agentsRunning} running` : '', pending > 0 ? `, ${pending} pending` : ''].join('');
  return `${total.agentsCompleted} ok, ${total.agentsFailed} failed${open}`;
}
