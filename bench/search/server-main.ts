/**
 * Child-process entry of the search benchmark: the real service (createDeps + createApp, file
 * store in DATA_DIR) configured from the environment, on a free loopback port. Prints
 * `LISTENING <port> <ms to ready> <process CPU ms to ready>` once the content is loaded and
 * indexed (both from the start of `main`, after the modules are loaded); stops on SIGTERM. The
 * CPU time is the less load-sensitive figure on a shared machine (it counts GC helper threads).
 * `serve(root)` does the same with the modules of another checkout (bench/content/replica-main.ts).
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type * as Configs from '../../configs';
import type * as App from '../../service/app';
import type * as Deps from '../../service/deps';
import type * as Logger from '../../service/lib/logger';
import type * as Server from '../../service/server';

/** Starts the service of the checkout at `root` (its own modules) and prints `LISTENING …` once it is ready. */
export async function serve(root = join(__dirname, '..', '..')): Promise<{ shutdown(): Promise<void> }> {
  /* eslint-disable @typescript-eslint/no-require-imports -- the checkout is chosen at run time */
  const { loadSettings } = require(join(root, 'configs')) as typeof Configs;
  const { createApp } = require(join(root, 'service', 'app')) as typeof App;
  const { createDeps, startDeps } = require(join(root, 'service', 'deps')) as typeof Deps;
  // service/lib/logger since issue 38 moved the leaves; service/logger in older checkouts (A/B bases).
  const loggerPath = existsSync(join(root, 'service', 'lib', 'logger.ts'))
    ? join(root, 'service', 'lib', 'logger')
    : join(root, 'service', 'logger');
  const { silentLogger } = require(loggerPath) as typeof Logger;
  const { listen } = require(join(root, 'service', 'server')) as typeof Server;
  /* eslint-enable @typescript-eslint/no-require-imports */
  // From here, as before: the modules are loaded.
  const started = performance.now();
  const cpu = process.cpuUsage();
  const settings = loadSettings(process.env);
  const deps = createDeps(settings, { logger: silentLogger() });
  const running = await listen(createApp(deps), deps, 0, '127.0.0.1');
  await startDeps(deps);
  const used = process.cpuUsage(cpu);
  process.stdout.write(
    `LISTENING ${running.port} ${Math.round(performance.now() - started)} ${Math.round((used.user + used.system) / 1000)}\n`,
  );
  return running;
}

if (require.main === module) {
  serve().then(
    (running) => {
      process.once('SIGTERM', () => {
        void running.shutdown().finally(() => process.exit(0));
      });
    },
    (err: unknown) => {
      process.stderr.write(`search bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
