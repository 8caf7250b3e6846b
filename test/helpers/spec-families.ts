/** The 13 `svc_ai_search_*` metric families of spec §2.1, spelled as the spec spells them. */
export const SPEC_FAMILIES: readonly string[] = [
  'svc_ai_search_requests_total',
  'svc_ai_search_requests_successful',
  'svc_ai_search_requests_failed',
  'svc_ai_search_success_rate',
  'svc_ai_search_avg_response_time_ms',
  'svc_ai_search_total_tokens_used',
  'svc_ai_search_health_score',
  'svc_ai_search_performance_grade',
  'svc_ai_search_cache_size',
  'svc_ai_search_cache_maxsize',
  'svc_ai_search_cache_usage_percent',
  'svc_ai_search_requests_by_type_total',
  'svc_ai_search_requests_by_type_avg_time_ms',
];
