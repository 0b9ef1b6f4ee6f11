/**
 * Secrets kept out of what leaves the runtime: events (and so traces, recordings, metrics and logs), error messages
 * and stored sessions. A {@link Redactor} replaces each secret it knows, and each API key or `Authorization` header
 * value it recognises, with {@link REDACTED}.
 */
import { inspect } from 'node:util';
import { ConfigurationError } from './errors.js';

/** What a secret is replaced by. */
export const REDACTED = '[redacted]';

/**
 * The shortest secret a redactor replaces. Shorter values turn up inside ordinary words, ids and event fields
 * (`ok`, `user`, `1`), so replacing them would garble everything else: a listed secret shorter than this is refused,
 * an environment variable's value shorter than this is skipped.
 */
export const MIN_SECRET_LENGTH = 8;

/** Environment variables whose names end so hold secrets (`OPENAI_API_KEY`, `GITHUB_TOKEN`, `AWS_SECRET`, …). */
const SECRET_VARIABLE = /_(?:KEY|TOKEN|SECRET)$/i;

/**
 * What is recognised without being listed, each with its replacement:
 * - the value of an `Authorization`, `Proxy-Authorization` or `x-api-key` header, as written in a log line
 *   (`Authorization: Bearer …`) or in JSON (`"authorization":"…"`): the whole value (scheme and token);
 * - a bearer token anywhere (`Bearer <token>`, the token at least 8 characters);
 * - an API key of the `sk-…` kind (OpenAI, Anthropic, OpenRouter, …), with at least 16 characters after `sk-`.
 */
const PATTERNS: readonly { pattern: RegExp; replacement: string }[] = [
  {
    pattern: /\b((?:proxy-)?authorization|x-api-key)(["']?\s*[:=]\s*["']?)(?:(?:bearer|basic|token|digest)\s+)?[^\s"',;}]+/gi,
    replacement: `$1$2${REDACTED}`,
  },
  { pattern: /\b(bearer\s+)[A-Za-z0-9._~+/=-]{8,}/gi, replacement: `$1${REDACTED}` },
  { pattern: /\bsk-[A-Za-z0-9_-]{16,}/g, replacement: REDACTED },
];

/** A cheap first look: a text this does not match holds no secret and no pattern (it may match more than they do). */
const PATTERN_HINTS = ['authorization', 'x-api-key', 'bearer', 'sk-'];

/** Where a {@link Redactor} finds its secrets. */
export interface RedactorOptions {
  /** Values to replace wherever they appear; each must be a string of at least {@link MIN_SECRET_LENGTH} characters. */
  secrets?: readonly string[];
  /**
   * Variables whose values are secrets when their names end in `_KEY`, `_TOKEN` or `_SECRET` (values shorter than
   * {@link MIN_SECRET_LENGTH} are skipped). Default `process.env`; `false` reads none.
   */
  env?: Readonly<Record<string, string | undefined>> | false;
}

/**
 * Replaces secrets with {@link REDACTED}: the values it is given, the values of environment variables named like
 * secrets, and what looks like an API key or an `Authorization` header value (see {@link RedactorOptions}).
 *
 * `redact` walks plain JSON (strings, arrays, plain objects) and copies only what it changes: a value without secrets
 * comes back as the same object, so redacting the common case costs one regular-expression test per string.
 *
 * @example
 * const redactor = new Redactor({ secrets: ['hunter2-hunter2'] });
 * redactor.redactText('password hunter2-hunter2'); // 'password [redacted]'
 * redactor.redactText('Authorization: Bearer sk-abc…'); // 'Authorization: [redacted]'
 */
export class Redactor {
  /** The literal secrets, longest first (so a secret that contains another is replaced whole). */
  readonly secrets: readonly string[];
  private readonly hint: RegExp;
  private readonly literal: RegExp | undefined;

  constructor(options: RedactorOptions = {}) {
    const listed = options.secrets ?? [];
    if (!Array.isArray(listed)) throw new ConfigurationError('secrets must be a list of strings.');
    for (const secret of listed) {
      if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
        throw new ConfigurationError(
          `Every secret must be a string of at least ${MIN_SECRET_LENGTH} characters (shorter values appear in ordinary text and ids).`,
        );
      }
    }
    const found = options.env === false ? [] : secretVariables(options.env ?? process.env);
    this.secrets = [...new Set([...listed, ...found])].sort((a, b) => b.length - a.length);
    // Each secret also as it is written inside a JSON string (a tool call's arguments, a stored line): a quote, a
    // backslash, a line break or a non-ASCII character is escaped there, and a slash may be.
    const forms = [...new Set(this.secrets.flatMap(jsonForms))].sort((a, b) => b.length - a.length);
    const escaped = forms.map(escapeRegExp);
    this.literal = escaped.length > 0 ? new RegExp(escaped.join('|'), 'g') : undefined;
    // Case-insensitive, so it may match more than the secrets do: a false hint costs one more look, never a change.
    this.hint = new RegExp([...escaped, ...PATTERN_HINTS].join('|'), 'i');
  }

  /** What `util.inspect` and `console.log` show of it: how many secrets it knows, never the secrets themselves. */
  [inspect.custom](): string {
    return `Redactor { ${this.secrets.length} secret${this.secrets.length === 1 ? '' : 's'} }`;
  }

  /** What `JSON.stringify` writes of it: how many secrets it knows, never the secrets themselves. */
  toJSON(): { secrets: number } {
    return { secrets: this.secrets.length };
  }


  /** A text with every secret replaced; the same text when it holds none. */
  redactText(text: string): string {
    // No secret is shorter than the minimum, nor any text a pattern matches (the shortest, `x-api-key:v`, has 11).
    if (text.length < MIN_SECRET_LENGTH || !this.hint.test(text)) return text;
    let redacted = this.literal ? text.replace(this.literal, REDACTED) : text;
    for (const { pattern, replacement } of PATTERNS) redacted = redacted.replace(pattern, replacement);
    return redacted;
  }

  /**
   * A plain-JSON value (an event, an error, a conversation) with every secret in its strings replaced. Only what
   * changes is copied; a value without secrets is returned as it is. Anything that is not a string, an array or a
   * plain object (numbers, class instances) is left alone.
   */
  redact<T>(value: T): T {
    if (typeof value === 'string') return this.redactText(value) as T;
    return value !== null && typeof value === 'object' ? (this.redactValue(value) as T) : value;
  }

  /** An array or plain object redacted (copied on the first change); anything else as it is. */
  private redactValue(value: object): object {
    if (Array.isArray(value)) return this.redactArray(value);
    const prototype = Object.getPrototypeOf(value) as unknown;
    return prototype === Object.prototype || prototype === null ? this.redactObject(value as Record<string, unknown>) : value;
  }

  private redactArray(list: readonly unknown[]): readonly unknown[] {
    let copy: unknown[] | undefined;
    for (let index = 0; index < list.length; index++) {
      const item = list[index];
      const redacted = this.redactItem(item);
      if (redacted !== item) (copy ??= [...list])[index] = redacted;
    }
    return copy ?? list;
  }

  private redactObject(object: Record<string, unknown>): Record<string, unknown> {
    let copy: Record<string, unknown> | undefined;
    // `for…in` without an own-property test on every key: it is the fast loop over a small object, and an inherited
    // key (only on a polluted prototype) is never copied in, as the test on a change below makes sure.
    for (const key in object) {
      const item = object[key];
      // A header's value under its own key (`{ headers: { Authorization: 'Token …' } }`) is replaced whole, as in text.
      const redacted = typeof item === 'string' && isSecretHeader(key) ? REDACTED : this.redactItem(item);
      if (redacted !== item && Object.hasOwn(object, key)) (copy ??= { ...object })[key] = redacted;
    }
    return copy ?? object;
  }

  /** One field or element: numbers, booleans and null pass with a `typeof` (most fields of an event are those). */
  private redactItem(item: unknown): unknown {
    if (typeof item === 'string') return this.redactText(item);
    return item !== null && typeof item === 'object' ? this.redactValue(item) : item;
  }
}

/** True for the name of a header whose value is a credential: `Authorization`, `Proxy-Authorization`, `x-api-key`. */
export function isSecretHeader(key: string): boolean {
  const { length } = key;
  if (length !== 9 && length !== 13 && length !== 19) return false; // most keys end here, without a lower-case copy
  const lower = key.toLowerCase();
  return lower === 'authorization' || lower === 'x-api-key' || lower === 'proxy-authorization';
}

/** The values of variables named like secrets (`*_KEY`, `*_TOKEN`, `*_SECRET`), long enough to be told from ordinary text. */
export function secretVariables(env: Readonly<Record<string, string | undefined>>): string[] {
  return Object.entries(env).flatMap(([name, value]) =>
    SECRET_VARIABLE.test(name) && typeof value === 'string' && value.length >= MIN_SECRET_LENGTH ? [value] : [],
  );
}

/**
 * A secret as it is, and as JSON may write it inside a string: escaped, with `\/` for `/`, with `\u` and four hex
 * digits for non-ASCII.
 */
function jsonForms(secret: string): string[] {
  const json = JSON.stringify(secret).slice(1, -1);
  const ascii = json.replace(/[\u0080-\uffff]/g, (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`);
  const upper = ascii.replace(/\\u([0-9a-f]{4})/g, (_, hex: string) => `\\u${hex.toUpperCase()}`);
  return [secret, json, json.replaceAll('/', '\\/'), ascii, upper];
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
