import fc from 'fast-check';

/**
 * The jest timeout of a property test: a guard against a hang, never the bound of the test. A
 * property test is bounded by its `numRuns` and the size of what it generates; how long those runs
 * take depends on the machine (a property test once failed at its 60 s timeout on a 2-core machine
 * with another job running, and passed in seconds a minute later: issue 36), so the jest timeout is
 * set far above any machine's time for the runs, where it only catches a run that never ends.
 */
export const PROPERTY_HANG_GUARD_MS = 600_000;

/**
 * fast-check's per-run `timeout` for an async property whose runs take milliseconds: a run still
 * going after this long is hung (a promise nobody resolves), and fast-check then fails the property
 * naming the seed and the run's counterexample, where a jest timeout would name nothing.
 */
export const PROPERTY_RUN_HANG_GUARD_MS = 30_000;

/**
 * Replays property tests with a chosen seed: `FC_SEED=<seed> npx jest <suite>` runs every property
 * that does not fix a seed of its own with that one (fast-check prints the seed and path of a
 * failure: `{ seed: …, path: … }`). `FC_NUM_RUNS` multiplies nothing; it is left to each test.
 * Called once per suite by the jest setup (jest.config.js).
 */
export function configurePropertyTests(env: NodeJS.ProcessEnv = process.env): void {
  const seed = env.FC_SEED;
  if (seed === undefined || seed === '') return;
  if (!/^-?\d+$/.test(seed))
    throw new Error(`FC_SEED=${seed}: expected an integer seed, as fast-check prints it on a failure`);
  fc.configureGlobal({ ...fc.readConfigureGlobal(), seed: Number(seed) });
}
