import type { LiveAgent, LiveFigures, LiveToolCall } from './LiveTree.js';

/**
 * `3ms`, `2.5s`, `1m05s`: a duration as the live view shows it. The unit is chosen after rounding, so a time just
 * under a second or a minute reads `1.0s` or `1m00s`, not `1000ms` or `60.0s`.
 */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1_000) return `${whole}ms`;
  const tenths = Math.round(whole / 100);
  if (tenths < 600) return `${(tenths / 10).toFixed(1)}s`;
  const seconds = Math.max(60, Math.floor(whole / 1_000));
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

/** A count and what it counts, singular for one: `1 agent`, `2,991 tool calls`. */
export function counted(value: number, one: string, many = `${one}s`): string {
  return `${count(value)} ${Math.round(value) === 1 ? one : many}`;
}

/** A whole number with thousands separators: `2,991`. */
export function count(value: number): string {
  return Math.round(value).toLocaleString('en-US');
}

/**
 * The first line of a text, without control characters (a model's answer may hold escape codes that would move a
 * terminal's cursor), clipped to `max` columns (see {@link clip}).
 */
export function firstLine(text: string, max = 200): string {
  // oxlint-disable-next-line no-control-regex -- control characters are what this removes
  const line = (text.trim().split('\n', 1)[0] ?? '').replace(/[\u0000-\u001f\u007f-\u009f]/g, ' ').trim();
  return clip(line, max);
}

/**
 * Cuts a text to `max` columns of a terminal, ending it with `…` when it was wider. A character of Chinese, Japanese or
 * Korean, and an emoji, takes two columns; a combining mark none. It cuts between characters, never inside one (an
 * emoji is two UTF-16 units: a half of it prints as `�`).
 */
export function clip(text: string, max: number): string {
  if (max <= 0) return '';
  if (text.length <= max && NARROW.test(text)) return text; // as many columns as units
  let width = 0;
  let end = 0;
  let fits = 0; // where the text is cut for `…`: the end of the last character that leaves a column for it
  for (const character of text) {
    width += columns(character.codePointAt(0)!);
    if (width > max) return `${text.slice(0, fits)}…`;
    end += character.length;
    if (width <= max - 1) fits = end;
  }
  return text;
}

/** Text every UTF-16 unit of which takes one column: printable ASCII and Latin letters, up to U+02FF. */
const NARROW = /^[ -\u02ff]*$/;
const ZERO_WIDTH = /^[\p{Mn}\p{Me}\p{Cf}]$/u;
const WIDE =
  /^(?:[\u1100-\u115f\u231a\u231b\u2329\u232a\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\ua960-\ua97f\uac00-\ud7a3\uf900-\ufaff\ufe10-\ufe19\ufe30-\ufe6f\uff00-\uff60\uffe0-\uffe6\u{16fe0}-\u{18aff}\u{1b000}-\u{1b2ff}\u{1f200}-\u{1f2ff}\u{20000}-\u{3fffd}]|\p{Emoji_Presentation})$/u;

/** The columns one character (a code point) takes on a terminal: 0, 1 or 2. */
function columns(codePoint: number): number {
  const character = String.fromCodePoint(codePoint);
  if (ZERO_WIDTH.test(character)) return 0;
  return WIDE.test(character) ? 2 : 1;
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

/**
 * How long a node has run: from its start until it ended, or until `now`, plus what it ran in earlier runs (resumed or
 * restarted). Time waiting to start is not running time: a node not started (queued, or cancelled before it started)
 * shows only its earlier runs, as the metrics' `durationMs` counts it.
 */
export function elapsed(node: LiveAgent, now: number): number {
  if (node.startedAt === undefined) return node.ranMs;
  return node.ranMs + Math.max(0, (node.endedAt ?? now) - node.startedAt);
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
