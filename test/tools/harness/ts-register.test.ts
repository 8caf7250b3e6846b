import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { create } from 'ts-node';

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
});
