import { ConfigurationError } from '../errors.js';
import type { MemoryPort } from './MemoryPort.js';

/** Options of {@link InMemoryMemory}. */
export interface InMemoryMemoryOptions {
  /**
   * Copy values in and out (`structuredClone`), so a caller that changes an object after `set` does not change the
   * stored one. Default true. The runtime's own session store turns it off: it never changes what it stored.
   */
  copy?: boolean;
}

/** A {@link MemoryPort} in this process's memory: fast, and gone when the process ends. */
export class InMemoryMemory<T = unknown> implements MemoryPort<T> {
  private readonly values = new Map<string, unknown>();
  private readonly copy: boolean;

  constructor(options: InMemoryMemoryOptions = {}) {
    this.copy = options.copy !== false;
  }

  async get(key: string): Promise<T | undefined> {
    return this.out(this.values.get(key)) as T | undefined;
  }

  async set(key: string, value: T): Promise<void> {
    this.values.set(key, this.in(value));
  }

  async append(key: string, item: unknown): Promise<number> {
    const list = this.values.get(key) ?? [];
    if (!Array.isArray(list)) throw new ConfigurationError(`The value at "${key}" is not a list; append needs one.`);
    list.push(this.in(item));
    this.values.set(key, list);
    return list.length;
  }

  async update(key: string, change: (current: T | undefined) => T): Promise<T> {
    const next = change(this.out(this.values.get(key)) as T | undefined);
    this.values.set(key, this.in(next));
    return this.out(next) as T;
  }

  async delete(key: string): Promise<boolean> {
    return this.values.delete(key);
  }

  async keys(prefix = ''): Promise<string[]> {
    return [...this.values.keys()].filter((key) => key.startsWith(prefix));
  }

  async clear(): Promise<void> {
    this.values.clear();
  }

  private in<V>(value: V): V {
    return this.copy && value !== undefined ? structuredClone(value) : value;
  }

  private out<V>(value: V): V {
    return this.copy && value !== undefined ? structuredClone(value) : value;
  }
}
