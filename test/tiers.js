/**
 * The two test tiers of docs/architecture.md, decided by one rule read from the imports:
 *
 *   a suite is in the `process` tier when it reaches `child_process` or a browser driver
 *   (`playwright-core`) through its imports, following every relative import of ours, type-only
 *   ones included; every other suite is in the `fast` tier.
 *
 * So a suite that starts redis-server, Sentinel, a Cluster, promtool, amtool, Prometheus,
 * Alertmanager, the service process or a browser (tools/harness/binary.ts, tools/validate/tools.ts
 * and the browser test are where they start) is `process`, and one that only uses in-process
 * servers on loopback (supertest, the fake OpenAI server, the webhook receiver) is `fast`. The
 * fast tier also refuses to start a process at run time (test/helpers/fast-tier-guard.ts), so a
 * spawn the imports hide fails there instead of slowing it down. jest.config.js reads this file;
 * test/tiers.test.ts checks it.
 */
// CommonJS: jest.config.js loads this file without a transpiler.
/* eslint-disable @typescript-eslint/no-require-imports */
const { existsSync, readdirSync, readFileSync, statSync } = require('node:fs');
const { dirname, join, relative, resolve } = require('node:path');
/* eslint-enable @typescript-eslint/no-require-imports */

/** Module specifiers that start processes. */
const SPAWNS = /^(node:)?child_process$|^playwright(-core)?$/;
/** `from '…'`, `import '…'`, `require('…')`, `import('…')` and `export … from '…'`. */
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(?\s*|\brequire\s*\(\s*)['"]([^'"]+)['"]/g;
const EXTENSIONS = ['', '.ts', '.js', '.mjs', '.cjs', '/index.ts', '/index.js'];

function resolveRelative(from, specifier) {
  const base = resolve(dirname(from), specifier);
  for (const ext of EXTENSIONS) {
    const file = base + ext;
    if (existsSync(file) && statSync(file).isFile()) return file;
  }
  return undefined;
}

/** Every `*.test.ts` under `dir`, absolute. */
function suites(dir) {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'node_modules' || e.name === 'fixtures' ? [] : suites(p);
    return e.name.endsWith('.test.ts') ? [p] : [];
  });
}

/**
 * The suites under `<root>/test` in each tier (paths relative to `root`, sorted), and for each
 * process suite the chain of imports that reaches a spawning module (for messages).
 */
function testTiers(root) {
  const memo = new Map();
  /** The import chain from `file` to a spawning specifier, or null. */
  function spawnChain(file) {
    if (memo.has(file)) return memo.get(file);
    memo.set(file, null); // a cycle does not spawn by itself
    let chain = null;
    const text = readFileSync(file, 'utf8');
    for (const m of text.matchAll(SPECIFIER)) {
      const specifier = m[1];
      if (SPAWNS.test(specifier)) {
        chain = [relative(root, file), specifier];
        break;
      }
      if (!specifier.startsWith('.')) continue;
      const target = resolveRelative(file, specifier);
      if (!target || target.includes(`${join(root, 'node_modules')}`)) continue;
      const rest = spawnChain(target);
      if (rest) {
        chain = [relative(root, file), ...rest];
        break;
      }
    }
    memo.set(file, chain);
    return chain;
  }
  const fast = [];
  const processTier = [];
  const chains = {};
  for (const file of suites(join(root, 'test')).sort()) {
    const chain = spawnChain(file);
    const rel = relative(root, file);
    if (chain) {
      processTier.push(rel);
      chains[rel] = chain;
    } else fast.push(rel);
  }
  return { fast, process: processTier, chains };
}

module.exports = { testTiers };
