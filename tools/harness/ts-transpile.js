/**
 * How tools/harness/ts-register.js turns one TypeScript file into JavaScript: SWC with the options
 * ts-node 10.9 derives from tsconfig.json under `"ts-node": { "swc": true }` (its
 * `createSwcOptions`: ES2022, commonjs, esModuleInterop, strict, sourceMap), and the source map
 * inline as ts-node appends it. test/tools/harness/ts-register.test.ts proves the output is
 * ts-node's, byte for byte, for every file of service/.
 */
// CommonJS, plain JavaScript: node loads this file before any TypeScript loader exists.
/* eslint-disable @typescript-eslint/no-require-imports */
/**
 * SWC, loaded at the first file to transpile: a process whose every file is in ts-register.js's
 * cache (a service start in a test run, after the first) never loads it.
 */
let swc;
const loadSwc = () => (swc ??= require('@swc/core'));
/** SWC's version, as `require('@swc/core').version` gives it (that module reads it from here). */
const SWC_VERSION = require('@swc/core/package.json').version;
/* eslint-enable @typescript-eslint/no-require-imports */

/** The options ts-node passes SWC for this project's tsconfig.json. */
const SWC_OPTIONS = {
  sourceMaps: true,
  module: { type: 'commonjs', noInterop: false, strictMode: true, ignoreDynamic: false },
  swcrc: false,
  jsc: {
    parser: { syntax: 'typescript', tsx: false, dynamicImport: true, importAssertions: true },
    target: 'es2022',
    transform: {
      legacyDecorator: true,
      react: { throwIfNamespace: false, useBuiltins: false },
      useDefineForClassFields: true,
    },
    keepClassNames: true,
    experimental: { keepImportAttributes: true, emitAssertForImportAttributes: true },
  },
};

/** The JavaScript of one TypeScript file, its source map inline naming `filename` (ts-node's `updateOutput`). */
function transpile(source, filename) {
  const out = loadSwc().transformSync(source, { ...SWC_OPTIONS, filename });
  const map = JSON.parse(out.map);
  map.file = filename;
  map.sources = [filename];
  delete map.sourceRoot;
  const inline = `//# sourceMappingURL=data:application/json;charset=utf-8;base64,${Buffer.from(JSON.stringify(map), 'utf8').toString('base64')}`;
  return `${out.code}\n${inline}`;
}

/** What changes every file's output: SWC's version and the options. */
const TRANSPILER_KEY = JSON.stringify([SWC_VERSION, SWC_OPTIONS]);

module.exports = { SWC_OPTIONS, TRANSPILER_KEY, transpile };
