import type { configurePropertyTests } from './property';

/**
 * Jest setup of every suite: `FC_SEED` replays property tests with a seed fast-check printed
 * (test/helpers/property.ts). fast-check is loaded only when it is set, so no suite pays for it.
 */
if (process.env.FC_SEED) {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  (require('./property') as { configurePropertyTests: typeof configurePropertyTests }).configurePropertyTests();
}
