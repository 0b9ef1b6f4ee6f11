import fc from 'fast-check';
import type { PlannedCall } from '../../src/tools/schedule.js';

/** A small set of targets that overlap in every way the planner knows (prefixes, the root, look-alikes). */
export const TARGETS = [
  ...['src', 'src/', 'src/a.ts', 'src/b.ts', 'src/lib', 'src/lib/c.ts', 'srcx'],
  ...['docs/x.md', '/', '/etc/hosts'],
];

/** Random batches of tool calls over these targets; a fifth of them have unknown targets. */
const callsOver = (targets: readonly string[], maxLength: number): fc.Arbitrary<PlannedCall[]> =>
  fc.array(
    fc.record(
      {
        kind: fc.constantFrom<PlannedCall['kind']>('read', 'write', 'other'),
        targets: fc.option(fc.array(fc.constantFrom(...targets), { maxLength: 3 }), { nil: undefined, freq: 5 }),
      },
      { requiredKeys: ['kind'] },
    ),
    { maxLength },
  );

/** Random batches of tool calls over {@link TARGETS}; a fifth of them have unknown targets. */
export const callsArbitrary = (maxLength = 14): fc.Arbitrary<PlannedCall[]> => callsOver(TARGETS, maxLength);

/** Random batches in which no call names its targets: the planner's O(n) case. */
export const untargetedCallsArbitrary = (maxLength = 30): fc.Arbitrary<PlannedCall[]> =>
  fc.array(fc.record({ kind: fc.constantFrom<PlannedCall['kind']>('read', 'write', 'other') }), { maxLength });

/** Targets with globs and keys beside {@link TARGETS}: every way two targets may or may not overlap. */
export const GLOB_TARGETS = [
  ...TARGETS,
  ...['src/**/*.ts', 'src/**/*.md', 'src/*.ts', 'src/lib/**', '**/*.md', 'docs/**', 'src/{a,b}.ts'],
  ...['blackboard:plan', 'blackboard:*', 'table:orders'],
];

/** Random batches of tool calls over {@link GLOB_TARGETS}; a fifth of them have unknown targets. */
export const globCallsArbitrary = (maxLength = 14): fc.Arbitrary<PlannedCall[]> => callsOver(GLOB_TARGETS, maxLength);
