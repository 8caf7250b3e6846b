/**
 * Child-process entry of the listing and memory benchmark (listing.ts): the service of the
 * checkout given as the first argument (its own modules: an A/B runs another checkout's code
 * from this file), started as `bench/search/server-main.ts` starts it, on a free loopback port.
 * Prints `LISTENING <port> <ms to ready> <process CPU ms to ready>`, then one line of JSON for
 * every line read on stdin: `cpu` gives the process CPU time so far (µs), `mem` the memory after a
 * full garbage collection (`process.memoryUsage()`, bytes). Stops when stdin closes.
 */
import { createInterface } from 'node:readline';
import { serve } from '../search/server-main';

serve(process.argv[2]).then(
  (running) => {
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
  },
  (err: unknown) => {
    process.stderr.write(`listing bench server failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  },
);
