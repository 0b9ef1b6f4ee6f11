import { z } from 'zod';
import { ConfigurationError } from '../errors.js';

/** A change on the blackboard: a key written (with its value) or deleted, and who did it. */
export interface BlackboardChange {
  key: string;
  value?: z.core.util.JSONType;
  deleted?: true;
  /** The writer's agent id, or `runtime` for code. */
  by: string;
}

const JsonValue = z.json();

/**
 * A key-value store shared by every agent of a run (`runtime.blackboard`, and the `blackboard_read` and
 * `blackboard_write` tools). Values are JSON, copied in and out, so no reader can change what another sees. Every
 * write and delete is reported (a `blackboard.changed` event).
 */
export class Blackboard {
  private readonly values = new Map<string, string>();

  constructor(private readonly changed: (change: BlackboardChange) => void = () => {}) {}

  /** The value of a key (a copy), or undefined. */
  get(key: string): z.core.util.JSONType | undefined {
    const text = this.values.get(key);
    return text === undefined ? undefined : (JSON.parse(text) as z.core.util.JSONType);
  }

  /** True when the key is set. */
  has(key: string): boolean {
    return this.values.has(key);
  }

  /** Every key, in the order they were first written. */
  keys(): string[] {
    return [...this.values.keys()];
  }

  /** Everything on the blackboard, as one plain object (a copy); every key is an own property, `__proto__` too. */
  toJSON(): Record<string, z.core.util.JSONType> {
    return Object.fromEntries([...this.values.keys()].map((key) => [key, this.get(key)!]));
  }

  /** Writes a JSON value under a key; anything that is not JSON is a `ConfigurationError`. */
  set(key: string, value: unknown, by = 'runtime'): void {
    if (typeof key !== 'string' || key === '') throw new ConfigurationError('A blackboard key must be a non-empty string.');
    const parsed = JsonValue.safeParse(value);
    const text = parsed.success ? jsonText(parsed.data) : undefined;
    if (!parsed.success || text === undefined) {
      throw new ConfigurationError(`The value for "${key}" is not JSON (numbers must be finite; no functions, undefined or cycles).`);
    }
    this.values.set(key, text);
    this.changed({ key, value: parsed.data, by });
  }

  /** Deletes a key; returns false when it was not set. */
  delete(key: string, by = 'runtime'): boolean {
    if (!this.values.delete(key)) return false;
    this.changed({ key, deleted: true, by });
    return true;
  }
}

/** A JSON value as text, or undefined when it cannot be written (an object that holds itself). */
function jsonText(value: z.core.util.JSONType): string | undefined {
  try {
    return JSON.stringify(value);
  } catch {
    return undefined;
  }
}
