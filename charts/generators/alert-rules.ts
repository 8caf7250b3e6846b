import type { Settings } from '../../configs';
import { ALERTS } from './alert-names';
import { percent, promNumber } from './format';
import { pipelineRuleGroup } from './pipeline-rules';
import { scrapesPerPod } from './prometheus-config';
import { AGGREGATION_LABELS as BY, settingsQueries } from './promql';
import { serviceAlert, type AlertingRule, type RuleFile, type RuleGroup } from './rule-types';
import { sloRuleGroup } from './slo-rules';
import { METRICS, METRIC_LABELS, PATHS, SERVICE_NAME } from '../../contract';

/**
 * Look-back windows of the service alerts. Fixed, because they define what a threshold means
 * ("5xx / total over 5m"); the thresholds and `for` durations are settings.
 */
export const RULE_WINDOWS = {
  errorRate: '5m',
  latency: '5m',
  tokenSpend: '1h',
  noTraffic: '10m',
  compactionFailures: '15m',
  evictions: '15m',
  embeddingBacklog: '30m',
} as const;

/**
 * How long the embedding backlog must have stayed above zero without shrinking over its window
 * before EmbeddingBacklogNotDraining: an outage of the provider that retries outlast, not a burst
 * of writes being worked off.
 */
export const EMBEDDING_BACKLOG_FOR = '15m';

/** How long content writes must stay unconfirmed before KvstoreWritesUnconfirmed (a failover takes seconds). */
export const KVSTORE_WRITES_UNCONFIRMED_FOR = '2m';

/**
 * How long a pod's DATA_DIR store must refuse writes before ContentWritesRefused: long enough that
 * a write refused while a background file (catalogue, search segment) briefly held the last
 * space, then written at the next try, does not page; short, because writers get 503 meanwhile.
 */
export const CONTENT_WRITES_REFUSED_FOR = '1m';

/** How long fewer backend targets than replicas must last before BackendTargetsMissing (a rollout takes minutes). */
export const TARGETS_MISSING_FOR = '15m';

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

function availabilityRules(settings: Settings): AlertingRule[] {
  const r = settings.alertRules;
  const runbook = settings.alerting.runbookBaseUrl;
  const q = settingsQueries(settings);
  const up = q.select('up');
  const rules = [
    serviceAlert({
      name: ALERTS.backendDown,
      severity: 'critical',
      runbook,
      expr: `sum by (${BY}) (${up}) == 0\nor\nabsent(${up})`,
      for: r.backendDownFor,
      summary: `${SERVICE_NAME} is down: no pod can be scraped`,
      description:
        `For ${r.backendDownFor} Prometheus has reached no target of job {{ $labels.job }} at ${PATHS.metrics}, ` +
        'or has none to reach: every pod is down or unready, or the metrics path or port is wrong.',
    }),
    serviceAlert({
      name: ALERTS.backendPodDown,
      severity: 'warning',
      runbook,
      expr: `${up} == 0\nand on (${BY})\nsum by (${BY}) (${up}) > 0`,
      for: r.backendPodDownFor,
      summary: 'Backend pod {{ $labels.instance }} is down while others serve',
      description:
        `Prometheus has failed to scrape {{ $labels.instance }} for ${r.backendPodDownFor} (ALERT_BACKEND_POD_DOWN_FOR); ` +
        'other pods of the job still answer, so the service runs with less capacity.',
    }),
  ];
  if (scrapesPerPod(settings)) {
    const want = settings.deploy.backendReplicas;
    rules.push(
      serviceAlert({
        name: ALERTS.backendTargetsMissing,
        severity: 'warning',
        runbook,
        expr: `count by (${BY}) (${up}) < ${want}`,
        for: TARGETS_MISSING_FOR,
        summary: 'Prometheus scrapes fewer backend pods than the deployment runs',
        description:
          `Only {{ $value | humanize }} target(s) of job {{ $labels.job }} have been discovered for ${TARGETS_MISSING_FOR}, ` +
          `fewer than the ${want} replicas (BACKEND_REPLICAS): pods are unready, pending, or missing from the backend-pods Service.`,
      }),
    );
  }
  return rules;
}

/** The service's alerts: the spec's two and those an operator of this service needs. */
export function serviceRuleGroup(settings: Settings): RuleGroup {
  const r = settings.alertRules;
  const w = RULE_WINDOWS;
  const runbook = settings.alerting.runbookBaseUrl;
  const q = settingsQueries(settings);
  const rules: AlertingRule[] = [
    ...availabilityRules(settings),
    serviceAlert({
      name: ALERTS.highErrorRate,
      severity: 'warning',
      runbook,
      expr: `(\n${q.serverErrorRatio(w.errorRate)}\n) > ${promNumber(r.errorRateThreshold)}\n${q.volumeGuard(w.errorRate, r.minRequestsPerHour)}`,
      for: r.errorRateFor,
      summary: `High server error rate on ${SERVICE_NAME}`,
      description:
        `{{ $value | humanizePercentage }} of requests failed with a server error (5xx) over the last ${w.errorRate}, ` +
        `above ${percent(r.errorRateThreshold)} (ALERT_ERROR_RATE_THRESHOLD), while the service averages at least ${promNumber(r.minRequestsPerHour)} ` +
        'requests an hour (ALERT_MIN_REQUESTS_PER_HOUR). Client errors (4xx) are not counted.',
    }),
    serviceAlert({
      name: ALERTS.highLatency,
      severity: 'warning',
      runbook,
      expr: [
        'histogram_quantile(0.99,',
        `  sum by (${BY}, route, le) (rate(${q.select(`${METRICS.httpRequestDuration}_bucket`)}[${w.latency}]))`,
        `) > ${promNumber(r.latencyP99Seconds)}`,
      ].join('\n'),
      for: r.latencyFor,
      summary: `Slow {{ $labels.route }} requests on ${SERVICE_NAME}`,
      description:
        `The p99 latency of {{ $labels.route }} requests is {{ $value | humanize }}s over the last ${w.latency}, ` +
        `above ${promNumber(r.latencyP99Seconds)}s (ALERT_LATENCY_P99_SECONDS).`,
    }),
    serviceAlert({
      name: ALERTS.lowHealthScore,
      // Informational: the score counts client errors (4xx) as failures, so a scanner lowers it.
      severity: 'info',
      runbook,
      expr: `min by (${BY}) (${q.select(METRICS.healthScore)}) < ${promNumber(r.healthScoreMin)}`,
      for: r.healthScoreFor,
      summary: `Health score of ${SERVICE_NAME} is low`,
      description:
        `The lowest health score of a pod is {{ $value | humanize }}, below ${promNumber(r.healthScoreMin)} (ALERT_HEALTH_SCORE_MIN). ` +
        'Informational: the score counts client errors (4xx) as failures; HighErrorRate and the burn-rate alerts judge server errors.',
    }),
    serviceAlert({
      name: ALERTS.highTokenSpend,
      severity: 'warning',
      runbook,
      expr: `sum by (${BY}) (increase(${q.select(METRICS.totalTokensUsed)}[${w.tokenSpend}])) > ${promNumber(r.tokensPerHour)}`,
      for: r.tokenSpendFor,
      summary: `High AI token spend on ${SERVICE_NAME}`,
      description:
        `{{ $value | humanize }} tokens were used by the AI provider in the last hour, ` +
        `above ${promNumber(r.tokensPerHour)} (ALERT_TOKENS_PER_HOUR).`,
    }),
    serviceAlert({
      name: ALERTS.cacheNearFull,
      severity: 'info',
      runbook,
      expr: `max by (${BY}) (${q.select(METRICS.cacheUsagePercent)}) > ${promNumber(r.cacheUsagePercent)}`,
      for: r.cacheFor,
      summary: `Search result cache of ${SERVICE_NAME} is nearly full`,
      description:
        `The search result cache is {{ $value | humanize }}% full, above ${promNumber(r.cacheUsagePercent)}% ` +
        '(ALERT_CACHE_USAGE_PERCENT), so older results are evicted; raise SEARCH_CACHE_SIZE if hit rates suffer.',
    }),
    serviceAlert({
      // Per pod: each DATA_DIR is one pod's disk. The store retries at most 5 minutes apart, so
      // the window sees a failure for as long as it fails; it clears a window after a success.
      name: ALERTS.contentCompactionFailing,
      severity: 'warning',
      runbook,
      expr: `sum by (${BY}, instance) (increase(${q.select(METRICS.contentCompactionFailuresTotal)}[${w.compactionFailures}])) > 0`,
      for: '0m',
      summary: `${SERVICE_NAME} on {{ $labels.instance }} cannot compact its DATA_DIR content store`,
      description:
        `{{ $value | humanize }} compaction(s) of the DATA_DIR content store failed on {{ $labels.instance }} in the last ${w.compactionFailures}. ` +
        'Writes are still stored and answered, into a log that keeps growing; the store retries with backoff (at most 5 minutes apart). ' +
        '/health on the pod gives content.compaction.last_error (ENOSPC: the disk is full; EACCES, EROFS: the folder is not writable).',
    }),
    serviceAlert({
      // Per pod and state: each DATA_DIR is one pod's disk. Only pods with the file store expose
      // the gauge; any state but ok refuses writes with 503 (reads and search go on).
      name: ALERTS.contentWritesRefused,
      severity: 'warning',
      runbook,
      expr: `max by (${BY}, instance, state) (${q.select(METRICS.contentWriteState, `state!="${METRIC_LABELS.contentWritesOk}"`)}) == 1`,
      for: CONTENT_WRITES_REFUSED_FOR,
      summary: `${SERVICE_NAME} on {{ $labels.instance }} refuses content writes ({{ $labels.state }})`,
      description:
        `For ${CONTENT_WRITES_REFUSED_FOR} the DATA_DIR content store on {{ $labels.instance }} has refused writes with 503, storing nothing ` +
        '({{ $labels.state }}: disk_full, its volume has no space left; failing, another write error; read_only, a failed write could not be undone and writes wait for a restart). ' +
        'Everything acknowledged is kept; reads and search go on. Free or grow the volume: writes succeed again without a restart.',
    }),
    serviceAlert({
      // Per pod and state: each pod reports what its own last content write found. Only pods with
      // content in the kvstore expose the gauge; a state other than ok refuses writes with 503.
      name: ALERTS.kvstoreWritesUnconfirmed,
      severity: 'warning',
      runbook,
      expr: `max by (${BY}, instance, state) (${q.select(METRICS.kvstoreWriteConfirmation, `state!="${METRIC_LABELS.writesConfirmed}"`)}) == 1`,
      for: KVSTORE_WRITES_UNCONFIRMED_FOR,
      summary: `${SERVICE_NAME} on {{ $labels.instance }} cannot confirm content writes in the kvstore ({{ $labels.state }})`,
      description:
        `For ${KVSTORE_WRITES_UNCONFIRMED_FOR} the kvstore has not confirmed content writes from {{ $labels.instance }} at KVSTORE_DURABILITY ` +
        '({{ $labels.state }}: no_replica, no replica acknowledged them; not_on_disk, the primary did not confirm them on disk), ' +
        'so the pod refuses writes with 503 (reads still work). Bring a replica back, enable AOF on the kvstore, or choose a lower KVSTORE_DURABILITY.',
    }),
    serviceAlert({
      // Per store, the max over pods: every pod watches the same server and counts the same
      // evictions, so a sum would multiply them by the replicas.
      name: ALERTS.kvstoreEvictingKeys,
      severity: 'warning',
      runbook,
      expr: `max by (${BY}, store) (increase(${q.select(METRICS.kvstoreEvictedKeysTotal)}[${w.evictions}])) > 0`,
      for: '0m',
      summary: `the ${SERVICE_NAME} {{ $labels.store }} store (Redis) is evicting keys for want of memory`,
      description:
        `Redis evicted about {{ $value | humanize }} key(s) of the {{ $labels.store }} store in the last ${w.evictions} (maxmemory reached under an evicting maxmemory-policy). ` +
        'store="kvstore": content keys may be among them; every pod reloads and writes back what it holds (/health content.store_losses), ' +
        'but items acknowledged by pods that are gone are lost. store="ratelimit": some rate limits were reset. ' +
        'Give Redis more memory, or set maxmemory-policy noeviction (or volatile-*) and drop KVSTORE_ACCEPT_EVICTION.',
    }),
  ];
  if (kvstoreFallbackApplies(settings)) {
    rules.push(
      serviceAlert({
        name: ALERTS.kvstoreFallback,
        severity: 'warning',
        runbook,
        expr: `max by (${BY}) (${q.select(METRICS.rateLimitBackend, `backend="${METRIC_LABELS.memoryBackend}"`)}) == 1`,
        for: r.kvstoreFallbackFor,
        summary: `${SERVICE_NAME} rate-limits in memory: the kvstore is unreachable`,
        description:
          `For ${r.kvstoreFallbackFor} the service has enforced rate limits in memory, where each replica counts on its own ` +
          'and clients get up to one limit per replica. ' +
          (settings.deploy.kvstoreDeploy === 'external'
            ? `Check that the external Redis (KVSTORE_MODE=${settings.kvstore.topology.mode}) answers from the backend pods (egress, TLS) and the kvstore-url and kvstore-password keys of the Secret.`
            : 'Check the kvstore pod and the kvstore password on both sides.'),
      }),
      serviceAlert({
        name: ALERTS.rateLimitsNotShared,
        severity: 'warning',
        runbook,
        expr: `sum by (${BY}) (${q.select(METRICS.rateLimitBackend, `backend="${METRIC_LABELS.memoryBackend}"`)}) > 1`,
        for: r.kvstoreFallbackFor,
        summary: `${SERVICE_NAME} rate limits are no longer shared: {{ $value | humanize }} pods decide them in memory`,
        description:
          `For ${r.kvstoreFallbackFor} {{ $value | humanize }} pods have enforced rate limits in memory, each on its own, so the ` +
          'limits the deployment promises are multiplied by that many. The kvstore (standalone, Cluster or Sentinel) is ' +
          'down or refusing the limiter: see KVSTORE_MODE and /health on a pod.',
      }),
    );
  }
  if (settings.embeddings.provider !== 'none') {
    const pending = q.select(METRICS.embeddingsPending);
    rules.push(
      serviceAlert({
        // Per pod: each reports the backlog it sees and works off; one stuck is enough.
        name: ALERTS.embeddingBacklogNotDraining,
        severity: 'warning',
        runbook,
        expr: `max by (${BY}, instance) (min_over_time(${pending}[${w.embeddingBacklog}])) > 0\nand\nmax by (${BY}, instance) (delta(${pending}[${w.embeddingBacklog}])) >= 0`,
        for: EMBEDDING_BACKLOG_FOR,
        summary: `${SERVICE_NAME} on {{ $labels.instance }} has items waiting for embeddings, and the backlog does not drain`,
        description:
          `At least {{ $value | humanize }} item(s) have waited for their vectors on {{ $labels.instance }} throughout the last ${w.embeddingBacklog}, and the backlog has not shrunk, for ${EMBEDDING_BACKLOG_FOR} now. ` +
          'Keyword search serves them; semantic search does not yet. The embeddings provider is failing, refusing (429) or too slow for the writes: ' +
          `see ${METRICS.embeddingErrorsTotal} by reason and the logs ("embeddings call failed").`,
      }),
    );
  }
  if (r.noTrafficEnabled) {
    rules.push(
      serviceAlert({
        name: ALERTS.noTraffic,
        severity: 'info',
        runbook,
        expr: `sum by (${BY}) (increase(${q.select(METRICS.requestsTotal)}[${w.noTraffic}])) < ${promNumber(r.noTrafficMinRequests)}`,
        for: r.noTrafficFor,
        summary: `${SERVICE_NAME} receives (almost) no requests`,
        description:
          `Fewer than ${promNumber(r.noTrafficMinRequests)} request(s) (ALERT_NO_TRAFFIC_MIN_REQUESTS) per ${w.noTraffic} ` +
          `have reached the service for ${r.noTrafficFor} (ALERT_NO_TRAFFIC_FOR) while it is up: check the ingress, DNS and the clients.`,
      }),
    );
  }
  return { name: SERVICE_RULE_GROUP, rules };
}

/**
 * The rule groups of the stack, for either wrapper (the standalone rule ConfigMap, the operator's
 * PrometheusRule): service alerts and the availability SLO's recording rules and burn-rate alerts;
 * in standalone mode also the pipeline's own alerts, which watch the Prometheus and Alertmanager
 * this stack deploys. In operator mode there are none of those: the cluster's monitoring stack
 * (kube-prometheus-stack ships the same mixin alerts and its own Watchdog) watches itself.
 */
export function alertRules(settings: Settings): RuleFile {
  const groups = [serviceRuleGroup(settings), sloRuleGroup(settings)];
  return { groups: settings.deploy.monitoringMode === 'operator' ? groups : [...groups, pipelineRuleGroup(settings)] };
}
