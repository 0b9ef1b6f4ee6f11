import type { LiveAgent, LiveTree } from './LiveTree.js';
import {
  agentTitle,
  clip,
  count,
  formatDuration,
  formatFigures,
  isFinished,
  outcomeLine,
  statusLine,
  toolLine,
} from './liveFormat.js';

/** The screen a live tree is drawn for, and the time to draw it at. */
export interface TreeScreen {
  /** Columns: every line is cut to fit. */
  width: number;
  /** Rows the frame may take, its footer included. */
  height: number;
  /** The time now, on the runtime's clock (running agents show their time up to it). */
  now: number;
}

/**
 * How much of each agent a frame shows. `full`: every agent with its tool calls, answer and status line. `grouped`:
 * the same, but the finished agents under one parent (whose own sub-agents have finished too) make one summary line.
 * `compact`: grouped, and each remaining agent on one line.
 */
type Detail = 'full' | 'grouped' | 'compact';

/** Lines of a frame, up to a limit; past it only counted, not made. */
class Lines {
  readonly out: string[] = [];
  skipped = 0;
  constructor(private readonly limit: number) {}
  get full(): boolean {
    return this.out.length >= this.limit;
  }
  add(indent: string, make: () => string): void {
    if (this.full) this.skipped += 1;
    else this.out.push(indent + make());
  }
}

/**
 * Draws the live tree as text for a screen: `► name (description)` under its parent, each tool call with ✓ or ✗ and
 * its duration, the first line of a finished agent's answer, and a status line (`Working… 2.5s • 3 calls • 450 tokens
 * • $0.002`); a footer sums the run. When the tree is taller than the screen, finished agents are grouped into one
 * summary line per parent, then agents are drawn one line each, then the frame is cut with a line that says how much
 * was left out. Pure: the same tree, screen and time give the same text, without colours or control codes.
 */
export function renderLiveTree(tree: LiveTree, screen: TreeScreen): string {
  const footer = runFooter(tree, screen.now);
  const room = Math.max(1, screen.height - 1);
  for (const detail of ['full', 'grouped'] as const) {
    const lines = new Lines(room);
    drawLevel(tree.roots, '', detail, screen.now, lines);
    if (lines.skipped === 0) return frame([...lines.out, footer], screen.width);
  }
  const lines = new Lines(Math.max(0, room - 1));
  drawLevel(tree.roots, '', 'compact', screen.now, lines);
  const cut = lines.skipped === 0 ? [] : [`… ${count(lines.skipped)} more not shown`];
  return frame([...lines.out, ...cut, footer], screen.width);
}

/** The figures of a whole run, a frame's last line: `4 agents • 1 running • 3 done • 7 calls • 1,200 tokens • $0.002 • 2.5s`. */
export function runFooter(tree: LiveTree, now: number): string {
  const { totals } = tree;
  const parts = [`${count(totals.agents)} ${totals.agents === 1 ? 'agent' : 'agents'}`];
  if (totals.running > 0) parts.push(`${count(totals.running)} running`);
  parts.push(`${count(totals.completed)} done`);
  if (totals.failed > 0) parts.push(`${count(totals.failed)} failed`);
  return `${parts.join(' • ')} • ${formatFigures(totals)} • ${formatDuration(now)}`;
}

function frame(lines: string[], width: number): string {
  return lines.map((line) => clip(line, Math.max(1, width - 1))).join('\n');
}

/** Draws the nodes of one level (the roots, or one node's children), grouping finished ones when asked. */
function drawLevel(nodes: readonly LiveAgent[], indent: string, detail: Detail, now: number, lines: Lines): void {
  if (detail === 'full') {
    for (const node of nodes) drawNode(node, indent, detail, now, lines);
    return;
  }
  const done = nodes.filter(subtreeFinished);
  if (done.length > 0) lines.add(indent, () => summaryLine(done));
  for (const node of nodes) if (!subtreeFinished(node)) drawNode(node, indent, detail, now, lines);
}

function drawNode(node: LiveAgent, indent: string, detail: Detail, now: number, lines: Lines): void {
  const inner = `${indent}  `;
  if (detail === 'compact') {
    lines.add(indent, () => `${agentTitle(node)} · ${statusLine(node, now)}`);
    drawLevel(node.children, inner, detail, now, lines);
    return;
  }
  lines.add(indent, () => agentTitle(node));
  // A tool call that started sub-agents is shown as those sub-agents.
  const delegating = new Set(node.children.map((child) => child.toolCallId));
  for (const call of node.tools) if (!delegating.has(call.callId)) lines.add(inner, () => toolLine(call));
  drawLevel(node.children, inner, detail, now, lines);
  if (isFinished(node)) lines.add(inner, () => `⎿ ${outcomeLine(node)}`);
  lines.add(inner, () => statusLine(node, now));
}

/** True when a node and everything under it have ended. */
function subtreeFinished(node: LiveAgent): boolean {
  return isFinished(node) && node.children.every(subtreeFinished);
}

/** `✓ 997 done • 2,991 calls • 449,100 tokens • $0.150` (or `✓ 994 done, ✗ 3 failed • …`) for finished subtrees. */
function summaryLine(nodes: readonly LiveAgent[]): string {
  const sum = { completed: 0, failed: 0, toolCalls: 0, tokens: 0, costUsd: 0 };
  const visit = (node: LiveAgent) => {
    if (!node.group) {
      sum[node.state === 'completed' ? 'completed' : 'failed'] += 1;
      sum.toolCalls += node.figures.toolCalls;
      sum.tokens += node.figures.tokens;
      sum.costUsd += node.figures.costUsd;
    }
    node.children.forEach(visit);
  };
  nodes.forEach(visit);
  const outcome = sum.failed === 0 ? `✓ ${count(sum.completed)} done` : `✓ ${count(sum.completed)} done, ✗ ${count(sum.failed)} failed`;
  return `${outcome} • ${formatFigures(sum)}`;
}
