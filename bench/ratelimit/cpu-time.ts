import { readFileSync } from 'node:fs';

/**
 * CPU time (user + system, every thread) a process has used so far, microseconds, from
 * `/proc/<pid>/stat`; undefined where there is no /proc (not Linux) or the process is gone.
 * A shared machine's noise moves req/s by ±20 % between runs but barely moves the CPU time each
 * request costs, so the benchmark reports both.
 */
export function cpuMicros(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return undefined;
  }
  // Fields after the command name (which may hold spaces) in parentheses: utime is 14th, stime 15th.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(fields[11]) + Number(fields[12]);
  return Number.isFinite(ticks) ? (ticks * 1e6) / CLOCK_TICKS : undefined;
}

/** USER_HZ: 100 on every Linux architecture Node runs on. */
const CLOCK_TICKS = 100;
