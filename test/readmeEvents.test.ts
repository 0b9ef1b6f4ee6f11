// README.md's "Events and metrics" section is where a user learns what `runtime.events$` carries: every event type of
// the `TroupeEvent` union must be named there, and it must name no type the union does not have. (test/readme.test.ts
// checks the README's code blocks and command lines; this checks that one list of its prose.)
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { TroupeEvent } from 'troupe';

const root = fileURLToPath(new URL('..', import.meta.url));

/** The text of a `### title` section of the README, up to the next heading. */
function section(markdown: string, title: string): string {
  const start = markdown.indexOf(`\n### ${title}\n`);
  if (start < 0) throw new Error(`README.md has no "### ${title}" section`);
  const end = markdown.slice(start + 1).search(/\n#{1,3} /);
  return end < 0 ? markdown.slice(start) : markdown.slice(start, start + 1 + end);
}

describe('README.md: Events and metrics', () => {
  const text = section(readFileSync(join(root, 'README.md'), 'utf8'), 'Events and metrics');
  const types = TroupeEvent.options.map((option) => option.shape.type.value as string).sort();

  it('names every event type runtime.events$ carries', () => {
    expect(types.filter((type) => !text.includes(`\`${type}\``))).toEqual([]);
  });

  it('names no event type that does not exist', () => {
    // An event type is written `family.name` in backticks, its family one of those the union has.
    const families = new Set(types.map((type) => type.split('.')[0]));
    const named = [...text.matchAll(/`([a-z]+)\.([a-z_]+)`/g)].filter(([, family]) => families.has(family!)).map(([, family, name]) => `${family}.${name}`);
    expect([...new Set(named)].filter((type) => !types.includes(type))).toEqual([]);
  });
});
