/**
 * The order jest starts the suites in: longest first, so that the last suites to start are short
 * ones and no worker runs a long suite alone at the end while the others idle.
 *
 * jest's own sequencer does this from the durations of the previous run on the same machine (its
 * cache), and without them (a fresh clone, a CI box) by file size, which put the longest suite,
 * test/tools/validate/validate-stack.test.ts (7 KB, ~100 s of promtool and amtool), behind sixty
 * larger but shorter ones. This one takes each suite's duration from jest's cache when it has one,
 * else from test/durations.json (seconds per suite of a full `make test` run, the suites of 3 s or
 * more; `node scripts/test-durations.js` rewrites it from such a run), and orders by that, file
 * size breaking ties (the suites not in the table are the short ones). A suite that failed last
 * time still goes first. The order changes only how long the run takes, never what it proves.
 */
// CommonJS: jest loads this file without a transpiler.
/* eslint-disable @typescript-eslint/no-require-imports */
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const DURATIONS = require('./durations.json');
/* eslint-enable @typescript-eslint/no-require-imports */

class LongestFirst extends Sequencer {
  sort(tests) {
    const sizes = new Map();
    const size = (t) => {
      if (!sizes.has(t.path)) sizes.set(t.path, t.context.hasteFS.getSize(t.path) ?? 0);
      return sizes.get(t.path);
    };
    for (const t of tests) {
      const known = DURATIONS[relative(t.context.config.rootDir, t.path).split('\\').join('/')];
      t.duration = this.time(t) ?? (known === undefined ? undefined : known * 1000);
    }
    return tests.sort(
      (a, b) =>
        Number(this.hasFailed(b)) - Number(this.hasFailed(a)) ||
        (b.duration ?? 0) - (a.duration ?? 0) ||
        size(b) - size(a),
    );
  }
}

module.exports = LongestFirst;
