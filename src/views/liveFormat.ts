import type { LiveAgent, LiveFigures, LiveToolCall } from './LiveTree.js';

/** `3ms`, `2.5s`, `1m05s`: a duration as the live view shows it. */
export function formatDuration(ms: number): string {
  if (ms < 1_000) return `${Math.max(0, Math.round(ms))}ms`;
  if (ms < 60_000) return `${(ms / 1_000).toFixed(1)}s`;
  const seconds = Math.floor(ms / 1_000);
  return `${Math.floor(seconds / 60)}m${String(seconds % 60).padStart(2, '0')}s`;
}

/** `3 calls • 450 tokens • $0.002`: an agent's (or a group of agents') figures. */
export function formatFigures(figures: Pick<LiveFigures, 'toolCalls' | 'tokens' | 'costUsd'>): string {
  const calls = `${count(figures.toolCalls)} ${figures.toolCalls === 1 ? 'call' : 'calls'}`;
  const tokens = `${count(figures.tokens)} ${figures.tokens === 1 ? 'token' : 'tokens'}`;
  return `${calls} • ${tokens} • ${formatCost(figures.costUsd)}`;
}

/** `$0.002`, `$1.25`, `$0`, or `<$0.001` for a cost too small to show. */
export function formatCost(usd: number): string {
  if (usd === 0) return '$0';
  if (usd < 0.0005) return '<$0.001';
  return `$${usd.toFixed(usd >= 1 ? 2 : 3)}`;
}

/** A whole number with thousands separators: `2,991`. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/**
 * The first line of a text, without control characters (a model's answer may hold escape codes that would move a
 * terminal's cursor), clipped to `max` characters.
 */
export function firstLine(text: string, max = 200): string {
  // oxlint-disable-next-line no-control-regex -- control characters are what this removes
  const line = (text.trim().split('\n', 1)[0] ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  return clip(line, max);
}

/** Cuts a text to `max` characters, ending it with `…` when it was longer. */
export function clip(text: string, max: number): string {
  if (max <= 0) return '';
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** `► name (description)`: how a node's header starts. */
export function agentTitle(node: LiveAgent, name = node.name): string {
  const description = firstLine(node.description, 120);
  return `► ${name}${description === '' ? '' : ` (${description})`}`;
}

/** `✓ grep {"text":"eval("} 3ms`, `✗ read_file {"path":"x"} 12ms: No file x`, or `⋯ grep {…}` while it runs. */
export function toolLine(call: LiveToolCall): string {
  const args = call.args.trim() === '{}' || call.args.trim() === '' ? '' : ` ${firstLine(call.args, 48)}`;
  if (call.state === 'running') return `⋯ ${call.tool}${args}`;
  const mark = call.state === 'ok' ? '✓' : '✗';
  const error = call.error === undefined ? '' : `: ${firstLine(call.error, 80)}`;
  return `${mark} ${call.tool}${args} ${formatDuration(call.durationMs ?? 0)}${error}`;
}

/** How long a node has run: until it ended, or until `now`, plus what it ran in earlier runs (resumed or restarted). */
export function elapsed(node: LiveAgent, now: number): number {
  const from = node.startedAt ?? node.spawnedAt;
  return node.ranMs + Math.max(0, (node.endedAt ?? now) - from);
}

/**
 * `Working… 2.5s • 3 calls • 450 tokens • $0.002`, `Done 2.5s • …`, `Failed (max_turns) 2.5s • …`, `Queued…`: where a
 * node is and its figures so far (a group has no figures of its own: only its time). A running agent with a todo item
 * in progress says what it works on: `Working: Write the parser… 2.5s • …`.
 */
export function statusLine(node: LiveAgent, now: number): string {
  if (node.state === 'pending') return node.approval === undefined ? 'Queued…' : `Awaiting approval (${node.approval} risk)…`;
  const label = {
    running: node.doing === undefined ? 'Working…' : `Working: ${firstLine(node.doing, 60)}…`,
    waiting: 'Waiting for messages…',
    completed: 'Done',
    failed: `Failed (${node.failure?.reason ?? 'error'})`,
  }[node.state];
  const time = `${label} ${formatDuration(elapsed(node, now))}`;
  return node.group ? time : `${time} • ${formatFigures(node.figures)}`;
}

/** True once a node has ended, completed or failed. */
export function isFinished(node: LiveAgent): boolean {
  return node.state === 'completed' || node.state === 'failed';
}

/** The first line of how a finished node ended: its answer, or what went wrong. */
export function outcomeLine(node: LiveAgent, max = 200): string | undefined {
  if (node.state === 'completed') return firstLine(node.result ?? '', max);
  if (node.state === 'failed') return firstLine(node.failure?.message ?? '', max);
  return undefined;
}
