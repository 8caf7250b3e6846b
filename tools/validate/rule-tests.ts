import { durationMs, type Settings } from '../../configs';
import { ALERTS } from '../../charts/generators/alert-names';
import { PIPELINE_JOBS } from '../../charts/generators/names';
import { scopeLabels } from '../../charts/generators/promql';
import { alertingRules, type AlertingRule, type RuleFile } from '../../charts/generators/rule-types';
import { errorBudget } from '../../charts/generators/slo-rules';
import { renderAnnotation } from './go-format';
import { RULES_FILE } from './promtool';
import { storyTests } from './rule-stories';
import type { AlertRuleTest, ExpectedAlert, InputSeries, PromtoolTest, PromtoolTestFile } from './promtool-tests';
import { METRICS, METRIC_LABELS } from '../../contract';
import {
  INTERVAL_MINUTES,
  type Labels,
  podNames,
  PODS,
  seriesIn,
  pipelineSeries,
  counter,
  gauge,
  busyVolume,
  requestCounts,
  latencyBuckets,
} from './rule-test-series';

/** Series that make an alert fire. */
interface Firing {
  /** Input series, given the number of samples (one a minute). */
  readonly series: (samples: number) => InputSeries[];
  /** Labels the alert carries from its expression (besides severity, service, alertname). */
  readonly labels: Readonly<Record<string, string>>;
  /** `$value` once firing and settled, for the annotations. */
  readonly value: number;
  /** Minute from which the condition holds. */
  readonly activeFrom: number;
  /** True when `activeFrom` is the first such minute, so "silent one minute before `for` elapses" is checked too. */
  readonly exact: boolean;
  /** Other alerts that must stay silent meanwhile. */
  readonly quiet?: readonly string[];
}

/** How to make one alert fire and how to keep it silent. */
interface Scenario {
  /** Absent when the settings make the alert impossible; `skipped` says why. */
  readonly firing?: Firing;
  readonly skipped?: string;
  /** Series just on the healthy side of the threshold; absent for the always-firing heartbeat. */
  readonly silent?: (samples: number) => InputSeries[];
}

/** Scenarios for every alert the generators can produce, from the settings' thresholds. */
function scenarios(settings: Settings): Readonly<Record<string, Scenario>> {
  const r = settings.alertRules;
  const scope = scopeLabels(settings);
  const job = scope;
  const series = (metric: string, labels: Labels = {}) => seriesIn(scope, metric, labels);
  const budget = errorBudget(r.sloAvailability);
  const errorRatio = r.errorRateThreshold < 0.5 ? 0.5 : 1;
  const fastRatio = 10 * budget < 1 ? 10 * budget : 6 * budget < 1 ? (6 * budget + 1) / 2 : undefined;
  const slowRatio = 2 * budget < 1 ? 2 * budget : (budget + 1) / 2;
  const {
    requestsFailed,
    requestsTotal,
    healthScore,
    totalTokensUsed,
    cacheUsagePercent,
    rateLimitBackend,
    contentCompactionFailuresTotal,
    contentWriteState,
    kvstoreWriteConfirmation,
    kvstoreEvictedKeysTotal,
    embeddingsPending,
  } = METRICS;
  const busy = busyVolume(settings);
  const replicas = settings.deploy.backendReplicas;
  const { prometheus: prom, alertmanager: am } = PIPELINE_JOBS;
  return {
    [ALERTS.backendDown]: {
      firing: {
        series: (n) => PODS.map((instance) => ({ series: series('up', { instance }), values: gauge(0, n) })),
        labels: job,
        value: 0,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) =>
        PODS.map((instance, i) => ({ series: series('up', { instance }), values: gauge(i === 0 ? 0 : 1, n) })),
    },
    [ALERTS.backendPodDown]: {
      firing: {
        series: (n) =>
          PODS.map((instance, i) => ({ series: series('up', { instance }), values: gauge(i === 0 ? 0 : 1, n) })),
        labels: { ...job, instance: PODS[0] },
        value: 0,
        activeFrom: 0,
        exact: true,
        quiet: [ALERTS.backendDown],
      },
      silent: (n) => PODS.map((instance) => ({ series: series('up', { instance }), values: gauge(1, n) })),
    },
    [ALERTS.backendTargetsMissing]: {
      firing:
        replicas > 1
          ? {
              series: (n) =>
                podNames(replicas - 1).map((instance) => ({ series: series('up', { instance }), values: gauge(1, n) })),
              labels: job,
              value: replicas - 1,
              activeFrom: 0,
              exact: true,
            }
          : undefined,
      skipped: 'BACKEND_REPLICAS=1: no count of targets is below it',
      silent: (n) =>
        podNames(replicas).map((instance) => ({ series: series('up', { instance }), values: gauge(1, n) })),
    },
    [ALERTS.highErrorRate]: {
      firing:
        r.errorRateThreshold < 1
          ? {
              series: (n) => requestCounts(scope, errorRatio, n, busy),
              labels: job,
              value: errorRatio,
              activeFrom: 1,
              exact: true,
            }
          : undefined,
      skipped: 'ALERT_ERROR_RATE_THRESHOLD=1: no error ratio can exceed it',
      silent: (n) => [
        ...requestCounts(scope, r.errorRateThreshold / 2, n, busy),
        // Client errors are not server errors: a scan of 404s beside the traffic.
        {
          series: series(`${METRICS.httpRequestDuration}_count`, {
            route: 'other',
            method: 'GET',
            status_class: '4xx',
          }),
          values: counter(busy, n),
        },
        { series: series(requestsFailed), values: counter(busy, n) },
      ],
    },
    [ALERTS.highLatency]: {
      firing: {
        series: (n) => latencyBuckets(scope, r.latencyP99Seconds, 'above', n),
        labels: { ...job, route: 'search' },
        // histogram_quantile interpolates inside the (threshold, 2 × threshold] bucket.
        value: r.latencyP99Seconds + r.latencyP99Seconds * 0.99,
        activeFrom: 1,
        exact: true,
      },
      silent: (n) => latencyBuckets(scope, r.latencyP99Seconds, 'below', n),
    },
    [ALERTS.lowHealthScore]: {
      firing:
        r.healthScoreMin > 0
          ? {
              series: (n) => [{ series: series(healthScore), values: gauge(r.healthScoreMin / 2, n) }],
              labels: job,
              value: r.healthScoreMin / 2,
              activeFrom: 0,
              exact: true,
            }
          : undefined,
      skipped: 'ALERT_HEALTH_SCORE_MIN=0: no score is below it',
      silent: (n) => [{ series: series(healthScore), values: gauge((r.healthScoreMin + 100) / 2, n) }],
    },
    [ALERTS.highTokenSpend]: {
      firing: {
        series: (n) => [{ series: series(totalTokensUsed), values: counter((2 * r.tokensPerHour) / 60, n) }],
        labels: job,
        value: 2 * r.tokensPerHour,
        // The 1h increase of a young series is extrapolated; by minute 61 the window is whole.
        activeFrom: 61,
        exact: false,
      },
      silent: (n) => [{ series: series(totalTokensUsed), values: counter(r.tokensPerHour / 2 / 60, n) }],
    },
    [ALERTS.cacheNearFull]: {
      firing:
        r.cacheUsagePercent < 100
          ? {
              series: (n) => [{ series: series(cacheUsagePercent), values: gauge((r.cacheUsagePercent + 100) / 2, n) }],
              labels: job,
              value: (r.cacheUsagePercent + 100) / 2,
              activeFrom: 0,
              exact: true,
            }
          : undefined,
      skipped: 'ALERT_CACHE_USAGE_PERCENT=100: no usage is above it',
      silent: (n) => [{ series: series(cacheUsagePercent), values: gauge(r.cacheUsagePercent / 2, n) }],
    },
    [ALERTS.contentCompactionFailing]: {
      firing: {
        // One pod fails a compaction a minute (retries are at most 5 minutes apart); another is fine.
        series: (n) => [
          { series: series(contentCompactionFailuresTotal, { instance: PODS[0] }), values: counter(1, n) },
          { series: series(contentCompactionFailuresTotal, { instance: PODS[1] }), values: gauge(0, n) },
        ],
        labels: { ...job, instance: PODS[0] },
        value: 15,
        // The 15m increase of a young series is extrapolated; by minute 16 the window is whole.
        activeFrom: 16,
        exact: false,
      },
      // Failures long ago (the counter stands still): nothing now.
      silent: (n) =>
        PODS.map((instance) => ({ series: series(contentCompactionFailuresTotal, { instance }), values: gauge(3, n) })),
    },
    [ALERTS.contentWritesRefused]: {
      firing: {
        // One pod's disk is full (a state set: every state present); the other takes writes.
        series: (n) => [
          ...(['ok', 'disk_full', 'failing', 'read_only'] as const).map((state) => ({
            series: series(contentWriteState, { instance: PODS[0], state }),
            values: gauge(state === 'disk_full' ? 1 : 0, n),
          })),
          ...(['ok', 'disk_full', 'failing', 'read_only'] as const).map((state) => ({
            series: series(contentWriteState, { instance: PODS[1], state }),
            values: gauge(state === 'ok' ? 1 : 0, n),
          })),
        ],
        labels: { ...job, instance: PODS[0], state: 'disk_full' },
        value: 1,
        activeFrom: 0,
        exact: true,
      },
      // Every pod takes writes: the other states are all 0.
      silent: (n) =>
        PODS.flatMap((instance) =>
          (['ok', 'disk_full', 'failing', 'read_only'] as const).map((state) => ({
            series: series(contentWriteState, { instance, state }),
            values: gauge(state === 'ok' ? 1 : 0, n),
          })),
        ),
    },
    [ALERTS.kvstoreWritesUnconfirmed]: {
      firing: {
        // One pod finds no replica to confirm its writes (a state set: every state present); the other is fine.
        series: (n) => [
          ...(['ok', 'no_replica', 'not_on_disk'] as const).map((state) => ({
            series: series(kvstoreWriteConfirmation, { instance: PODS[0], state }),
            values: gauge(state === 'no_replica' ? 1 : 0, n),
          })),
          ...(['ok', 'no_replica', 'not_on_disk'] as const).map((state) => ({
            series: series(kvstoreWriteConfirmation, { instance: PODS[1], state }),
            values: gauge(state === 'ok' ? 1 : 0, n),
          })),
        ],
        labels: { ...job, instance: PODS[0], state: 'no_replica' },
        value: 1,
        activeFrom: 0,
        exact: true,
      },
      // Every pod confirmed: the non-ok states are all 0.
      silent: (n) =>
        PODS.flatMap((instance) =>
          (['ok', 'no_replica', 'not_on_disk'] as const).map((state) => ({
            series: series(kvstoreWriteConfirmation, { instance, state }),
            values: gauge(state === 'ok' ? 1 : 0, n),
          })),
        ),
    },
    [ALERTS.kvstoreEvictingKeys]: {
      firing: {
        // Redis evicts a key a minute; both pods watch it and count the same evictions.
        series: (n) => [
          ...PODS.map((instance) => ({
            series: series(kvstoreEvictedKeysTotal, { instance, store: 'kvstore' }),
            values: counter(1, n),
          })),
          ...PODS.map((instance) => ({
            series: series(kvstoreEvictedKeysTotal, { instance, store: 'ratelimit' }),
            values: gauge(0, n),
          })),
        ],
        labels: { ...job, store: 'kvstore' },
        // The max over pods, not their sum: 15 keys in 15m, not 30.
        value: 15,
        // The 15m increase of a young series is extrapolated; by minute 16 the window is whole.
        activeFrom: 16,
        exact: false,
      },
      // Evictions long ago (the counters stand still): nothing now.
      silent: (n) =>
        PODS.map((instance) => ({
          series: series(kvstoreEvictedKeysTotal, { instance, store: 'kvstore' }),
          values: gauge(7, n),
        })),
    },
    [ALERTS.embeddingBacklogNotDraining]: {
      firing: {
        // One pod has 50 items waiting, minute after minute (its provider calls fail); the other none.
        series: (n) => [
          { series: series(embeddingsPending, { instance: PODS[0] }), values: gauge(50, n) },
          { series: series(embeddingsPending, { instance: PODS[1] }), values: gauge(0, n) },
        ],
        labels: { ...job, instance: PODS[0] },
        value: 50,
        // delta() needs two samples: the backlog is "not shrinking" from minute 1.
        activeFrom: 1,
        exact: true,
      },
      // A backlog being worked off (5 items a minute), and an empty one: nothing.
      silent: (n) => [
        { series: series(embeddingsPending, { instance: PODS[0] }), values: `500-5x${n}` },
        { series: series(embeddingsPending, { instance: PODS[1] }), values: gauge(0, n) },
      ],
    },
    [ALERTS.kvstoreFallback]: {
      firing: {
        series: (n) => [
          { series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend }), values: gauge(1, n) },
          { series: series(rateLimitBackend, { backend: 'kvstore' }), values: gauge(0, n) },
        ],
        labels: job,
        value: 1,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) => [
        { series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend }), values: gauge(0, n) },
        { series: series(rateLimitBackend, { backend: 'kvstore' }), values: gauge(1, n) },
      ],
    },
    [ALERTS.rateLimitsNotShared]: {
      firing: {
        series: (n) => [
          {
            series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend, instance: '10.0.1.1:8080' }),
            values: gauge(1, n),
          },
          {
            series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend, instance: '10.0.1.2:8080' }),
            values: gauge(1, n),
          },
        ],
        labels: job,
        value: 2,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) => [
        {
          series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend, instance: '10.0.1.1:8080' }),
          values: gauge(1, n),
        },
        {
          series: series(rateLimitBackend, { backend: METRIC_LABELS.memoryBackend, instance: '10.0.1.2:8080' }),
          values: gauge(0, n),
        },
      ],
    },
    [ALERTS.noTraffic]: {
      firing: {
        series: (n) => [{ series: series(requestsTotal), values: gauge(42, n) }],
        labels: job,
        value: 0,
        activeFrom: 1,
        exact: true,
      },
      silent: (n) => [{ series: series(requestsTotal), values: counter(Math.max(10, r.noTrafficMinRequests), n) }],
    },
    [ALERTS.errorBudgetFastBurn]: {
      firing:
        fastRatio !== undefined
          ? {
              series: (n) => requestCounts(scope, fastRatio, n, busy),
              labels: job,
              value: 0,
              activeFrom: 1,
              exact: true,
            }
          : undefined,
      skipped: 'SLO_AVAILABILITY so low that a 6x burn needs more than 100% errors',
      silent: (n) => requestCounts(scope, budget / 2, n, busy),
    },
    [ALERTS.errorBudgetSlowBurn]: {
      firing: {
        series: (n) => requestCounts(scope, slowRatio, n, busy),
        labels: job,
        value: 0,
        activeFrom: 1,
        exact: true,
        quiet: [ALERTS.errorBudgetFastBurn],
      },
      silent: (n) => requestCounts(scope, budget / 2, n, busy),
    },
    [ALERTS.watchdog]: {
      firing: { series: () => [], labels: {}, value: 1, activeFrom: 0, exact: false },
    },
    [ALERTS.alertmanagerFailedToSend]: {
      firing: {
        series: (n) => [
          {
            series: pipelineSeries(am, 'alertmanager_notifications_failed_total', { integration: 'email' }),
            values: counter(1, n),
          },
        ],
        labels: { job: am, integration: 'email' },
        value: 5,
        activeFrom: 1,
        exact: true,
      },
      silent: (n) => [
        {
          series: pipelineSeries(am, 'alertmanager_notifications_failed_total', { integration: 'email' }),
          values: gauge(3, n),
        },
      ],
    },
    [ALERTS.alertmanagerConfigReloadFailed]: {
      firing: {
        series: (n) => [
          { series: pipelineSeries(am, 'alertmanager_config_last_reload_successful'), values: gauge(0, n) },
        ],
        labels: { job: am },
        value: 0,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) => [
        { series: pipelineSeries(am, 'alertmanager_config_last_reload_successful'), values: gauge(1, n) },
      ],
    },
    [ALERTS.prometheusNotConnectedToAlertmanager]: {
      firing: {
        series: (n) => [
          { series: pipelineSeries(prom, 'prometheus_notifications_alertmanagers_discovered'), values: gauge(0, n) },
        ],
        labels: { job: prom },
        value: 0,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) => [
        { series: pipelineSeries(prom, 'prometheus_notifications_alertmanagers_discovered'), values: gauge(1, n) },
      ],
    },
    [ALERTS.prometheusErrorSendingAlerts]: {
      firing: {
        series: (n) => [
          { series: pipelineSeries(prom, 'prometheus_notifications_errors_total'), values: counter(1, n) },
          { series: pipelineSeries(prom, 'prometheus_notifications_sent_total'), values: counter(10, n) },
        ],
        labels: { job: prom },
        value: 0.1,
        activeFrom: 1,
        exact: true,
      },
      silent: (n) => [
        { series: pipelineSeries(prom, 'prometheus_notifications_errors_total'), values: gauge(2, n) },
        { series: pipelineSeries(prom, 'prometheus_notifications_sent_total'), values: counter(10, n) },
      ],
    },
    [ALERTS.prometheusRuleFailures]: {
      firing: {
        series: (n) => [
          {
            series: pipelineSeries(prom, 'prometheus_rule_evaluation_failures_total', { rule_group: 'g' }),
            values: counter(1, n),
          },
        ],
        labels: { job: prom, rule_group: 'g' },
        value: 5,
        activeFrom: 1,
        exact: true,
      },
      silent: (n) => [
        {
          series: pipelineSeries(prom, 'prometheus_rule_evaluation_failures_total', { rule_group: 'g' }),
          values: gauge(0, n),
        },
      ],
    },
    [ALERTS.prometheusConfigReloadFailed]: {
      firing: {
        series: (n) => [
          { series: pipelineSeries(prom, 'prometheus_config_last_reload_successful'), values: gauge(0, n) },
        ],
        labels: { job: prom },
        value: 0,
        activeFrom: 0,
        exact: true,
      },
      silent: (n) => [
        { series: pipelineSeries(prom, 'prometheus_config_last_reload_successful'), values: gauge(1, n) },
      ],
    },
  };
}

function minutes(duration: string): number {
  return Math.ceil(durationMs(duration) / 60000);
}

function expected(rule: AlertingRule, firing: Firing): ExpectedAlert {
  return {
    exp_labels: { ...firing.labels, ...rule.labels },
    exp_annotations: {
      summary: renderAnnotation(rule.annotations.summary, firing.labels, firing.value),
      description: renderAnnotation(rule.annotations.description, firing.labels, firing.value),
      runbook_url: rule.annotations.runbook_url,
    },
  };
}

/** The unit tests and the alerts that could not be made to fire under these settings. */
export interface RuleUnitTests {
  readonly file: PromtoolTestFile;
  /** `alertname: reason` for each alert with a silent test only. */
  readonly skipped: readonly string[];
}

/**
 * `promtool test rules` tests for every alert in `rules`, built from the same settings: each
 * alert fires (with its exact labels and annotations) once its condition has held for its
 * `for` duration, is still silent a minute before that, and stays silent on healthy series.
 * An alert without a scenario here throws, so a new rule cannot ship untested.
 */
export function ruleUnitTests(settings: Settings, rules: RuleFile): RuleUnitTests {
  const all = scenarios(settings);
  const tests: PromtoolTest[] = [];
  const skipped: string[] = [];
  for (const rule of alertingRules(rules)) {
    const scenario = all[rule.alert];
    if (!scenario)
      throw new Error(`no unit-test scenario for alert ${rule.alert}: add one to charts/validate/rule-tests.ts`);
    const forMinutes = minutes(rule.for);
    const firesAt = (scenario.firing?.activeFrom ?? 1) + forMinutes;
    const late = firesAt + 1;
    const samples = late + 2;
    const interval = `${INTERVAL_MINUTES}m`;
    if (scenario.firing) {
      const f = scenario.firing;
      const checks: AlertRuleTest[] = [];
      if (f.exact && forMinutes > 0)
        checks.push({ eval_time: `${firesAt - 1}m`, alertname: rule.alert, exp_alerts: [] });
      checks.push({ eval_time: `${late}m`, alertname: rule.alert, exp_alerts: [expected(rule, f)] });
      for (const other of f.quiet ?? []) checks.push({ eval_time: `${late}m`, alertname: other, exp_alerts: [] });
      tests.push({
        name: `${rule.alert} fires once its condition has held for ${rule.for}`,
        interval,
        input_series: f.series(samples),
        alert_rule_test: checks,
      });
    } else {
      skipped.push(`${rule.alert}: ${scenario.skipped ?? 'cannot fire'}`);
    }
    if (scenario.silent) {
      tests.push({
        name: `${rule.alert} stays silent on healthy series`,
        interval,
        input_series: scenario.silent(samples),
        alert_rule_test: [{ eval_time: `${late}m`, alertname: rule.alert, exp_alerts: [] }],
      });
    }
  }
  const stories = storyTests(settings, rules);
  tests.push(...stories.tests);
  skipped.push(...stories.skipped);
  return { file: { rule_files: [RULES_FILE], evaluation_interval: `${INTERVAL_MINUTES}m`, tests }, skipped };
}
