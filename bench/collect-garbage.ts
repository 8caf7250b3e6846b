import { relative } from 'node:path';

/**
 * Full garbage collections on demand, for the benches that measure the heap after one or start a
 * phase without the garbage of the one before: node defines `gc` only when started with
 * `--expose-gc`, and without it these throw an error that names the flag (a bare `gc()` fails
 * with "gc is not a function"; `gc?.()` would measure garbage without saying so).
 */

/** Throws unless node was started with `--expose-gc`: for a bench to fail before its build, not after it. */
export function requireExposedGc(): () => void {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (gc) return gc;
  const script = process.argv[1] ? relative(process.cwd(), process.argv[1]) : 'this bench';
  throw new Error(
    `${script} runs full garbage collections (global.gc): start node with --expose-gc, e.g. node --expose-gc -r ts-node/register/transpile-only ${script}`,
  );
}

/** Runs `times` full garbage collections now (see `requireExposedGc`). */
export function collectGarbage(times = 1): void {
  const gc = requireExposedGc();
  for (let i = 0; i < times; i++) gc();
}
