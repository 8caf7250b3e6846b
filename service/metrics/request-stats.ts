import type { Clock } from '../lib/clock';
import { REQUEST_TYPES, type RequestType } from '../../contract';

/** Sum and count of one second of traffic. */
interface Bucket {
  second: number;
  count: number;
  failed: number;
  sumMs: number;
}

/**
 * A ring of one-second buckets covering the last `windowSeconds`: O(1) to record, O(window) to
 * read, no timers. Old buckets are recognised by their second and ignored.
 */
class RollingWindow {
  private readonly buckets: Bucket[];

  constructor(private readonly windowSeconds: number) {
    this.buckets = Array.from({ length: windowSeconds }, () => ({ second: -1, count: 0, failed: 0, sumMs: 0 }));
  }

  record(nowMs: number, durationMs: number, failed: boolean): void {
    const second = Math.floor(nowMs / 1000);
    const b = this.buckets[second % this.windowSeconds];
    if (b.second !== second) {
      b.second = second;
      b.count = 0;
      b.failed = 0;
      b.sumMs = 0;
    }
    b.count += 1;
    b.sumMs += durationMs;
    if (failed) b.failed += 1;
  }

  totals(nowMs: number): { count: number; failed: number; sumMs: number } {
    const now = Math.floor(nowMs / 1000);
    let count = 0;
    let failed = 0;
    let sumMs = 0;
    for (const b of this.buckets) {
      if (b.second > now - this.windowSeconds && b.second <= now) {
        count += b.count;
        failed += b.failed;
        sumMs += b.sumMs;
      }
    }
    return { count, failed, sumMs };
  }
}

/** Lifetime and recent figures of one request type. */
export interface TypeSnapshot {
  readonly count: number;
  readonly avgTimeMs: number;
}

/** Everything the metrics and `/metrics` report about traffic. */
export interface StatsSnapshot {
  readonly total: number;
  readonly successful: number;
  readonly failed: number;
  /** 100 × successful / total over the lifetime; 100 with no traffic. */
  readonly successRate: number;
  /** Mean response time over the recent window; 0 with no recent traffic. */
  readonly avgResponseTimeMs: number;
  /** Success rate over the recent window; 100 with no recent traffic. */
  readonly recentSuccessRate: number;
  readonly recentCount: number;
  readonly tokensUsed: number;
  /** The part of `tokensUsed` the service estimated with its tokenizer (the provider reported no usable usage). */
  readonly tokensEstimated: number;
  readonly byType: Readonly<Record<RequestType, TypeSnapshot>>;
}

/**
 * Request statistics of the service: lifetime counters (total = successful + failed always) and
 * recent-window averages. Fed by the metrics middleware and the chat provider (tokens).
 */
export class RequestStats {
  private total = 0;
  private successful = 0;
  private failed = 0;
  private tokens = 0;
  private tokensEstimated = 0;
  private readonly window: RollingWindow;
  private readonly typeCounts = new Map<RequestType, number>();
  private readonly typeWindows = new Map<RequestType, RollingWindow>();

  /** @param windowSeconds the recent window of the averages. @default 300 (5 minutes) */
  constructor(
    private readonly clock: Clock,
    readonly windowSeconds = 300,
  ) {
    this.window = new RollingWindow(windowSeconds);
    for (const t of REQUEST_TYPES) {
      this.typeCounts.set(t, 0);
      this.typeWindows.set(t, new RollingWindow(windowSeconds));
    }
  }

  /** Records one finished request. Success is status < 400. */
  record(type: RequestType, status: number, durationMs: number): void {
    const now = this.clock.now();
    const failed = status >= 400;
    this.total += 1;
    if (failed) this.failed += 1;
    else this.successful += 1;
    this.window.record(now, durationMs, failed);
    this.typeCounts.set(type, (this.typeCounts.get(type) ?? 0) + 1);
    this.typeWindows.get(type)!.record(now, durationMs, failed);
  }

  /**
   * Adds tokens used by the AI provider; `estimated` when the service counted them itself
   * because the provider reported none (they are in the total too).
   */
  addTokens(n: number, opts: { estimated?: boolean } = {}): void {
    if (!Number.isFinite(n) || n <= 0) return;
    this.tokens += Math.round(n);
    if (opts.estimated) this.tokensEstimated += Math.round(n);
  }

  /** A consistent view of the figures now. */
  snapshot(): StatsSnapshot {
    const now = this.clock.now();
    const recent = this.window.totals(now);
    const byType = {} as Record<RequestType, TypeSnapshot>;
    for (const t of REQUEST_TYPES) {
      const w = this.typeWindows.get(t)!.totals(now);
      byType[t] = { count: this.typeCounts.get(t) ?? 0, avgTimeMs: w.count ? w.sumMs / w.count : 0 };
    }
    return {
      total: this.total,
      successful: this.successful,
      failed: this.failed,
      successRate: this.total ? (100 * this.successful) / this.total : 100,
      avgResponseTimeMs: recent.count ? recent.sumMs / recent.count : 0,
      recentSuccessRate: recent.count ? (100 * (recent.count - recent.failed)) / recent.count : 100,
      recentCount: recent.count,
      tokensUsed: this.tokens,
      tokensEstimated: this.tokensEstimated,
      byType,
    };
  }
}
