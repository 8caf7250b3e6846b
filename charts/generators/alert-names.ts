/** Alert names. `BackendDown` and `HighErrorRate` are the spec's (§6); routing keys on both. */
export const ALERTS = {
  backendDown: 'BackendDown',
  backendPodDown: 'BackendPodDown',
  backendTargetsMissing: 'BackendTargetsMissing',
  highErrorRate: 'HighErrorRate',
  highLatency: 'HighLatency',
  lowHealthScore: 'LowHealthScore',
  highTokenSpend: 'HighTokenSpend',
  cacheNearFull: 'CacheNearFull',
  kvstoreFallback: 'KvstoreFallbackActive',
  /** More than one pod decides rate limits in memory: the limits are no longer shared. */
  rateLimitsNotShared: 'RateLimitsNotShared',
  /** The DATA_DIR content store's compaction fails (writes still succeed; the log grows). */
  contentCompactionFailing: 'ContentCompactionFailing',
  /** The DATA_DIR content store refuses writes (a full disk, or another write error) with 503. */
  contentWritesRefused: 'ContentWritesRefused',
  /** Content writes into the kvstore are not confirmed at KVSTORE_DURABILITY (and refused with 503). */
  kvstoreWritesUnconfirmed: 'KvstoreWritesUnconfirmed',
  /** The kvstore evicted keys for want of memory (content is reloaded and written back; limits may reset). */
  kvstoreEvictingKeys: 'KvstoreEvictingKeys',
  /** Items wait for their vectors and the backlog does not shrink (only with an embedder). */
  embeddingBacklogNotDraining: 'EmbeddingBacklogNotDraining',
  noTraffic: 'NoTraffic',
  errorBudgetFastBurn: 'ErrorBudgetFastBurn',
  errorBudgetSlowBurn: 'ErrorBudgetSlowBurn',
  /** Always firing: proves the pipeline delivers (the mixins' dead man's switch). */
  watchdog: 'Watchdog',
  alertmanagerFailedToSend: 'AlertmanagerFailedToSendNotifications',
  alertmanagerConfigReloadFailed: 'AlertmanagerConfigReloadFailed',
  prometheusNotConnectedToAlertmanager: 'PrometheusNotConnectedToAlertmanager',
  prometheusErrorSendingAlerts: 'PrometheusErrorSendingAlerts',
  prometheusRuleFailures: 'PrometheusRuleEvaluationFailures',
  prometheusConfigReloadFailed: 'PrometheusConfigReloadFailed',
} as const;

/** One generated alert's name. */
export type AlertName = (typeof ALERTS)[keyof typeof ALERTS];
