// When two targets can name a common path or key: literals (a path names what lies beneath it), globs (a glob names
// the paths it matches), keys, and the conservative answer where the patterns cannot tell.
import fc from 'fast-check';
import picomatch from 'picomatch';
import { describe, expect, it } from 'vitest';
import { targetsOverlap } from '../../src/tools/targetOverlap.js';

/** [a, b, overlap, why] */
const CASES: [string, string, boolean, string][] = [
  // literals
  ['src/a.ts', 'src/a.ts', true, 'the same file'],
  ['src/a.ts', 'src/b.ts', false, 'two files'],
  ['src', 'src/a.ts', true, 'a directory and a file in it'],
  ['src/', 'src/lib/c.ts', true, 'a directory with a trailing slash and a file deeper in it'],
  ['src', 'srcx/a.ts', false, 'a look-alike that is no directory of it'],
  ['/', '/etc/hosts', true, 'the root and an absolute path'],
  // directory or file against a glob
  ['src/**/*.ts', 'src/a.ts', true, 'a glob and a file it matches'],
  ['src/**/*.ts', 'src/a.md', true, 'a literal may be a directory: src/a.md/x.ts'],
  ['src/**/*.ts', 'src/lib', true, 'a glob and a directory holding its matches'],
  ['src/**/*.ts', 'src', true, 'a glob and its base'],
  ['src/**/*.ts', 'docs/x.md', false, 'a glob and a file outside its base'],
  ['src/*.ts', 'src/lib/c.ts', false, 'a one-level glob and a file a level deeper'],
  ['src/*.ts', 'src/lib', false, 'a one-level glob and a directory it cannot match'],
  ['src/*', 'src/lib', true, 'a one-level glob matching a directory'],
  ['src/*.{ts,js}', 'src/a.js', true, 'a brace glob and a file it matches'],
  ['src/a[bc].ts', 'src/ad.ts', false, 'a bracket glob and a file it does not match'],
  ['*.ts', 'a.ts', true, 'a root glob and a root file'],
  ['**', 'anything/at/all', true, 'everything'],
  ['src/.*', 'src/.env', true, 'dot files are matched'],
  ['src/*', 'src/.env', true, 'a star matches dot files too (dot: true)'],
  // glob against glob
  ['src/**/*.ts', 'src/**/*.md', false, 'disjoint extensions'],
  ['**/*.ts', '**/*.md', false, 'disjoint extensions from the root'],
  ['src/**/*.ts', 'src/lib/**', true, 'a glob and a subtree glob under its base'],
  ['src/**', 'docs/**', false, 'two subtrees'],
  ['src/*.ts', 'src/*.md', false, 'one-level globs of two extensions'],
  ['src/*.ts', 'src/a*', true, 'a start and an end that can meet: src/a.ts'],
  ['src/a*.ts', 'src/b*.ts', false, 'two literal starts'],
  ['src/*/index.ts', 'src/lib/*.ts', true, 'src/lib/index.ts'],
  ['src/*/index.ts', 'src/lib/*.md', false, 'the last segment cannot be both'],
  ['src/*', 'src/*/**', true, '** matches no segment too'],
  ['src/*', 'src/*/x.ts', false, 'different depths'],
  ['src/{a,b/c}/*.ts', 'src/b/c/d.ts', true, 'a brace spanning segments'],
  ['src/{a,b/c}/*.ts', 'src/**/*.md', false, 'past a brace spanning segments, the last segments still differ'],
  ['src/{a,b/c}', 'src/b/*', true, 'a brace spanning segments is judged conservatively'],
  ['!src/a.ts', 'docs/x.md', true, 'a negation names almost everything'],
  // keys
  ['blackboard:plan', 'blackboard:plan', true, 'one key'],
  ['blackboard:plan', 'blackboard:notes', false, 'two keys'],
  ['blackboard:plan', 'plan', false, 'a key and a file of the same name'],
  ['blackboard:*', 'blackboard:plan', true, 'a key glob'],
  ['table:orders', 'table:customers', false, 'two tables'],
];

describe('targetsOverlap', () => {
  it.each(CASES)('%s and %s: %s (%s)', (a, b, overlap) => {
    expect(targetsOverlap(a, b)).toBe(overlap);
    expect(targetsOverlap(b, a)).toBe(overlap);
  });
});

/* ------------------------------------------------------- the conservative rule, against picomatch's own answers */

const segment = fc.constantFrom('src', 'lib', 'a.ts', 'b.md', 'index.ts', '.env');
const pathArb = fc.array(segment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));
const globSegment = fc.constantFrom('src', 'lib', '*', '**', '*.ts', '*.md', 'a*', '*.{ts,md}', 'index.*', '[ab].ts');
const globArb = fc.array(globSegment, { minLength: 1, maxLength: 4 }).map((parts) => parts.join('/'));

/** The paths a literal target names: itself and what lies beneath it (here, one level of the sample segments). */
const beneath = (literal: string, samples: readonly string[]) => [literal, ...samples.map((path) => `${literal}/${path}`)];

describe('targetsOverlap never says two targets are disjoint when some path is named by both', () => {
  it('for globs and sample paths picomatch matches', () => {
    fc.assert(
      fc.property(globArb, globArb, fc.array(pathArb, { maxLength: 12 }), (a, b, paths) => {
        const [x, y] = [picomatch(a, { dot: true }), picomatch(b, { dot: true })];
        if (paths.some((path) => x(path) && y(path))) expect(targetsOverlap(a, b), `${a} ~ ${b}`).toBe(true);
      }),
    );
  });

  it('for a glob and a literal, whose subtree counts', () => {
    fc.assert(
      fc.property(globArb, pathArb, fc.array(pathArb, { maxLength: 12 }), (glob, literal, paths) => {
        const matches = picomatch(glob, { dot: true });
        if (beneath(literal, paths).some((path) => matches(path))) expect(targetsOverlap(glob, literal), `${glob} ~ ${literal}`).toBe(true);
      }),
    );
  });
});
