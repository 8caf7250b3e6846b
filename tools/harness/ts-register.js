/**
 * The TypeScript loader of the child processes the tests start (`node -r <this file>
 * service/main.ts`, `TS_LOADER_ARGS` of service-process.ts): what `-r
 * ts-node/register/transpile-only` did with this project's `"ts-node": { "swc": true }` (each
 * `.ts` file outside node_modules transpiled by SWC with the options ts-node derives from
 * tsconfig.json, ts-transpile.js), minus two costs paid on every start:
 * - ts-node loads the TypeScript compiler to read tsconfig.json;
 * - it transpiles every file again; here a file's output is kept in `.cache/ts-swc/` (git-ignored)
 *   under the hash of its path, its source, SWC's version and the options, so the output changes
 *   exactly when one of those does.
 * A service start took 2.55 s of CPU under ts-node and 1.9 s here (cache warm; four starts of
 * each, taken in turn). Stack traces still name the `.ts` lines: the maps stay inline in the
 * output, and, as under ts-node, `@cspotcode/source-map-support` (ts-node's own) maps a trace
 * when one is formatted, reading a file's map then, once. Node's own source-map support
 * (`process.setSourceMapsEnabled`) is left off: it decodes and parses every loaded file's map
 * as the file loads (node_modules' `.js.map` files too), 0.13 s of each service start's ~1.7 s
 * of CPU at load 7-9, for traces that most starts never print.
 */
// CommonJS, plain JavaScript: node loads this file before any TypeScript loader exists.
/* eslint-disable @typescript-eslint/no-require-imports */
const { createHash } = require('node:crypto');
const { mkdirSync, readFileSync, renameSync, writeFileSync } = require('node:fs');
const { dirname, join, resolve } = require('node:path');
const { TRANSPILER_KEY, transpile } = require('./ts-transpile');
// ts-node's dependency, found where ts-node finds it: the source-map support ts-node installs.
const sourceMapSupport = require(
  require.resolve('@cspotcode/source-map-support', { paths: [dirname(require.resolve('ts-node'))] }),
);
/* eslint-enable @typescript-eslint/no-require-imports */

const CACHE = resolve(__dirname, '..', '..', '.cache', 'ts-swc');

/** The cache entry each loaded `.ts` file's JavaScript came from: where its source map is read, if a trace needs it. */
const outputs = new Map();

/** `transpile`, through the cache folder. */
function cached(source, filename) {
  const key = createHash('sha256').update(TRANSPILER_KEY).update('\0').update(filename).update('\0').update(source);
  const file = join(CACHE, `${key.digest('hex')}.js`);
  outputs.set(filename, file);
  try {
    return readFileSync(file, 'utf8');
  } catch {
    const code = transpile(source, filename);
    // Written aside and renamed: another process reading the entry meanwhile sees all of it or none.
    mkdirSync(CACHE, { recursive: true });
    const tmp = `${file}.${process.pid}.tmp`;
    writeFileSync(tmp, code);
    renameSync(tmp, file);
    return code;
  }
}

sourceMapSupport.install({
  environment: 'node',
  // The code node ran for a `.ts` file (its inline map included) instead of the `.ts` on disk;
  // anything else is read as the library would read it.
  retrieveFile: (path) => (outputs.has(path) ? readFileSync(outputs.get(path), 'utf8') : null),
});
const loadJs = require.extensions['.js'];
require.extensions['.ts'] = (module, filename) => {
  // As ts-node: TypeScript inside node_modules is not ours to transpile.
  if (/[\\/]node_modules[\\/]/.test(filename)) return loadJs(module, filename);
  module._compile(cached(readFileSync(filename, 'utf8'), filename), filename);
};
