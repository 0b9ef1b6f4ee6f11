/**
 * When two targets of tool calls can name a common thing. A target is a path, a directory, a glob (`src/**\/*.ts`)
 * or a key of some other store, by convention with its own prefix (`blackboard:plan`, `table:orders`).
 *
 * The rule, after trailing slashes are stripped:
 * - A target without glob syntax (as `picomatch.scan` reads it) names that path and everything beneath it, so a
 *   directory overlaps the files in it: `src` overlaps `src/a.ts` (at a `/` boundary only: not `srcx`).
 * - A glob names the paths it matches (picomatch, `dot: true`), no more: `src/*.ts` does not cover `src/lib/a.ts`.
 * - Two targets overlap when some path can be named by both. Where that cannot be told from the patterns alone,
 *   they overlap (the conservative answer: the calls wait, they are never wrongly run together).
 *
 * How it is judged, segment by segment (`/`-separated, picomatch's own split of a glob):
 * - literal and literal: equal, or one a path prefix of the other.
 * - glob and literal: the glob matches the literal, or its leading segments match the literal's segments one by
 *   one (each glob segment compiled by picomatch) until the literal ends (a match may lie beneath it) or a `**`
 *   is reached. A glob with fewer segments than the literal, not matching it, cannot name it or what is beneath it.
 * - glob and glob: from the front, segments must be compatible until a `**` in either; from there, the last
 *   segments must be compatible from the back (every common path ends with a segment both last segments match).
 *   Two glob segments are compatible unless their literal starts or literal ends differ (`*.ts` and `*.md`,
 *   `a*` and `b*`); a glob segment and a literal one when picomatch matches it.
 * - A negated pattern (`!src/a.ts`), or a segment that spans several (a brace with a `/` inside, `a**b`), overlaps
 *   everything from there on.
 *
 * Compiled targets and segment matchers are kept in a {@link TargetCache}, made per planned turn.
 */
import picomatch from 'picomatch';

/** One target, read once per turn by a {@link TargetCache}: compare two with {@link compiledOverlap}. */
export interface Target {
  /** The target without trailing slashes (a lone `/` kept). */
  readonly text: string;
  /** True when it is a glob (or a negation): compared by segments. */
  readonly glob: boolean;
  /** A negated pattern: it names everything but something, so it overlaps every target. */
  readonly everything: boolean;
  /** The glob's segments, picomatch's split (empty for a literal). */
  readonly segments: readonly Segment[];
  /** The glob's full matcher (undefined for a literal). */
  readonly matches: ((path: string) => boolean) | undefined;
}

/** One segment of a glob. */
interface Segment {
  readonly text: string;
  /** No glob syntax: compared as text. */
  readonly literal: boolean;
  /** `**`, or a segment that may span several path segments: nothing about the segments from here on is known. */
  readonly open: boolean;
  /** The literal text before the first special character, and after the last (for glob segments). */
  readonly head: string;
  readonly tail: string;
  readonly matches: (segment: string) => boolean;
}

const OPTIONS = { dot: true } as const;
/** Characters that may be glob syntax; a literal start or end is cut at any of them (cutting more is always safe). */
const SPECIAL = /[*?[\]{}()!+@\\]/;

/**
 * Targets read once per turn: each distinct target string is compiled (its kind, segments and picomatch matchers)
 * the first time it is seen, so a turn of n calls compiles each target once, however often it is compared.
 */
export class TargetCache {
  private readonly targets = new Map<string, Target>();
  private readonly segments = new Map<string, Segment>();

  /** The target as the planner compares it. */
  compile(target: string): Target {
    let compiled = this.targets.get(target);
    if (!compiled) {
      compiled = this.read(target);
      this.targets.set(target, compiled);
    }
    return compiled;
  }

  /** True when the two targets can name a common path or key (see the rule at the top of this file). */
  overlap(a: string, b: string): boolean {
    return compiledOverlap(this.compile(a), this.compile(b));
  }

  private read(target: string): Target {
    const text = normaliseTarget(target);
    const scan = picomatch.scan(text, { ...OPTIONS, parts: true });
    // Every target has the same shape (all fields set), so the comparisons see one object shape.
    if (scan.negated) return { text, glob: true, everything: true, segments: [], matches: undefined };
    if (!scan.isGlob) return { text, glob: false, everything: false, segments: [], matches: undefined };
    const segments = (scan.parts ?? [text]).map((part) => this.segment(part));
    return { text, glob: true, everything: false, segments, matches: picomatch(text, OPTIONS) };
  }

  private segment(text: string): Segment {
    let segment = this.segments.get(text);
    if (!segment) {
      segment = readSegment(text);
      this.segments.set(text, segment);
    }
    return segment;
  }
}

/**
 * True when two targets can name a common path or key: equal, one a directory of the other, or globs that can
 * match a common path (see {@link TargetCache} and the rule at the top of its file). For many comparisons, use one
 * `TargetCache`, which compiles each target once.
 *
 * @example
 * targetsOverlap('src', 'src/a.ts'); // true: a directory and a file in it
 * targetsOverlap('src/**\/*.ts', 'src/lib'); // true: src/lib/x.ts
 * targetsOverlap('src/**\/*.ts', 'src/**\/*.md'); // false: no path ends in both
 */
export function targetsOverlap(a: string, b: string): boolean {
  return new TargetCache().overlap(a, b);
}

/** Strips trailing slashes, keeping a lone `/` (the root). */
function normaliseTarget(target: string): string {
  const stripped = target.replace(/\/+$/, '');
  return stripped === '' && target !== '' ? '/' : stripped;
}

/** {@link targetsOverlap} for targets compiled by a {@link TargetCache}. */
export function compiledOverlap(a: Target, b: Target): boolean {
  if (!a.glob && !b.glob) return a.text === b.text || isPathPrefix(a.text, b.text) || isPathPrefix(b.text, a.text);
  if (a.everything || b.everything) return true;
  if (!a.glob) return globLiteralOverlap(b, a.text);
  if (!b.glob) return globLiteralOverlap(a, b.text);
  return globGlobOverlap(a.segments, b.segments);
}

/** True when `prefix` is a proper path prefix of `path` (at a `/` boundary; the empty string is no prefix). */
function isPathPrefix(prefix: string, path: string): boolean {
  if (prefix === '' || path.length <= prefix.length || !path.startsWith(prefix)) return false;
  return prefix.endsWith('/') || path[prefix.length] === '/';
}

/** A glob against a literal, which names itself and what lies beneath it. */
function globLiteralOverlap(glob: Target, literal: string): boolean {
  if (glob.matches !== undefined && glob.matches(literal)) return true;
  const parts = literal.split('/');
  const { segments } = glob;
  for (let i = 0; i < segments.length; i++) {
    const segment = segments[i] as Segment;
    if (segment.open) return true;
    if (i >= parts.length) return true; // the literal ended: a match may lie beneath it
    if (!segment.matches(parts[i] as string)) return false;
  }
  return false; // the glob ended first: its matches are shorter than the literal, and it did not match it
}

/** Two globs: compatible from the front up to a `**`, then from the back. */
function globGlobOverlap(a: readonly Segment[], b: readonly Segment[]): boolean {
  let front = 0;
  for (; front < a.length && front < b.length; front++) {
    const x = a[front] as Segment;
    const y = b[front] as Segment;
    if (x.open || y.open) return backFrom(a, b, front);
    if (!compatible(x, y)) return false;
  }
  // One ended: the other's rest must be able to match nothing (only `**` can) or be unknown.
  const rest = a.length > front ? a.slice(front) : b.slice(front);
  return rest.every((segment) => segment.open);
}

/** The segments from the back, down to `front` or a `**`: all compatible, or the globs are disjoint. */
function backFrom(a: readonly Segment[], b: readonly Segment[], front: number): boolean {
  for (let i = a.length - 1, j = b.length - 1; i >= front && j >= front; i--, j--) {
    const x = a[i] as Segment;
    const y = b[j] as Segment;
    if (x.open || y.open) return true;
    if (!compatible(x, y)) return false;
  }
  return true;
}

/** True when two single segments can match a common name. */
function compatible(x: Segment, y: Segment): boolean {
  if (x.literal && y.literal) return x.text === y.text;
  if (y.literal) return x.matches(y.text);
  if (x.literal) return y.matches(x.text);
  const heads = x.head.startsWith(y.head) || y.head.startsWith(x.head);
  const tails = x.tail.endsWith(y.tail) || y.tail.endsWith(x.tail);
  return heads && tails;
}

function readSegment(text: string): Segment {
  const scan = picomatch.scan(text);
  if (!scan.isGlob && !scan.negated) {
    return { text, literal: true, open: false, head: text, tail: text, matches: (name) => name === text };
  }
  const open = text.includes('**') || text.includes('/');
  const first = text.search(SPECIAL);
  let last = text.length - 1;
  while (last >= 0 && !SPECIAL.test(text[last] as string)) last--;
  return {
    text,
    literal: false,
    open,
    head: first < 0 ? text : text.slice(0, first),
    tail: text.slice(last + 1),
    matches: picomatch(text, OPTIONS),
  };
}
