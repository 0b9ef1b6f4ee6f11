import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

// Tests import `troupe` and `troupe/testing` from the source, as tsx and tsc do through tsconfig.json's `paths`; the
// package's exports point at the build in dist/, which test/package.test.ts checks from a packed tarball.
const source = (path: string) => fileURLToPath(new URL(path, import.meta.url));

export default defineConfig({
  resolve: {
    alias: [
      { find: /^troupe$/, replacement: source('./src/index.ts') },
      { find: /^troupe\/testing$/, replacement: source('./src/testing.ts') },
    ],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
  },
});
