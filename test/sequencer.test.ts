import { join, resolve } from 'node:path';

/**
 * test/sequencer.js: without jest's own durations (a fresh clone) the suites start longest first
 * by test/durations.json, the others after them by file size; with jest's durations those count.
 */
const ROOT = resolve(__dirname, '..');
/* eslint-disable @typescript-eslint/no-require-imports -- the CommonJS files jest itself loads */
const LongestFirst = require('./sequencer') as new (options: object) => {
  sort(tests: FakeTest[]): FakeTest[];
};
const DURATIONS = require('./durations.json') as Record<string, number>;
/* eslint-enable @typescript-eslint/no-require-imports */

interface FakeTest {
  readonly path: string;
  readonly context: object;
  duration?: number;
}

/** Suites of one project whose sizes are `sizes` (by path relative to the root); jest's cache off. */
function suites(sizes: Record<string, number>): FakeTest[] {
  const context = {
    config: { rootDir: ROOT, cache: false },
    hasteFS: { getSize: (p: string) => sizes[p.slice(ROOT.length + 1)] },
  };
  return Object.keys(sizes).map((rel) => ({ path: join(ROOT, rel), context }));
}
const order = (tests: FakeTest[]) => tests.map((t) => t.path.slice(ROOT.length + 1));

test('the table holds repository-relative suite paths and whole seconds', () => {
  const entries = Object.entries(DURATIONS);
  expect(entries.length).toBeGreaterThan(10);
  for (const [path, seconds] of entries) {
    expect(path).toMatch(/^test\/.+\.test\.ts$/);
    expect(Number.isInteger(seconds) && seconds > 0).toBe(true);
  }
});

test('without cached durations: the table first, longest first, then the rest by size', () => {
  const [longest, second] = Object.entries(DURATIONS).sort((a, b) => b[1] - a[1]);
  const sorted = new LongestFirst({}).sort(
    suites({
      'test/unknown-small.test.ts': 100,
      [second[0]]: 10,
      'test/unknown-big.test.ts': 1_000_000,
      [longest[0]]: 1,
    }),
  );
  expect(order(sorted)).toEqual([longest[0], second[0], 'test/unknown-big.test.ts', 'test/unknown-small.test.ts']);
});
