import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { create } from 'ts-node';
import { TS_LOADER_ARGS } from '../../../tools/harness/service-process';

/* eslint-disable @typescript-eslint/no-require-imports -- plain CommonJS, loaded by node before any TypeScript loader */
const { transpile } = require('../../../tools/harness/ts-transpile') as {
  transpile: (source: string, filename: string) => string;
};
/* eslint-enable @typescript-eslint/no-require-imports */

const ROOT = resolve(__dirname, '../../..');

/**
 * tools/harness/ts-register.js stands in for `-r ts-node/register/transpile-only` in the child
 * processes the tests start. It is only a cache in front of the same transpiler: for every
 * TypeScript file a child process can load, its output is ts-node's, byte for byte (code and
 * inline source map), so the service the tests start is the service ts-node would have started.
 */
describe('the child processes’ TypeScript loader', () => {
  it('transpiles every file outside test/ exactly as ts-node (SWC, transpile-only) does', () => {
    const tsNode = create({ transpileOnly: true, swc: true, cwd: ROOT });
    const files = execFileSync('git', ['ls-files', '*.ts', ':!:test/**', ':!:*.d.ts'], { cwd: ROOT, encoding: 'utf8' })
      .trim()
      .split('\n');
    expect(files.length).toBeGreaterThan(300);
    const differing = files.filter((f) => {
      const path = resolve(ROOT, f);
      const source = readFileSync(path, 'utf8');
      return transpile(source, path) !== tsNode.compile(source, path);
    });
    expect(differing).toEqual([]);
  }, 120_000);

  it('keeps stack traces on the TypeScript lines, of a caught error and of a crash', () => {
    const dir = mkdtempSync(join(tmpdir(), 'ts-register-'));
    try {
      const file = join(dir, 'crash.ts');
      // Types before the throws shift the JavaScript's columns; the traces must name the TypeScript's.
      writeFileSync(
        file,
        [
          'const typed: { readonly reason: string } = { reason: "typed" };',
          'export function boom(how: string): never {',
          '  const message: string = `${how} ${typed.reason}`; throw new Error(message);',
          '}',
          'try { boom("caught"); } catch (e) { process.stdout.write(String((e as Error).stack)); }',
          'setImmediate((): void => boom("crash"));',
          '',
        ].join('\n'),
      );
      const r = spawnSync(process.execPath, [...TS_LOADER_ARGS, file], { encoding: 'utf8' });
      expect(r.status).toBe(1);
      expect(r.stdout).toContain(
        `Error: caught typed\n    at boom (${file}:3:59)\n    at Object.<anonymous> (${file}:5:7)`,
      );
      expect(r.stderr).toContain('Error: crash typed');
      expect(r.stderr).toContain(`at boom (${file}:3:59)`);
      expect(r.stderr).toContain(`(${file}:6:26)`);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
