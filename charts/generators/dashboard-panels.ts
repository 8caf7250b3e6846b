import type { Settings } from '../../configs';
import { RULE_WINDOWS } from './alert-rules';
import { promNumber } from './format';
import { settingsQueries } from './promql';
import { BURN_RATE_ALERTS, errorBudget } from './slo-rules';
import { GRADE_VALUES, METRICS, METRIC_LABELS } from '../../contract';

/** Grafana's rate window macro: at least four scrape intervals, whatever the zoom. */
export const RATE_INTERVAL = '$__rate_interval';

/** One query of a panel. */
export interface PanelQuery {
  /** PromQL; may hold `RATE_INTERVAL`. */
  readonly expr: string;
  /** Legend, in Grafana's `{{label}}` form. */
  readonly legend: string;
}

/**
 * Coloured thresholds of a panel: `above` turns red at or over each value (green below the
 * first); `below` is red under the first value and green from it.
 */
export interface PanelThresholds {
  readonly direction: 'above' | 'below';
  /** Ascending values; the last one is red, earlier ones orange. */
  readonly values: readonly number[];
  /** Where the number comes from, for the panel's description (e.g. `ALERT_LATENCY_P99_SECONDS`). */
  readonly source: string;
}

/** One panel, before layout. */
export interface PanelSpec {
  readonly title: string;
  readonly description: string;
  readonly kind: 'timeseries' | 'stat';
  /** Grafana unit id: `reqps`, `s`, `percent`, `percentunit`, `short`, `none`. */
  readonly unit: string;
  readonly queries: readonly PanelQuery[];
  readonly thresholds?: PanelThresholds;
  /** Value → text (the performance grade's letters). */
  readonly valueText?: Readonly<Record<string, string>>;
  /** Panel width in grid columns (of 24). @default 12 */
  readonly span?: number;
}

/** A titled row of panels. */
export interface DashboardRow {
  readonly title: string;
  readonly panels: readonly PanelSpec[];
}

/** The letter of each value of `svc_ai_search_performance_grade`: `GRADE_VALUES` read backwards. */
export const GRADE_TEXT: Readonly<Record<string, string>> = Object.fromEntries(
  Object.entries(GRADE_VALUES).map(([letter, value]) => [String(value), letter]),
);

/**
 * The dashboard's panels from settings: every query scoped like the rules (the job, plus the
 * namespace in operator mode), every threshold the number the matching alert uses. Each of the
 * spec's 13 `svc_ai_search_*` families (§2.1) appears in at least one query.
 */
export function dashboardPanels(settings: Settings): DashboardRow[] {
  const q = settingsQueries(settings);
  const r = settings.alertRules;
  const w = RATE_INTERVAL;
  const m = METRICS;
  const by = (labels: string, expr: string) => `sum by (${labels}) (${expr})`;
  const rate = (metric: string, extra = '') => `rate(${q.select(metric, extra)}[${w}])`;
  const count = `${m.httpRequestDuration}_count`;
  const bucket = `${m.httpRequestDuration}_bucket`;
  const budget = errorBudget(r.sloAvailability);
  // 1 - good/all rather than bad/all: a service without a single 5xx shows 0, not "No data".
  const serverErrorRatio = (window: string) =>
    `1 - (${by('job', `rate(${q.select(count, `status_class!="${METRIC_LABELS.serverErrorClass}"`)}[${window}])`)} / ${by('job', `rate(${q.select(count)}[${window}])`)})`;
  const burnFactors = [...new Set(BURN_RATE_ALERTS.flatMap((a) => a.windows.map((x) => x.factor)))].sort(
    (a, b) => a - b,
  );
  const burnWindows = BURN_RATE_ALERTS.flatMap((a) => a.windows.map((x) => x.long));

  const rows: DashboardRow[] = [
    {
      title: 'Traffic and errors',
      panels: [
        {
          title: 'Requests per second',
          description:
            'All requests, successful (status < 400) and failed (status >= 400), from the spec counters, summed over pods.',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [
            { expr: by('job', rate(m.requestsTotal)), legend: 'total' },
            { expr: by('job', rate(m.requestsSuccessful)), legend: 'successful' },
            { expr: by('job', rate(m.requestsFailed)), legend: 'failed' },
          ],
        },
        {
          title: 'Requests per second by type',
          description: 'Requests per request type (search, chat, ingest, ...).',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [{ expr: by('type', rate(m.requestsByTypeTotal)), legend: '{{type}}' }],
        },
        {
          title: 'Errors per second by status class and route',
          description:
            'Client (4xx, rate-limit refusals included) and server (5xx) errors, from the request histogram.',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [
            {
              expr: by('status_class, route', rate(count, 'status_class=~"4xx|5xx"')),
              legend: '{{status_class}} {{route}}',
            },
          ],
        },
        {
          title: 'Server error ratio (HighErrorRate)',
          description: `5xx / all requests over 5m, the HighErrorRate alert's expression; red from ${promNumber(r.errorRateThreshold)} (ALERT_ERROR_RATE_THRESHOLD).`,
          kind: 'timeseries',
          unit: 'percentunit',
          queries: [{ expr: serverErrorRatio('5m'), legend: '5xx ratio' }],
          thresholds: { direction: 'above', values: [r.errorRateThreshold], source: 'ALERT_ERROR_RATE_THRESHOLD' },
        },
        {
          title: 'Success rate',
          description: `${METRICS.successRate} per pod: 100 * successful / total (4xx count as failures).`,
          kind: 'timeseries',
          unit: 'percent',
          queries: [{ expr: `min by (instance) (${q.select(m.successRate)})`, legend: '{{instance}}' }],
        },
      ],
    },
    {
      title: 'Latency',
      panels: [
        {
          title: 'Latency percentiles',
          description: `p50, p90 and p99 from the request histogram, summed over pods; red from ${promNumber(r.latencyP99Seconds)}s (ALERT_LATENCY_P99_SECONDS, HighLatency's p99 threshold).`,
          kind: 'timeseries',
          unit: 's',
          queries: [0.5, 0.9, 0.99].map((p) => ({
            expr: `histogram_quantile(${p}, ${by('le', rate(bucket))})`,
            legend: `p${Math.round(p * 100)}`,
          })),
          thresholds: { direction: 'above', values: [r.latencyP99Seconds], source: 'ALERT_LATENCY_P99_SECONDS' },
        },
        {
          title: 'Average response time',
          description: `${METRICS.avgResponseTimeMs} per pod (last 5 minutes) and ${METRICS.requestsByTypeAvgTimeMs} per type (worst pod).`,
          kind: 'timeseries',
          unit: 'ms',
          queries: [
            { expr: `max by (instance) (${q.select(m.avgResponseTimeMs)})`, legend: 'all {{instance}}' },
            { expr: `max by (type) (${q.select(m.requestsByTypeAvgTimeMs)})`, legend: '{{type}}' },
          ],
        },
      ],
    },
    {
      title: 'Health',
      panels: [
        {
          title: 'Health score',
          description: `${METRICS.healthScore} of the worst pod; red below ${promNumber(r.healthScoreMin)} (ALERT_HEALTH_SCORE_MIN, LowHealthScore).`,
          kind: 'stat',
          unit: 'none',
          queries: [{ expr: `min by (job) (${q.select(m.healthScore)})`, legend: 'score' }],
          thresholds: { direction: 'below', values: [r.healthScoreMin], source: 'ALERT_HEALTH_SCORE_MIN' },
          span: 6,
        },
        {
          title: 'Performance grade',
          description: `${METRICS.performanceGrade} of the worst pod, A (4) to F (0).`,
          kind: 'stat',
          unit: 'none',
          queries: [{ expr: `min by (job) (${q.select(m.performanceGrade)})`, legend: 'grade' }],
          valueText: GRADE_TEXT,
          span: 6,
        },
        {
          title: 'AI tokens per hour (HighTokenSpend)',
          description: `Tokens used by the AI provider over the last hour, and the part of them the service estimated itself (${METRICS.tokensEstimatedTotal}: no usable usage reported); red from ${promNumber(r.tokensPerHour)} (ALERT_TOKENS_PER_HOUR).`,
          kind: 'timeseries',
          unit: 'short',
          queries: [
            {
              expr: by('job', `increase(${q.select(m.totalTokensUsed)}[${RULE_WINDOWS.tokenSpend}])`),
              legend: 'tokens / h',
            },
            // The part the service counted itself (the provider reported no usable usage): a bill to check.
            {
              expr: by('job', `increase(${q.select(m.tokensEstimatedTotal)}[${RULE_WINDOWS.tokenSpend}])`),
              legend: 'estimated / h',
            },
          ],
          thresholds: { direction: 'above', values: [r.tokensPerHour], source: 'ALERT_TOKENS_PER_HOUR' },
        },
      ],
    },
    {
      title: 'Search cache',
      panels: [
        {
          title: 'Cache entries',
          description: `${METRICS.cacheSize} and ${METRICS.cacheMaxSize} per pod.`,
          kind: 'timeseries',
          unit: 'short',
          queries: [
            { expr: `max by (instance) (${q.select(m.cacheSize)})`, legend: 'size {{instance}}' },
            { expr: `max by (instance) (${q.select(m.cacheMaxSize)})`, legend: 'max {{instance}}' },
          ],
        },
        {
          title: 'Cache usage (CacheNearFull)',
          description: `${METRICS.cacheUsagePercent} per pod; red from ${promNumber(r.cacheUsagePercent)}% (ALERT_CACHE_USAGE_PERCENT).`,
          kind: 'timeseries',
          unit: 'percent',
          queries: [{ expr: `max by (instance) (${q.select(m.cacheUsagePercent)})`, legend: '{{instance}}' }],
          thresholds: { direction: 'above', values: [r.cacheUsagePercent], source: 'ALERT_CACHE_USAGE_PERCENT' },
        },
      ],
    },
    {
      title: 'Rate limiting and kvstore',
      panels: [
        {
          title: 'Rate-limit decisions by tier',
          description:
            'Allowed and refused decisions per second, per tier (each tier that applies to a request decides once).',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [{ expr: by('tier, result', rate(m.rateLimitRequestsTotal)), legend: '{{tier}} {{result}}' }],
        },
        {
          title: 'Near the limit, by tier',
          description:
            'Admitted requests that left their tier at or above RATE_LIMIT_ALERT_THRESHOLD usage, per second.',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [{ expr: by('tier', rate(m.rateLimitNearLimitTotal)), legend: '{{tier}}' }],
        },
        {
          title: 'Rate-limit store (KvstoreFallbackActive)',
          description:
            'Which store decides per pod (1 = in use): memory means the kvstore is unreachable; and failed kvstore commands per second.',
          kind: 'timeseries',
          unit: 'short',
          queries: [
            {
              expr: `max by (instance, backend) (${q.select(m.rateLimitBackend)})`,
              legend: '{{backend}} {{instance}}',
            },
            { expr: by('job', rate(m.rateLimitStoreErrorsTotal)), legend: 'kvstore errors / s' },
          ],
        },
        {
          title: 'Kvstore evictions (KvstoreEvictingKeys)',
          description: `Keys each kvstore evicted for want of memory over the alert's window, ${RULE_WINDOWS.evictions} (${METRICS.kvstoreEvictedKeysTotal}, the worst pod's view): content keys among them are reloaded and written back; rate-limit windows may reset.`,
          kind: 'timeseries',
          unit: 'short',
          queries: [
            {
              expr: `max by (store) (increase(${q.select(m.kvstoreEvictedKeysTotal)}[${RULE_WINDOWS.evictions}]))`,
              legend: '{{store}}',
            },
          ],
        },
      ],
    },
    {
      title: 'Per pod',
      panels: [
        {
          title: 'Targets up (BackendDown, BackendTargetsMissing)',
          description: `Scraped backend pods that answer; ${settings.deploy.backendReplicas} expected (BACKEND_REPLICAS).`,
          kind: 'timeseries',
          unit: 'short',
          queries: [{ expr: `sum by (job) (${q.select('up')})`, legend: 'up' }],
          thresholds: { direction: 'below', values: [settings.deploy.backendReplicas], source: 'BACKEND_REPLICAS' },
        },
        {
          title: 'Requests per second per pod',
          description: 'Each pod is its own target: uneven lines mean uneven load or a pod out of the Service.',
          kind: 'timeseries',
          unit: 'reqps',
          queries: [{ expr: by('instance', rate(m.requestsTotal)), legend: '{{instance}}' }],
        },
        {
          title: 'Health score per pod',
          description: `${METRICS.healthScore} of each pod.`,
          kind: 'timeseries',
          unit: 'none',
          queries: [{ expr: `min by (instance) (${q.select(m.healthScore)})`, legend: '{{instance}}' }],
          thresholds: { direction: 'below', values: [r.healthScoreMin], source: 'ALERT_HEALTH_SCORE_MIN' },
        },
      ],
    },
    {
      title: `Availability SLO ${promNumber(r.sloAvailability * 100)}%`,
      panels: [
        {
          title: 'Error budget left (30 days)',
          description: `1 - (5xx ratio over 30 days / error budget ${promNumber(budget)}), from SLO_AVAILABILITY; red at 0.`,
          kind: 'stat',
          unit: 'percentunit',
          queries: [{ expr: `1 - (${serverErrorRatio('30d')}) / ${promNumber(budget)}`, legend: 'budget left' }],
          thresholds: { direction: 'below', values: [0], source: 'SLO_AVAILABILITY' },
          span: 8,
        },
        {
          title: 'Burn rate by window',
          description:
            `5xx ratio / error budget over the burn-rate alerts' long windows; ${burnFactors.map(promNumber).join(', ')} are their thresholds ` +
            '(ErrorBudgetFastBurn pages at 14.4 over 1h or 6 over 6h, ErrorBudgetSlowBurn at 3 over 1d or 1 over 3d).',
          kind: 'timeseries',
          unit: 'short',
          queries: burnWindows.map((win) => ({
            expr: `(${serverErrorRatio(win)}) / ${promNumber(budget)}`,
            legend: win,
          })),
          thresholds: { direction: 'above', values: burnFactors, source: 'SLO_AVAILABILITY and the burn-rate table' },
          span: 16,
        },
      ],
    },
  ];
  return settings.embeddings.provider === 'none' ? rows : [...rows, embeddingsRow(settings)];
}

/** The embedder's row (issue 41), only with one configured: calls and errors, call latency, the backlog. */
function embeddingsRow(settings: Settings): DashboardRow {
  const q = settingsQueries(settings);
  const m = METRICS;
  const rate = (metric: string) => `rate(${q.select(metric)}[${RATE_INTERVAL}])`;
  const quantile = (p: number) =>
    `histogram_quantile(${p}, sum by (job, le) (${rate(`${m.embeddingCallDuration}_bucket`)}))`;
  return {
    title: 'Embeddings',
    panels: [
      {
        title: 'Embedding calls and errors',
        description: `Calls to the embeddings provider per second (${m.embeddingCallsTotal}, retries included) and failed ones by reason (${m.embeddingErrorsTotal}).`,
        kind: 'timeseries',
        unit: 'reqps',
        queries: [
          { expr: `sum by (job) (${rate(m.embeddingCallsTotal)})`, legend: 'calls' },
          { expr: `sum by (reason) (${rate(m.embeddingErrorsTotal)})`, legend: 'error {{reason}}' },
        ],
      },
      {
        title: 'Embedding call latency',
        description: `p50 and p99 of ${m.embeddingCallDuration}, failed calls included (EMBEDDINGS_TIMEOUT_MS ends a call).`,
        kind: 'timeseries',
        unit: 's',
        queries: [
          { expr: quantile(0.5), legend: 'p50' },
          { expr: quantile(0.99), legend: 'p99' },
        ],
        span: 6,
      },
      {
        title: 'Embeddings pending (EmbeddingBacklogNotDraining)',
        description: `${m.embeddingsPending}: items stored but not yet embedded at their current version; semantic search serves them once embedded.`,
        kind: 'timeseries',
        unit: 'short',
        queries: [{ expr: `max by (job) (${q.select(m.embeddingsPending)})`, legend: 'pending' }],
        span: 6,
      },
    ],
  };
}
