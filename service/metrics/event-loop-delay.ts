import { monitorEventLoopDelay, type IntervalHistogram } from 'node:perf_hooks';

/** Event-loop delay over one interval, seconds. */
export interface EventLoopDelayStats {
  /** 99th percentile of the sampled delays. */
  readonly p99: number;
  /** Longest delay: how long the loop was held at most (a synchronous stall shows here). */
  readonly max: number;
}

/** A source of event-loop delay, read once per scrape. */
export interface EventLoopDelay {
  /** Delay since the previous call (or since the start), and a new interval begins. */
  take(): EventLoopDelayStats;
  /** Stops sampling. */
  stop(): void;
}

/**
 * Samples the event loop's delay with `perf_hooks.monitorEventLoopDelay` (a timer every
 * `resolutionMs`, whose lateness is the delay). While the process runs one request's work
 * without yielding, nothing else is served, health probes included; this is how long.
 */
export function monitorEventLoop(resolutionMs = 10): EventLoopDelay {
  const h: IntervalHistogram = monitorEventLoopDelay({ resolution: resolutionMs });
  h.enable();
  return {
    take() {
      // No sample yet: the histogram's max is 0 and its min a huge sentinel.
      const stats = h.count > 0 ? { p99: h.percentile(99) / 1e9, max: h.max / 1e9 } : { p99: 0, max: 0 };
      h.reset();
      return stats;
    },
    stop() {
      h.disable();
    },
  };
}
