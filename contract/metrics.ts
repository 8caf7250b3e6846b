/**
 * Every metric family the service exposes under its own names, with its type and label names:
 * spec §2.1 plus the histograms, rate-limit, kvstore, content-store and event-loop families
 * beyond it. The service registers these names; the rules, the dashboard and the
 * ServiceMonitor's alerts query them. This file is the only place that spells them
 * (`test/contract/metrics.test.ts` checks both sides against it).
 */

/** Metric name prefix (spec: `svc`). */
export const METRIC_PREFIX = 'svc_ai_search';

/**
 * The Node.js runtime families prom-client's default collectors add under our prefix
 * (`svc_ai_search_process_*`, `svc_ai_search_nodejs_*`): named by prom-client, not by us.
 */
export const RUNTIME_METRIC_PREFIXES = [`${METRIC_PREFIX}_process_`, `${METRIC_PREFIX}_nodejs_`] as const;

/** A Prometheus metric type, as the exposition's `# TYPE` line spells it. */
export type MetricType = 'counter' | 'gauge' | 'histogram';

/** One family: its name, type and label names (in registration order). */
export interface MetricFamily {
  readonly name: string;
  readonly type: MetricType;
  readonly labels: readonly string[];
}

/** Every family, keyed by the name code uses for it. */
export const METRIC_FAMILIES = {
  /** counter: every request (operational endpoints excluded). */
  requestsTotal: { name: 'svc_ai_search_requests_total', type: 'counter', labels: [] },
  /** counter: requests with status < 400. */
  requestsSuccessful: { name: 'svc_ai_search_requests_successful', type: 'counter', labels: [] },
  /** counter: requests with status >= 400 (spec's definition of failed). */
  requestsFailed: { name: 'svc_ai_search_requests_failed', type: 'counter', labels: [] },
  /** gauge: success rate, percent. */
  successRate: { name: 'svc_ai_search_success_rate', type: 'gauge', labels: [] },
  /** gauge: average response time, milliseconds. */
  avgResponseTimeMs: { name: 'svc_ai_search_avg_response_time_ms', type: 'gauge', labels: [] },
  /** counter: tokens used by the AI provider. */
  totalTokensUsed: { name: 'svc_ai_search_total_tokens_used', type: 'counter', labels: [] },
  /**
   * counter: the part of `totalTokensUsed` the service estimated with its tokenizer, because the
   * provider reported no usage (or usage that is not a count) for an answer it began.
   */
  tokensEstimatedTotal: { name: 'svc_ai_search_tokens_estimated_total', type: 'counter', labels: [] },
  /** gauge: 0 to 100. */
  healthScore: { name: 'svc_ai_search_health_score', type: 'gauge', labels: [] },
  /** gauge: A=4 … F=0; informational only, no rule uses it. */
  performanceGrade: { name: 'svc_ai_search_performance_grade', type: 'gauge', labels: [] },
  /** gauge: search result cache entries. */
  cacheSize: { name: 'svc_ai_search_cache_size', type: 'gauge', labels: [] },
  /** gauge: most cache entries. */
  cacheMaxSize: { name: 'svc_ai_search_cache_maxsize', type: 'gauge', labels: [] },
  /** gauge: 100 * size / maxsize. */
  cacheUsagePercent: { name: 'svc_ai_search_cache_usage_percent', type: 'gauge', labels: [] },
  /** counter{type}. */
  requestsByTypeTotal: { name: 'svc_ai_search_requests_by_type_total', type: 'counter', labels: ['type'] },
  /** gauge{type}. */
  requestsByTypeAvgTimeMs: { name: 'svc_ai_search_requests_by_type_avg_time_ms', type: 'gauge', labels: ['type'] },
  /** histogram{route,method,status_class}: base name; `_bucket`, `_count`, `_sum` follow. */
  httpRequestDuration: {
    name: 'svc_ai_search_http_request_duration_seconds',
    type: 'histogram',
    labels: ['route', 'method', 'status_class'],
  },
  /** gauge: longest event-loop delay since the previous scrape, seconds. */
  eventLoopDelayMax: { name: 'svc_ai_search_event_loop_delay_max_seconds', type: 'gauge', labels: [] },
  /** gauge: 99th percentile of event-loop delay since the previous scrape, seconds. */
  eventLoopDelayP99: { name: 'svc_ai_search_event_loop_delay_p99_seconds', type: 'gauge', labels: [] },
  /** gauge: longest event-loop delay since the previous scrape in CPU time the event-loop thread spent in it, seconds. */
  eventLoopBusyMax: { name: 'svc_ai_search_event_loop_busy_max_seconds', type: 'gauge', labels: [] },
  /** counter{tier,result}: result is `allowed` or `refused`. */
  rateLimitRequestsTotal: {
    name: 'svc_ai_search_rate_limit_requests_total',
    type: 'counter',
    labels: ['tier', 'result'],
  },
  /** counter{tier}: admitted requests that left the tier near its limit. */
  rateLimitNearLimitTotal: { name: 'svc_ai_search_rate_limit_near_limit_total', type: 'counter', labels: ['tier'] },
  /** counter: failed kvstore commands of the rate limiter. */
  rateLimitStoreErrorsTotal: { name: 'svc_ai_search_rate_limit_store_errors_total', type: 'counter', labels: [] },
  /** gauge{backend}: 1 for the decision store in use, `backend` is `kvstore` or `memory`. */
  rateLimitBackend: { name: 'svc_ai_search_rate_limit_backend', type: 'gauge', labels: ['backend'] },
  /** histogram{backend}: seconds to decide a request (the kvstore round trip included). */
  rateLimitDecision: { name: 'svc_ai_search_rate_limit_decision_seconds', type: 'histogram', labels: ['backend'] },
  /** gauge{store,mode,state}: 1 for each kvstore connection's current state, 0 for the others. */
  kvstoreState: { name: 'svc_ai_search_kvstore_state', type: 'gauge', labels: ['store', 'mode', 'state'] },
  /** counter{store}: keys the store's server evicted (maxmemory reached) while this process watched (INFO stats `evicted_keys`). */
  kvstoreEvictedKeysTotal: { name: 'svc_ai_search_kvstore_evicted_keys_total', type: 'counter', labels: ['store'] },
  /** counter: failed compactions of the DATA_DIR content store (only where the store compacts). */
  contentCompactionFailuresTotal: {
    name: 'svc_ai_search_content_compaction_failures_total',
    type: 'counter',
    labels: [],
  },
  /** gauge{state}: 1 for whether the DATA_DIR content store takes writes (`ok`, `disk_full`, `failing`, `read_only`), 0 for the others; only with the file store. */
  contentWriteState: { name: 'svc_ai_search_content_write_state', type: 'gauge', labels: ['state'] },
  /** gauge{state}: 1 for the current write confirmation (`ok`, `no_replica`, `not_on_disk`); only with content in the kvstore. */
  kvstoreWriteConfirmation: { name: 'svc_ai_search_kvstore_write_confirmation', type: 'gauge', labels: ['state'] },
  /** counter: calls to the embeddings provider (each attempt, retries included); only with an embedder. */
  embeddingCallsTotal: { name: 'svc_ai_search_embedding_calls_total', type: 'counter', labels: [] },
  /** counter{reason}: failed calls to the embeddings provider, by `EMBEDDING_ERROR_REASONS`; only with an embedder. */
  embeddingErrorsTotal: { name: 'svc_ai_search_embedding_errors_total', type: 'counter', labels: ['reason'] },
  /** histogram: seconds of one call to the embeddings provider, failed ones included; only with an embedder. */
  embeddingCallDuration: { name: 'svc_ai_search_embedding_call_duration_seconds', type: 'histogram', labels: [] },
  /** gauge: items stored but not yet embedded at their current version (the backlog); only with an embedder. */
  embeddingsPending: { name: 'svc_ai_search_embeddings_pending', type: 'gauge', labels: [] },
} as const satisfies Record<string, MetricFamily>;

/**
 * The `reason` of a failed embeddings call (`svc_ai_search_embedding_errors_total`), every value
 * always present: `rate_limited` 429; `server_error` 5xx, 408, 409; `client_error` another 4xx;
 * `timeout` no whole answer within `EMBEDDINGS_TIMEOUT_MS`; `network` the provider unreachable or
 * the connection cut; `invalid_answer` an answer that is not the vectors asked for (count,
 * dimensions, non-finite numbers, not JSON); `too_large` an answer past its byte bound.
 */
export const EMBEDDING_ERROR_REASONS = [
  'rate_limited',
  'server_error',
  'client_error',
  'timeout',
  'network',
  'invalid_answer',
  'too_large',
] as const;

/** One reason an embeddings call failed. */
export type EmbeddingErrorReason = (typeof EMBEDDING_ERROR_REASONS)[number];

/** The key of a family in `METRIC_FAMILIES`. */
export type MetricKey = keyof typeof METRIC_FAMILIES;

/** Every family's name by key: `METRICS.requestsTotal` is `'svc_ai_search_requests_total'`. */
export const METRICS = Object.fromEntries(Object.entries(METRIC_FAMILIES).map(([key, f]) => [key, f.name])) as {
  readonly [K in MetricKey]: (typeof METRIC_FAMILIES)[K]['name'];
};

/** Label values the rules select on. */
export const METRIC_LABELS = {
  /** `status_class` of server errors in the histogram: what the availability SLO counts as bad. */
  serverErrorClass: '5xx',
  /** `backend` of the rate-limit gauge when the kvstore is not in use. */
  memoryBackend: 'memory',
  /** `state` of the write-confirmation gauge when the kvstore confirms content writes. */
  writesConfirmed: 'ok',
  /** `state` of the content write-state gauge when the file store takes writes. */
  contentWritesOk: 'ok',
} as const;

/** A letter grade of the service's performance, best first. */
export type PerformanceGrade = 'A' | 'B' | 'C' | 'D' | 'F';

/**
 * How a grade is encoded as the value of `svc_ai_search_performance_grade` (GPA scale): the
 * service sets the gauge from it, the dashboard maps the values back to letters with it.
 */
export const GRADE_VALUES: Readonly<Record<PerformanceGrade, number>> = { A: 4, B: 3, C: 2, D: 1, F: 0 };
