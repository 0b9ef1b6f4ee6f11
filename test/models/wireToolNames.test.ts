// Tool names for an OpenAI-compatible server: what it refuses goes out encoded, unique, at most 64 long, and back.
import { describe, expect, it } from 'vitest';
import { wireToolNames } from '../../src/models/wireToolNames.js';

const tool = (name: string) => ({ name, description: 'd', parameters: { type: 'object' } });

describe('wireToolNames', () => {
  it('is not needed when every name passes as it is', () => {
    expect(wireToolNames([tool('read_file'), tool('get-sum')])).toBeUndefined();
  });

  it('encodes a colon as __ and any other refused character as _, and reads them back', () => {
    const names = wireToolNames([tool('files:read_file'), tool('docs:search.v2')])!;
    expect([names.toWire('files:read_file'), names.toWire('docs:search.v2')]).toEqual(['files__read_file', 'docs__search_v2']);
    expect([names.fromWire('files__read_file'), names.fromWire('docs__search_v2'), names.fromWire('other')]).toEqual([
      'files:read_file',
      'docs:search.v2',
      'other',
    ]);
  });

  it('keeps names unique and at most 64 characters long', () => {
    const long = `server:${'x'.repeat(80)}`;
    const names = wireToolNames([tool('a:b'), tool('a__b'), tool('a.b'), tool(long), tool(`${long}y`)])!;
    const wire = ['a:b', 'a__b', 'a.b', long, `${long}y`].map((name) => names.toWire(name));
    expect(new Set(wire).size).toBe(5);
    expect(wire.slice(0, 3)).toEqual(['a__b_2', 'a__b', 'a_b']);
    for (const name of wire) expect(name).toMatch(/^[a-zA-Z0-9_-]{1,64}$/);
    expect(names.fromWire(wire[3]!)).toBe(long);
  });
});
