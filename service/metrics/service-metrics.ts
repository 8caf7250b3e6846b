import { Counter, Gauge, collectDefaultMetrics, type Registry } from 'prom-client';
import { monitorEventLoop, type EventLoopDelay, type EventLoopDelayStats } from './event-loop-delay';
import { LeanHistogram } from './lean-histogram';
import { healthScore, performanceGrade } from './health-score';
import type { RequestStats, StatsSnapshot } from './request-stats';
import {
  GRADE_VALUES,
  METRIC_FAMILIES as F,
  METRIC_PREFIX,
  REQUEST_TYPES,
  type PerformanceGrade,
  type RequestType,
} from '../../contract';

/** Occupancy of the search result cache, read at scrape time. */
export interface CacheStats {
  /** Entries now. */
  size(): number;
  /** Most entries. */
  maxSize(): number;
}

/** Sources the gauges read at scrape time. */
export interface MetricSources {
  readonly stats: RequestStats;
  /** The search result cache; absent = empty cache of size 0. */
  readonly cache?: CacheStats;
  /** True while a configured kvstore is unreachable. */
  readonly kvstoreDegraded?: () => boolean;
  /** Event-loop delay, read at scrape time; absent = sampled from this process (`monitorEventLoop`). */
  readonly eventLoopDelay?: EventLoopDelay;
}

/** A consistent health view derived from the statistics. */
export interface HealthView {
  readonly score: number;
  readonly grade: PerformanceGrade;
  readonly snapshot: StatsSnapshot;
}

/** Latency buckets in seconds, from 5 ms to 10 s. */
export const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

/**
 * Registers every metric family of spec §2.1 (plus a latency histogram, the event-loop delay and Node process metrics)
 * on the given registry. Counters are fed from `RequestStats` at scrape time, so the exposition
 * is always consistent with `/metrics`: total = successful + failed.
 */
export class ServiceMetrics {
  /** Latency histogram by route, method and status class (beyond the spec: real percentiles). */
  readonly requestDuration: LeanHistogram<'route' | 'method' | 'status_class'>;
  /** The event-loop delay source the gauges read. */
  readonly eventLoopDelay: EventLoopDelay;
  /** The monitor this instance started (none when `sources` brought one), stopped by `close`. */
  private readonly ownLoopMonitor: EventLoopDelay | undefined;

  constructor(
    readonly registry: Registry,
    readonly sources: MetricSources,
    opts: { processMetrics?: boolean } = {},
  ) {
    const snap = () => sources.stats.snapshot();
    // Counters mirror RequestStats, which only grows; prom-client counters cannot be set, so
    // each collect() increments by the difference since the last scrape.
    const mirrored = (name: string, help: string, read: (s: StatsSnapshot) => number) => {
      let seen = 0;
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          const now = read(snap());
          if (now > seen) this.inc(now - seen);
          seen = now;
        },
      });
    };
    mirrored(F.requestsTotal.name, 'Total number of requests (operational endpoints excluded)', (s) => s.total);
    mirrored(F.requestsSuccessful.name, 'Total successful requests (status < 400)', (s) => s.successful);
    mirrored(F.requestsFailed.name, 'Total failed requests (status >= 400)', (s) => s.failed);
    // Gauges are read from their sources at scrape time.
    const derived = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    derived(
      F.successRate.name,
      'Success rate, percentage: 100 * successful / total (100 with no traffic)',
      () => snap().successRate,
    );
    derived(
      F.avgResponseTimeMs.name,
      'Average response time over the last 5 minutes, milliseconds',
      () => snap().avgResponseTimeMs,
    );
    mirrored(F.totalTokensUsed.name, 'Total tokens used by the external AI model', (s) => s.tokensUsed);
    mirrored(
      F.tokensEstimatedTotal.name,
      'Tokens of svc_ai_search_total_tokens_used that were estimated with the tokenizer because the AI provider reported no usable usage',
      (s) => s.tokensEstimated,
    );
    const view = () => this.health();
    derived(
      F.healthScore.name,
      'Health score, range 0 to 100 (60% success rate, 30% latency, 10% dependencies; see README)',
      () => view().score,
    );
    const encoding = Object.entries(GRADE_VALUES)
      .map(([letter, value]) => `${letter}=${value}`)
      .join(' ');
    derived(
      F.performanceGrade.name,
      `Performance grade, letters A to F, encoded ${encoding}`,
      () => GRADE_VALUES[view().grade],
    );
    const cacheSize = () => sources.cache?.size() ?? 0;
    const cacheMax = () => sources.cache?.maxSize() ?? 0;
    derived(F.cacheSize.name, 'Current cache size (entries in the search result cache)', cacheSize);
    derived(F.cacheMaxSize.name, 'Maximum cache size (entries)', cacheMax);
    derived(F.cacheUsagePercent.name, 'Cache usage, percentage: 100 * size / maxsize', () => {
      const max = cacheMax();
      return max ? (100 * cacheSize()) / max : 0;
    });
    const byTypeSeen = new Map<RequestType, number>();
    new Counter({
      name: F.requestsByTypeTotal.name,
      help: 'Requests per request type (search, chat, ingest, upload, export, eval, content, other)',
      labelNames: F.requestsByTypeTotal.labels,
      registers: [registry],
      collect() {
        const s = snap();
        for (const t of REQUEST_TYPES) {
          const now = s.byType[t].count;
          const seen = byTypeSeen.get(t) ?? 0;
          this.inc({ type: t }, now - seen);
          byTypeSeen.set(t, now);
        }
      },
    });
    new Gauge({
      name: F.requestsByTypeAvgTimeMs.name,
      help: 'Average time per request type over the last 5 minutes, milliseconds',
      labelNames: F.requestsByTypeAvgTimeMs.labels,
      registers: [registry],
      collect() {
        const s = snap();
        for (const t of REQUEST_TYPES) this.set({ type: t }, s.byType[t].avgTimeMs);
      },
    });
    this.requestDuration = new LeanHistogram({
      name: F.httpRequestDuration.name,
      help: 'Request duration in seconds by route, method and status class (operational endpoints excluded)',
      labelNames: F.httpRequestDuration.labels,
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    // Always on (unlike the process metrics' nodejs_eventloop_lag_*): the figure that shows one
    // request holding the process, under a name alerts can rely on in every deployment.
    if (sources.eventLoopDelay) this.eventLoopDelay = sources.eventLoopDelay;
    else this.eventLoopDelay = this.ownLoopMonitor = monitorEventLoop();
    const loop = this.eventLoopDelay;
    let interval: EventLoopDelayStats = { p99: 0, max: 0, busyMax: 0 };
    new Gauge({
      name: F.eventLoopDelayMax.name,
      help: 'Longest event-loop delay since the previous scrape, seconds (how long the process was held at most)',
      registers: [registry],
      collect() {
        // Registered first of the pair: takes the interval that both report.
        interval = loop.take();
        this.set(interval.max);
      },
    });
    new Gauge({
      name: F.eventLoopDelayP99.name,
      help: '99th percentile of event-loop delay since the previous scrape, seconds',
      registers: [registry],
      collect() {
        this.set(interval.p99);
      },
    });
    new Gauge({
      name: F.eventLoopBusyMax.name,
      help: 'Longest event-loop delay since the previous scrape counted in the CPU time the event-loop thread spent in it, seconds (a stall the process caused, without the time it waited for a core)',
      registers: [registry],
      collect() {
        this.set(interval.busyMax);
      },
    });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: `${METRIC_PREFIX}_` });
  }

  /**
   * Stops the event-loop monitor this instance started: its histogram and timer are unref'd, so
   * they never held a process open, but until stopped Node keeps them, and with them whatever
   * they reach (a test file's whole module graph, in a jest worker that runs many).
   */
  close(): void {
    this.ownLoopMonitor?.stop();
  }

  /** Health score and grade now. */
  health(): HealthView {
    const snapshot = this.sources.stats.snapshot();
    const score = healthScore({
      recentSuccessRate: snapshot.recentSuccessRate,
      recentCount: snapshot.recentCount,
      avgResponseTimeMs: snapshot.avgResponseTimeMs,
      kvstoreDegraded: this.sources.kvstoreDegraded?.() ?? false,
    });
    return { score, grade: performanceGrade(score), snapshot };
  }
}
