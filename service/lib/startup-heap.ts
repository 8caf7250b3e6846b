import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * Runs a full garbage collection now, so that what start-up built and keeps (the tokenizer's
 * table above all: ~20 MB of strings and maps, read in one step before listening) is moved out of
 * the young generation before any request runs. Left there, the first scavenge after start-up
 * copied it all, 20-50 ms of one turn on the test machine, charged to whichever request
 * happened to trigger it (issue 37: the first 10,000-item upload after a start). Run again once the
 * content is loaded and indexed, before readiness (`startDeps`' `settle`): at 1M documents the
 * first mark-compact after the build, left to the first queries, marked ~0.8 GB of heap in one
 * pause on a busy machine (issue 40).
 *
 * `gc` is exposed for this one call and hidden again (`--expose-gc` would leave it on the global
 * object for all code); the process needs no launch flag for it.
 */
export function collectStartupGarbage(): void {
  setFlagsFromString('--expose-gc');
  try {
    (runInNewContext('gc') as () => void)();
  } finally {
    setFlagsFromString('--no-expose-gc');
  }
}
