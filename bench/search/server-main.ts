/**
 * Child-process entry of the search benchmark: the real service (createDeps + createApp, file
 * store in DATA_DIR) configured from the environment, on a free loopback port. Prints
 * `LISTENING <port> <ms to ready> <process CPU ms to ready>` once the content is loaded and
 * indexed (both from the start of `main`, after the modules are loaded); stops on SIGTERM. The
 * CPU time is the less load-sensitive figure on a shared machine (it counts GC helper threads).
 */
import { loadSettings } from '../../configs';
import { createApp } from '../../service/app';
import { createDeps, startDeps } from '../../service/deps';
import { silentLogger } from '../../service/logger';
import { listen } from '../../service/server';

async function main(): Promise<void> {
  const started = performance.now();
  const cpu = process.cpuUsage();
  const settings = loadSettings(process.env);
  const deps = createDeps(settings, { logger: silentLogger() });
  const running = await listen(createApp(deps), deps, 0, '127.0.0.1');
  await startDeps(deps);
  const used = process.cpuUsage(cpu);
  process.stdout.write(`LISTENING ${running.port} ${Math.round(performance.now() - started)} ${Math.round((used.user + used.system) / 1000)}\n`);
  process.once('SIGTERM', () => {
    void running.shutdown().finally(() => process.exit(0));
  });
}

main().catch((err: unknown) => {
  process.stderr.write(`search bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
