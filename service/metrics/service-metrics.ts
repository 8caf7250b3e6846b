import { Counter, Gauge, collectDefaultMetrics, type Registry } from 'prom-client';
import { monitorEventLoop, type EventLoopDelay, type EventLoopDelayStats } from './event-loop-delay';
import { LeanHistogram } from './lean-histogram';
import { GRADE_VALUES, healthScore, performanceGrade, type PerformanceGrade } from './health-score';
import { REQUEST_TYPES, type RequestType } from './request-types';
import type { RequestStats, StatsSnapshot } from './request-stats';

/** Occupancy of the search result cache, read at scrape time. */
export interface CacheStats {
  /** Entries now. */
  size(): number;
  /** Most entries. */
  maxSize(): number;
}

/** Metric name prefix (spec: `svc`). */
export const METRIC_PREFIX = 'svc_ai_search';

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

  constructor(
    readonly registry: Registry,
    readonly sources: MetricSources,
    opts: { processMetrics?: boolean } = {},
  ) {
    const p = METRIC_PREFIX;
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
    mirrored(`${p}_requests_total`, 'Total number of requests (operational endpoints excluded)', (s) => s.total);
    mirrored(`${p}_requests_successful`, 'Total successful requests (status < 400)', (s) => s.successful);
    mirrored(`${p}_requests_failed`, 'Total failed requests (status >= 400)', (s) => s.failed);
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
    derived(`${p}_success_rate`, 'Success rate, percentage: 100 * successful / total (100 with no traffic)', () => snap().successRate);
    derived(`${p}_avg_response_time_ms`, 'Average response time over the last 5 minutes, milliseconds', () => snap().avgResponseTimeMs);
    mirrored(`${p}_total_tokens_used`, 'Total tokens used by the external AI model', (s) => s.tokensUsed);
    const view = () => this.health();
    derived(
      `${p}_health_score`,
      'Health score, range 0 to 100 (60% success rate, 30% latency, 10% dependencies; see README)',
      () => view().score,
    );
    derived(`${p}_performance_grade`, 'Performance grade, letters A to F, encoded A=4 B=3 C=2 D=1 F=0', () => GRADE_VALUES[view().grade]);
    const cacheSize = () => sources.cache?.size() ?? 0;
    const cacheMax = () => sources.cache?.maxSize() ?? 0;
    derived(`${p}_cache_size`, 'Current cache size (entries in the search result cache)', cacheSize);
    derived(`${p}_cache_maxsize`, 'Maximum cache size (entries)', cacheMax);
    derived(`${p}_cache_usage_percent`, 'Cache usage, percentage: 100 * size / maxsize', () => {
      const max = cacheMax();
      return max ? (100 * cacheSize()) / max : 0;
    });
    const byTypeSeen = new Map<RequestType, number>();
    new Counter({
      name: `${p}_requests_by_type_total`,
      help: 'Requests per request type (search, chat, ingest, upload, export, eval, content, other)',
      labelNames: ['type'],
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
      name: `${p}_requests_by_type_avg_time_ms`,
      help: 'Average time per request type over the last 5 minutes, milliseconds',
      labelNames: ['type'],
      registers: [registry],
      collect() {
        const s = snap();
        for (const t of REQUEST_TYPES) this.set({ type: t }, s.byType[t].avgTimeMs);
      },
    });
    this.requestDuration = new LeanHistogram({
      name: `${p}_http_request_duration_seconds`,
      help: 'Request duration in seconds by route, method and status class (operational endpoints excluded)',
      labelNames: ['route', 'method', 'status_class'],
      buckets: DURATION_BUCKETS,
      registers: [registry],
    });
    // Always on (unlike the process metrics' nodejs_eventloop_lag_*): the figure that shows one
    // request holding the process, under a name alerts can rely on in every deployment.
    this.eventLoopDelay = sources.eventLoopDelay ?? monitorEventLoop();
    const loop = this.eventLoopDelay;
    let interval: EventLoopDelayStats = { p99: 0, max: 0 };
    new Gauge({
      name: `${p}_event_loop_delay_max_seconds`,
      help: 'Longest event-loop delay since the previous scrape, seconds (how long the process was held at most)',
      registers: [registry],
      collect() {
        // Registered first of the pair: takes the interval that both report.
        interval = loop.take();
        this.set(interval.max);
      },
    });
    new Gauge({
      name: `${p}_event_loop_delay_p99_seconds`,
      help: '99th percentile of event-loop delay since the previous scrape, seconds',
      registers: [registry],
      collect() {
        this.set(interval.p99);
      },
    });
    if (opts.processMetrics ?? true) collectDefaultMetrics({ register: registry, prefix: `${p}_` });
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
