/**
 * Metric names the rules query: spec §2.1 plus the histogram, rate-limit and content-store
 * families the service exposes beyond it. The only place that spells them, so a rename in the
 * service is one edit here.
 */
export const METRICS = {
  /** counter: every request (operational endpoints excluded). */
  requestsTotal: 'svc_ai_search_requests_total',
  /** counter: requests with status < 400. */
  requestsSuccessful: 'svc_ai_search_requests_successful',
  /** counter: requests with status >= 400 (spec's definition of failed). */
  requestsFailed: 'svc_ai_search_requests_failed',
  /** gauge: success rate, percent. */
  successRate: 'svc_ai_search_success_rate',
  /** gauge: average response time, milliseconds. */
  avgResponseTimeMs: 'svc_ai_search_avg_response_time_ms',
  /** counter: tokens used by the AI provider. */
  totalTokensUsed: 'svc_ai_search_total_tokens_used',
  /** gauge: 0 to 100. */
  healthScore: 'svc_ai_search_health_score',
  /** gauge: informational only, no rule uses it (its encoding belongs to the service). */
  performanceGrade: 'svc_ai_search_performance_grade',
  /** gauge: search result cache entries. */
  cacheSize: 'svc_ai_search_cache_size',
  /** gauge: most cache entries. */
  cacheMaxSize: 'svc_ai_search_cache_maxsize',
  /** gauge: 100 * size / maxsize. */
  cacheUsagePercent: 'svc_ai_search_cache_usage_percent',
  /** counter{type}. */
  requestsByTypeTotal: 'svc_ai_search_requests_by_type_total',
  /** gauge{type}. */
  requestsByTypeAvgTimeMs: 'svc_ai_search_requests_by_type_avg_time_ms',
  /** histogram{route,method,status_class}: base name; `_bucket`, `_count`, `_sum` follow. */
  httpRequestDuration: 'svc_ai_search_http_request_duration_seconds',
  /** counter{tier,result}: result is `allowed` or `refused`. */
  rateLimitRequestsTotal: 'svc_ai_search_rate_limit_requests_total',
  /** counter{tier}: admitted requests that left the tier near its limit (the dashboard shows them). */
  rateLimitNearLimitTotal: 'svc_ai_search_rate_limit_near_limit_total',
  /** counter: failed kvstore commands of the rate limiter (the dashboard shows them). */
  rateLimitStoreErrorsTotal: 'svc_ai_search_rate_limit_store_errors_total',
  /** gauge{backend}: 1 for the store in use, `backend` is `kvstore` or `memory`. */
  rateLimitBackend: 'svc_ai_search_rate_limit_backend',
  /** counter: failed compactions of the DATA_DIR content store (each retried with backoff; writes unaffected). */
  contentCompactionFailuresTotal: 'svc_ai_search_content_compaction_failures_total',
  /** gauge{state}: 1 for the current write confirmation (`ok`, `no_replica`, `not_on_disk`), 0 for the others; only with content in the kvstore. */
  kvstoreWriteConfirmation: 'svc_ai_search_kvstore_write_confirmation',
} as const;

/** Label values the rules select on. */
export const METRIC_LABELS = {
  /** `status_class` of server errors in the histogram: what the availability SLO counts as bad. */
  serverErrorClass: '5xx',
  /** `backend` of the rate-limit gauge when the kvstore is not in use. */
  memoryBackend: 'memory',
  /** `state` of the write-confirmation gauge when the kvstore confirms content writes. */
  writesConfirmed: 'ok',
} as const;
