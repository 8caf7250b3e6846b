import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';

/** How the benchmark's processes are placed on CPUs. */
export interface Pinning {
  /** The command that starts a contestant server: wrapped in `taskset` when pinning. */
  server(cmd: string, args: string[]): [string, string[]];
  /** One line for the results. */
  readonly description: string;
}

/** Pins every thread of `pid` to `cpu`; false when taskset fails. */
function pinPid(pid: number, cpu: number): boolean {
  return spawnSync('taskset', ['-a', '-p', '-c', String(cpu), String(pid)], { stdio: 'ignore' }).status === 0;
}

/**
 * On a machine with two or more CPUs and `taskset`: contestant servers on CPU 1, the load
 * generator (this process, autocannon runs in it) and redis-server on CPU 0. A server then never
 * waits for its own load generator, and the Redis-backed contestants share their Redis CPU with
 * the load as the libraries do. BENCH_PIN=0 turns it off.
 */
export function pinning(redisPid: number): Pinning {
  const off: Pinning = { server: (cmd, args) => [cmd, args], description: 'no CPU pinning' };
  if (process.env.BENCH_PIN === '0' || cpus().length < 2) return off;
  if (!pinPid(process.pid, 0) || !pinPid(redisPid, 0)) return off;
  return {
    server: (cmd, args) => ['taskset', ['-c', '1', cmd, ...args]],
    description:
      'pinned with taskset: each contestant server on CPU 1, the load generator (autocannon, in the runner) and redis-server on CPU 0',
  };
}
