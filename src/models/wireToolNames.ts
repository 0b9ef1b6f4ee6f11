import type { ToolSchema } from './Model.js';

/** The function names the Chat Completions API accepts. */
const WIRE_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/**
 * Tool names as an OpenAI-compatible server accepts them, and back. OpenAI refuses a function name outside
 * `[a-zA-Z0-9_-]{1,64}`, and an MCP server's tools are named `server:tool`: such a name goes out with `__` for the
 * colon and `_` for any other character it refuses (`files:read_file` → `files__read_file`), cut to 64 characters
 * with a hash of the whole when longer, and made unique among the request's tools; the model's calls come back under
 * troupe's names. A request whose tool names all pass needs none of this: {@link wireToolNames} gives undefined.
 */
export class WireToolNames {
  private readonly out = new Map<string, string>();
  private readonly back = new Map<string, string>();

  constructor(tools: readonly ToolSchema[]) {
    const taken = new Set(tools.map((tool) => tool.name).filter((name) => WIRE_NAME.test(name)));
    for (const { name } of tools) {
      if (WIRE_NAME.test(name) || this.out.has(name)) continue;
      const base = encode(name);
      let wire = base;
      for (let n = 2; taken.has(wire); n += 1) wire = fit(`${base}_${n}`, name);
      taken.add(wire);
      this.out.set(name, wire);
      this.back.set(wire, name);
    }
  }

  /** The name a server sees for a tool (also for a call in the conversation to a tool no longer offered). */
  toWire(name: string): string {
    return this.out.get(name) ?? (WIRE_NAME.test(name) ? name : encode(name));
  }

  /** The tool a name from the server stands for. */
  fromWire(name: string): string {
    return this.back.get(name) ?? name;
  }
}

/** The names of a request's tools for the wire, or undefined when every name passes as it is. */
export function wireToolNames(tools: readonly ToolSchema[]): WireToolNames | undefined {
  return tools.every((tool) => WIRE_NAME.test(tool.name)) ? undefined : new WireToolNames(tools);
}

function encode(name: string): string {
  return fit(name.replaceAll(':', '__').replace(/[^a-zA-Z0-9_-]/g, '_') || '_', name);
}

/** At most 64 characters: a longer name keeps its first 55 and a hash of the original name. */
function fit(wire: string, original: string): string {
  return wire.length <= 64 ? wire : `${wire.slice(0, 55)}_${fnv1a(original)}`;
}

/** FNV-1a of a text, as 8 hex digits. */
function fnv1a(text: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0).toString(16).padStart(8, '0');
}
