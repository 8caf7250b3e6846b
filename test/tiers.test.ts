import { resolve } from 'node:path';

/**
 * The test tiers (test/tiers.js, jest.config.js): the rule puts the suites that start processes
 * in `process` and the rest in `fast`, the jest projects are exactly those lists, and a suite of
 * the fast tier cannot start a process (test/helpers/fast-tier-guard.ts). This suite is itself in
 * the fast tier.
 */
const ROOT = resolve(__dirname, '..');
interface Tiers {
  readonly fast: string[];
  readonly process: string[];
  /** For each process suite, the imports from it to the module that starts processes. */
  readonly chains: Record<string, string[]>;
}
/* eslint-disable @typescript-eslint/no-require-imports -- the two CommonJS files jest itself loads */
const { testTiers } = require('./tiers') as { testTiers(root: string): Tiers };
const config = require('../jest.config') as { projects: { displayName: string; testMatch: string[] }[] };
/* eslint-enable @typescript-eslint/no-require-imports */

const tiers = testTiers(ROOT);

test('suites that start binaries, the service process or a browser are in the process tier; unit, generator and in-process app suites in the fast tier', () => {
  expect(tiers.process).toEqual(
    expect.arrayContaining([
      'test/tools/harness/redis.test.ts', // redis-server, through tools/harness/binary.ts
      'test/service/kvstore/connection.test.ts',
      'test/hostile/batch-collisions.test.ts', // the service process
      'test/charts/generators/alert-rules.test.ts', // promtool
      'test/service/web/search-page.browser.test.ts', // playwright-core
      'test/e2e/stack.e2e.test.ts',
    ]),
  );
  expect(tiers.chains['test/tools/harness/redis.test.ts']).toEqual([
    'test/tools/harness/redis.test.ts',
    'tools/harness/redis.ts',
    'tools/harness/binary.ts',
    'node:child_process',
  ]);
  expect(tiers.fast).toEqual(
    expect.arrayContaining([
      'test/configs/settings.test.ts',
      'test/charts/generators/format.test.ts',
      'test/service/routes/search.test.ts', // createApp in process, supertest
      'test/service/chat/openai.test.ts', // the fake OpenAI server runs in this process
      'test/tiers.test.ts',
    ]),
  );
});

test('the jest projects are the two tiers, and every suite is in exactly one', () => {
  const match = (name: string) =>
    config.projects.find((p) => p.displayName === name)?.testMatch.map((m) => m.replace('<rootDir>/', ''));
  expect(match('fast')).toEqual(tiers.fast);
  expect(match('process')).toEqual(tiers.process);
  expect(tiers.fast.filter((f) => tiers.process.includes(f))).toEqual([]);
  expect(tiers.fast.length + tiers.process.length).toBeGreaterThan(100);
});

test('a suite of the fast tier cannot start a process', () => {
  const childProcess = process.getBuiltinModule('child_process');
  expect(() => childProcess.spawnSync(process.execPath, ['-e', ''])).toThrow(
    /child_process\.spawnSync in a suite of the fast tier/,
  );
  expect(() => childProcess.execFile(process.execPath, ['-e', ''])).toThrow(/fast tier/);
});
