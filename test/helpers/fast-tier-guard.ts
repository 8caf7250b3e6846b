/**
 * Set up for every suite of the `fast` tier (jest.config.js): starting a child process throws,
 * naming the tier rule, so a suite that starts one through a path its imports do not show (a
 * package, a computed require) fails at once instead of slowing the tier down. The functions are
 * put back after the suite: a jest worker runs the `process` tier's suites too.
 */
const childProcess = process.getBuiltinModule('child_process');
const NAMES = ['spawn', 'spawnSync', 'exec', 'execSync', 'execFile', 'execFileSync', 'fork'] as const;
const originals = NAMES.map((name) => [name, childProcess[name]] as const);

for (const name of NAMES) {
  Object.defineProperty(childProcess, name, {
    configurable: true,
    writable: true,
    value: () => {
      throw new Error(
        `child_process.${name} in a suite of the fast tier: a suite that starts a process belongs to the process tier (test/tiers.js decides by the imports; import child_process where the process starts)`,
      );
    },
  });
}

afterAll(() => {
  for (const [name, fn] of originals)
    Object.defineProperty(childProcess, name, { configurable: true, writable: true, value: fn });
});
