import { describe, expect, it } from 'vitest';
import { InMemoryMemory } from 'troupe';

describe('InMemoryMemory', () => {
  it('gets, sets, appends, updates, deletes, lists keys and clears', async () => {
    const memory = new InMemoryMemory();
    await memory.set('a', 1);
    expect(await memory.append('log', 'x')).toBe(1);
    expect(await memory.append('log', 'y')).toBe(2);
    expect(await memory.update('a', (value) => (value as number) + 1)).toBe(2);
    expect((await memory.keys()).sort()).toEqual(['a', 'log']);
    expect(await memory.keys('l')).toEqual(['log']);
    expect(await memory.delete('a')).toBe(true);
    expect(await memory.get('a')).toBeUndefined();
    expect(await memory.get('log')).toEqual(['x', 'y']);
    await expect(memory.append('missing-list', 1)).resolves.toBe(1);
    await memory.set('text', 'not a list');
    await expect(memory.append('text', 1)).rejects.toThrow(/not a list/);
    await memory.clear();
    expect(await memory.keys()).toEqual([]);
  });

  it('copies values in and out by default, and keeps references when told not to copy', async () => {
    const copying = new InMemoryMemory();
    const value = { n: 1 };
    await copying.set('v', value);
    value.n = 2;
    expect(await copying.get('v')).toEqual({ n: 1 });

    const sharing = new InMemoryMemory({ copy: false });
    await sharing.set('v', value);
    expect(await sharing.get('v')).toBe(value);
  });
});
