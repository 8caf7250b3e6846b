/**
 * Child-process entry of the listing and memory benchmark (listing.ts): the service of the
 * checkout given as the first argument (its own modules: an A/B runs another checkout's code
 * from this file), as `bench/search/server-main.ts` runs it, on a free loopback port. Prints
 * `LISTENING <port> <ms to ready> <process CPU ms to ready>`, then one line of JSON for every line
 * read on stdin: `cpu` gives the process CPU time so far (µs), `mem` the memory after a full
 * garbage collection (`process.memoryUsage()`, bytes). Stops when stdin closes.
 */
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import type * as Configs from '../../configs';
import type * as App from '../../service/app';
import type * as Deps from '../../service/deps';
import type * as Logger from '../../service/logger';
import type * as Server from '../../service/server';

async function main(): Promise<void> {
  const root = process.argv[2];
  const started = performance.now();
  const cpu = process.cpuUsage();
  /* eslint-disable @typescript-eslint/no-require-imports -- the checkout is chosen at run time */
  const { loadSettings } = require(join(root, 'configs')) as typeof Configs;
  const { createApp } = require(join(root, 'service', 'app')) as typeof App;
  const { createDeps, startDeps } = require(join(root, 'service', 'deps')) as typeof Deps;
  const { silentLogger } = require(join(root, 'service', 'logger')) as typeof Logger;
  const { listen } = require(join(root, 'service', 'server')) as typeof Server;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const settings = loadSettings(process.env);
  const deps = createDeps(settings, { logger: silentLogger() });
  const running = await listen(createApp(deps), deps, 0, '127.0.0.1');
  await startDeps(deps);
  const used = process.cpuUsage(cpu);
  process.stdout.write(`LISTENING ${running.port} ${Math.round(performance.now() - started)} ${Math.round((used.user + used.system) / 1000)}\n`);
  const lines = createInterface({ input: process.stdin });
  lines.on('line', (line) => {
    if (line === 'cpu') {
      const u = process.cpuUsage();
      process.stdout.write(`${JSON.stringify({ cpu: u.user + u.system })}\n`);
    } else if (line === 'mem') {
      (globalThis as { gc?: () => void }).gc?.();
      process.stdout.write(`${JSON.stringify({ mem: process.memoryUsage() })}\n`);
    }
  });
  lines.once('close', () => {
    void running.shutdown().finally(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`listing bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
