import { closeSync, openSync, readFileSync, readSync } from 'node:fs';
import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Event-loop delay over one interval, seconds. */
export interface EventLoopDelayStats {
  /** 99th percentile of the sampled delays. */
  readonly p99: number;
  /** Longest delay: how long the loop was held at most (a synchronous stall shows here). */
  readonly max: number;
  /**
   * Longest stretch the process itself held the loop: of the delays sampled, the CPU time the
   * process spent between two turns of the loop (at most the turn's wall time). A stall the
   * process caused shows here as in `max`; a core it did not get (a busy machine, a throttled
   * container) shows only in `max`.
   */
  readonly busyMax: number;
}

/** A source of event-loop delay, read once per scrape. */
export interface EventLoopDelay {
  /** Delay since the previous call (or since the start), and a new interval begins. */
  take(): EventLoopDelayStats;
  /** Stops sampling. */
  stop(): void;
}

/**
 * The open `/proc/self/task/<pid>/schedstat` of the process (one handle, opened by the first
 * `loopThreadCpu` and kept for the process's life: every monitor reads it), null where it cannot
 * be read.
 */
let schedstat: { readonly fd: number; readonly buf: Buffer } | null | undefined;

function schedstatSeconds(s: { readonly fd: number; readonly buf: Buffer }): number {
  return Number(s.buf.toString('latin1', 0, readSync(s.fd, s.buf, 0, s.buf.length, 0)).split(' ', 1)[0]) / 1e9;
}

function openSchedstat(): { readonly fd: number; readonly buf: Buffer } | null {
  let fd: number | undefined;
  try {
    fd = openSync(`/proc/self/task/${process.pid}/schedstat`, 'r');
    const s = { fd, buf: Buffer.alloc(96) };
    if (Number.isFinite(schedstatSeconds(s))) return s;
  } catch {
    // Not Linux, or no schedstat: the process's time (loopThreadCpu).
  }
  if (fd !== undefined) closeSync(fd);
  return null;
}

/**
 * CPU seconds of the thread that runs the event loop, where Linux tells (`/proc/self/task/<pid>/schedstat`,
 * nanoseconds on a CPU); elsewhere the whole process's (user and system, every thread), which errs
 * long. The loop's thread is what holds the loop: the GC's and the thread pool's helpers run beside
 * it, and counting them made a turn in which the loop's thread waited for a core look busy.
 */
export function loopThreadCpu(): () => number {
  if (schedstat === undefined) schedstat = openSchedstat();
  const s = schedstat;
  if (s) return () => schedstatSeconds(s);
  return () => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
}

/** The loop thread's user and system CPU so far, clock ticks (`/proc/<pid>/task/<pid>/stat`; 0 elsewhere). */
export function loopThreadTicks(): [number, number] {
  try {
    const stat = readFileSync(`/proc/${process.pid}/task/${process.pid}/stat`, 'latin1');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return [Number(f[11]), Number(f[12])];
  } catch {
    return [0, 0];
  }
}

/**
 * Samples the event loop's delay with `perf_hooks.monitorEventLoopDelay` (a timer every
 * `resolutionMs`, whose lateness is the delay). While the process runs one request's work
 * without yielding, nothing else is served, health probes included; this is how long.
 *
 * Beside it, a timer of the same resolution reads the CPU time of the loop's thread at each turn
 * (`loopThreadCpu`): the longest turn counted in CPU time (`busyMax`) is what the process did,
 * garbage collection on that thread included, apart from the time it waited for a core.
 */
export function monitorEventLoop(resolutionMs = 10): EventLoopDelay {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  const cpuSeconds = loopThreadCpu();
  let lastWall = performance.now();
  let lastCpu = cpuSeconds();
  let busyMax = 0;
  const turns = setInterval(() => {
    const wall = performance.now();
    const cpu = cpuSeconds();
    busyMax = Math.max(busyMax, Math.min(cpu - lastCpu, (wall - lastWall) / 1000));
    lastWall = wall;
    lastCpu = cpu;
  }, resolutionMs);
  turns.unref();
  return {
    take() {
      // No sample yet: the histogram's max is 0 and its min a huge sentinel.
      const delay = h.count > 0 ? { p99: h.percentile(99) / 1e9, max: h.max / 1e9 } : { p99: 0, max: 0 };
      const stats = { ...delay, busyMax };
      h.reset();
      busyMax = 0;
      return stats;
    },
    stop() {
      h.disable();
      clearInterval(turns);
    },
  };
}
