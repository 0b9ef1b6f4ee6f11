/**
 * A key-value memory of plain JSON values: what the runtime keeps sessions in, and what agents' tools may keep
 * notes in. Every method is async, so a store may live in a file, a database or another process.
 */
export interface MemoryPort<T = unknown> {
  /** The value at `key`, or undefined. */
  get(key: string): Promise<T | undefined>;
  /** Sets the value at `key`. */
  set(key: string, value: T): Promise<void>;
  /**
   * Appends one item to the list at `key` (a new list when there is none) and returns the list's new length. Two
   * writers appending at once both land, in one process or two.
   */
  append(key: string, item: unknown): Promise<number>;
  /**
   * Reads the value at `key`, and sets it to what `change` returns, in one step no other writer can come between
   * (in one process or, for a file store, across processes). Returns the new value.
   */
  update(key: string, change: (current: T | undefined) => T): Promise<T>;
  /** Removes `key`; true when it was there. */
  delete(key: string): Promise<boolean>;
  /** Every key, or those that start with `prefix`. */
  keys(prefix?: string): Promise<string[]>;
  /** Removes every key. */
  clear(): Promise<void>;
}
