import { readFileSync, writeFileSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';

/**
 * Rewrites test/durations.json, the suite durations test/sequencer.js starts the longest suites
 * first by, from the JSON results of a full jest run:
 *
 *   npx jest --ci --maxWorkers=3 --json --outputFile=.tmp/jest.json   (or make flake-hunt: .tmp/flake-hunt/1.json)
 *   npx ts-node -T scripts/test-durations.ts .tmp/jest.json
 *
 * Whole seconds, the suites of 3 s or more, longest first.
 */
const ROOT = resolve(__dirname, '..');
const MIN_SECONDS = 3;

interface JestJson {
  readonly testResults: ReadonlyArray<{ readonly name: string; readonly startTime: number; readonly endTime: number }>;
}

/** Seconds per suite (repository-relative paths), the suites of `MIN_SECONDS` or more, longest first. */
export function durations(results: JestJson): Record<string, number> {
  const rows = results.testResults
    .map((r) => [relative(ROOT, r.name).split('\\').join('/'), Math.round((r.endTime - r.startTime) / 1000)] as const)
    .filter(([, s]) => s >= MIN_SECONDS)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]));
  return Object.fromEntries(rows);
}

if (require.main === module) {
  const input = process.argv[2];
  if (!input) {
    console.error('usage: npx ts-node -T scripts/test-durations.ts <jest --json output file>');
    process.exit(2);
  }
  const table = durations(JSON.parse(readFileSync(input, 'utf8')) as JestJson);
  writeFileSync(join(ROOT, 'test', 'durations.json'), `${JSON.stringify(table, null, 2)}\n`);
  console.log(`test/durations.json: ${Object.keys(table).length} suites of ${MIN_SECONDS} s or more`);
}
