import { randomInt } from 'node:crypto';
import { uniformFloat64 } from 'pure-rand/distribution/uniformFloat64';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';
import type { RandomGenerator } from 'pure-rand/types/RandomGenerator';

const ALPHABET = '0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ';

/**
 * A source of random numbers for one runtime: seeded, it gives the same sequence every run, so ids, scripted
 * replies and everything drawn from it repeat exactly. Built on `pure-rand`'s xoroshiro128+.
 */
export class RandomSource {
  private readonly generator: RandomGenerator;

  constructor(
    /** The seed: a whole number. One of 32 bits seeds the generator as it is; a larger one (`Date.now()`) is hashed whole. */
    readonly seed: number,
  ) {
    // `seed | 0` alone keeps the low 32 bits: 2 ** 32 + 7 would give the same ids as 7, while `fork` (which hashes the
    // whole seed) gave each agent other draws.
    this.generator = xoroshiro128plus((seed | 0) === seed ? seed : hash32(String(seed)));
  }

  /** A new source whose seed is given at random (for runs that need not repeat). */
  static unseeded(): RandomSource {
    return new RandomSource(randomInt(0, 2 ** 31));
  }

  /** A number in [0, 1). */
  next(): number {
    return uniformFloat64(this.generator);
  }

  /** A whole number in [0, n). */
  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  /** A key of `length` letters and digits, such as `V1StGXR8ab`. */
  key(length = 10): string {
    let key = '';
    for (let i = 0; i < length; i += 1) key += ALPHABET[this.int(ALPHABET.length)];
    return key;
  }

  /**
   * A source of its own for one purpose (one agent, say), seeded from this seed and `label`: what it draws does not
   * depend on how often other sources were drawn from.
   */
  fork(label: string): RandomSource {
    return new RandomSource(hash32(`${this.seed}:${label}`));
  }
}

/** FNV-1a: a 32-bit hash of a string, to derive seeds. */
function hash32(text: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < text.length; i += 1) {
    hash ^= text.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193);
  }
  return hash | 0;
}
