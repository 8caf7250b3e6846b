/** Alert names. `BackendDown` and `HighErrorRate` are the spec's (§6); routing keys on both. */
export const ALERTS = {
  backendDown: 'BackendDown',
  highErrorRate: 'HighErrorRate',
  highLatency: 'HighLatency',
  lowHealthScore: 'LowHealthScore',
  highTokenSpend: 'HighTokenSpend',
  cacheNearFull: 'CacheNearFull',
  kvstoreFallback: 'KvstoreFallbackActive',
  noTraffic: 'NoTraffic',
  errorBudgetFastBurn: 'ErrorBudgetFastBurn',
  errorBudgetSlowBurn: 'ErrorBudgetSlowBurn',
} as const;

/** One generated alert's name. */
export type AlertName = (typeof ALERTS)[keyof typeof ALERTS];
