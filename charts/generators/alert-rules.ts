import type { Settings } from '../../configs';
import { ALERTS } from './alert-names';
import { percent, promNumber } from './format';
import { METRIC_LABELS, METRICS } from './metric-names';
import { METRICS_PATH, SERVICE_NAME } from './names';
import { jobSelector } from './promql';
import { serviceAlert, type AlertingRule, type RuleFile, type RuleGroup } from './rule-types';
import { sloRuleGroup } from './slo-rules';

/**
 * Look-back windows of the service alerts. Fixed, because they define what a threshold means
 * ("failed / total over 5m"); the thresholds and `for` durations are settings.
 */
export const RULE_WINDOWS = { errorRate: '5m', latency: '5m', tokenSpend: '1h', noTraffic: '10m' } as const;

/** Name of the group of service alerts. */
export const SERVICE_RULE_GROUP = `${SERVICE_NAME}.alerts`;

/**
 * True when the deployed service has a kvstore and reports which rate-limit store it uses, so
 * "running on memory" means "the kvstore is unreachable" rather than "there is no kvstore".
 */
export function kvstoreFallbackApplies(settings: Settings): boolean {
  const rl = settings.rateLimit;
  return rl.enabled && rl.enableMetrics && rl.effective.storeUrl !== undefined;
}

/** The service's alerts: the spec's two and those an operator of this service needs. */
export function serviceRuleGroup(settings: Settings): RuleGroup {
  const r = settings.alertRules;
  const w = RULE_WINDOWS;
  const rules: AlertingRule[] = [
    serviceAlert({
      name: ALERTS.backendDown,
      severity: 'critical',
      expr: `${jobSelector('up')} == 0`,
      for: r.backendDownFor,
      summary: 'Backend target {{ $labels.instance }} is down',
      description:
        `Prometheus has failed to scrape {{ $labels.instance }} (job {{ $labels.job }}, path ${METRICS_PATH}) ` +
        `for ${r.backendDownFor}: the service is unreachable, or its metrics path or port is wrong.`,
    }),
    serviceAlert({
      name: ALERTS.highErrorRate,
      severity: 'warning',
      expr: [
        `sum by (job) (rate(${jobSelector(METRICS.requestsFailed)}[${w.errorRate}]))`,
        '/',
        `sum by (job) (rate(${jobSelector(METRICS.requestsTotal)}[${w.errorRate}]))`,
        `> ${promNumber(r.errorRateThreshold)}`,
      ].join('\n'),
      for: r.errorRateFor,
      summary: 'High error rate on svc-ai-search-backend',
      description:
        `{{ $value | humanizePercentage }} of requests failed (status >= 400) over the last ${w.errorRate}, ` +
        `above ${percent(r.errorRateThreshold)} (ALERT_ERROR_RATE_THRESHOLD).`,
    }),
    serviceAlert({
      name: ALERTS.highLatency,
      severity: 'warning',
      expr: [
        'histogram_quantile(0.99,',
        `  sum by (job, route, le) (rate(${jobSelector(`${METRICS.httpRequestDuration}_bucket`)}[${w.latency}]))`,
        `) > ${promNumber(r.latencyP99Seconds)}`,
      ].join('\n'),
      for: r.latencyFor,
      summary: 'Slow {{ $labels.route }} requests on svc-ai-search-backend',
      description:
        `The p99 latency of {{ $labels.route }} requests is {{ $value | humanize }}s over the last ${w.latency}, ` +
        `above ${promNumber(r.latencyP99Seconds)}s (ALERT_LATENCY_P99_SECONDS).`,
    }),
    serviceAlert({
      name: ALERTS.lowHealthScore,
      severity: 'warning',
      expr: `min by (job) (${jobSelector(METRICS.healthScore)}) < ${promNumber(r.healthScoreMin)}`,
      for: r.healthScoreFor,
      summary: 'Health score of svc-ai-search-backend is low',
      description:
        `The health score is {{ $value | humanize }}, below ${promNumber(r.healthScoreMin)} (ALERT_HEALTH_SCORE_MIN): ` +
        'check the error rate, the latency and the kvstore.',
    }),
    serviceAlert({
      name: ALERTS.highTokenSpend,
      severity: 'warning',
      expr: `sum by (job) (increase(${jobSelector(METRICS.totalTokensUsed)}[${w.tokenSpend}])) > ${promNumber(r.tokensPerHour)}`,
      for: r.tokenSpendFor,
      summary: 'High AI token spend on svc-ai-search-backend',
      description:
        `{{ $value | humanize }} tokens were used by the AI provider in the last hour, ` +
        `above ${promNumber(r.tokensPerHour)} (ALERT_TOKENS_PER_HOUR).`,
    }),
    serviceAlert({
      name: ALERTS.cacheNearFull,
      severity: 'info',
      expr: `max by (job) (${jobSelector(METRICS.cacheUsagePercent)}) > ${promNumber(r.cacheUsagePercent)}`,
      for: r.cacheFor,
      summary: 'Search result cache of svc-ai-search-backend is nearly full',
      description:
        `The search result cache is {{ $value | humanize }}% full, above ${promNumber(r.cacheUsagePercent)}% ` +
        '(ALERT_CACHE_USAGE_PERCENT), so older results are evicted; raise SEARCH_CACHE_SIZE if hit rates suffer.',
    }),
  ];
  if (kvstoreFallbackApplies(settings)) {
    rules.push(
      serviceAlert({
        name: ALERTS.kvstoreFallback,
        severity: 'warning',
        expr: `max by (job) (${jobSelector(METRICS.rateLimitBackend, `backend="${METRIC_LABELS.memoryBackend}"`)}) == 1`,
        for: r.kvstoreFallbackFor,
        summary: 'svc-ai-search-backend rate-limits in memory: the kvstore is unreachable',
        description:
          `For ${r.kvstoreFallbackFor} the service has enforced rate limits in memory, where each replica counts on its own ` +
          'and clients get up to one limit per replica. Check the kvstore pod and the kvstore password on both sides.',
      }),
    );
  }
  rules.push(
    serviceAlert({
      name: ALERTS.noTraffic,
      severity: 'info',
      expr: `sum by (job) (increase(${jobSelector(METRICS.requestsTotal)}[${w.noTraffic}])) == 0`,
      for: r.noTrafficFor,
      summary: 'svc-ai-search-backend receives no requests',
      description:
        `No request has reached the service for ${w.noTraffic} plus ${r.noTrafficFor} (ALERT_NO_TRAFFIC_FOR) while it is up: ` +
        'check the ingress, DNS and the clients.',
    }),
  );
  return { name: SERVICE_RULE_GROUP, rules };
}

/** The whole rule file: service alerts, then the availability SLO's recording rules and burn-rate alerts. */
export function alertRules(settings: Settings): RuleFile {
  return { groups: [serviceRuleGroup(settings), sloRuleGroup(settings)] };
}
