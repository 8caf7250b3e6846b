import { durationMs, type Settings } from '../../configs';
import { ALERTS } from '../../charts/generators/alert-names';
import { promNumber } from '../../charts/generators/format';
import { scopeLabels } from '../../charts/generators/promql';
import { alertingRules, type AlertingRule, type RuleFile } from '../../charts/generators/rule-types';
import { BURN_RATE_ALERTS, errorBudget } from '../../charts/generators/slo-rules';
import { renderAnnotation } from './go-format';
import type { AlertRuleTest, InputSeries, PromtoolTest } from './promtool-tests';
import { METRICS, SCRAPE_JOB } from '../../contract';

/** The stories of issue 10 as promtool tests, and the ones these settings make impossible. */
export interface StoryTests {
  readonly tests: readonly PromtoolTest[];
  readonly skipped: readonly string[];
}

const COUNT = `${METRICS.httpRequestDuration}_count`;

function sel(metric: string, labels: Readonly<Record<string, string>>): string {
  const all = { job: SCRAPE_JOB, ...labels };
  return `${metric}{${Object.entries(all)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
}

/** A counter starting at `start`, growing by `step` a minute, for `n` minutes. */
function grows(start: number, step: number, n: number): string {
  return `${promNumber(start)}+${promNumber(step)}x${n}`;
}

/** One pod's request histogram counts, a minute at a time. */
function podRequests(instance: string, n: number, perClass: Readonly<Record<string, string>>): InputSeries[] {
  return Object.entries(perClass).map(([statusClass, values]) => ({
    series: sel(COUNT, { instance, route: 'search', method: 'GET', status_class: statusClass }),
    values: values.replace('{n}', String(n)),
  }));
}

function up(pods: readonly string[], n: number, value: (i: number) => number = () => 1): InputSeries[] {
  return pods.map((instance, i) => ({ series: sel('up', { instance }), values: `${value(i)}+0x${n}` }));
}

/** "At each of `times`, none of these alerts fires." */
function silence(names: readonly string[], times: readonly number[]): AlertRuleTest[] {
  return times.flatMap((t) => names.map((alertname) => ({ eval_time: `${t}m`, alertname, exp_alerts: [] })));
}

function fires(rule: AlertingRule, t: number, labels: Readonly<Record<string, string>>, value: number): AlertRuleTest {
  return {
    eval_time: `${t}m`,
    alertname: rule.alert,
    exp_alerts: [
      {
        exp_labels: { ...labels, ...rule.labels },
        exp_annotations: {
          summary: renderAnnotation(rule.annotations.summary, labels, value),
          description: renderAnnotation(rule.annotations.description, labels, value),
          runbook_url: rule.annotations.runbook_url,
        },
      },
    ],
  };
}

/**
 * The issue's stories, on two or more pods that are each their own target: what used to page
 * for nothing (interleaved counters, a quiet site with one 500, a 404 scanner, a fresh deploy
 * without traffic) fires no warning or critical alert; the real failures (half of all requests
 * 5xx, every pod down, one pod down) fire the alerts that name them, and only those.
 */
export function storyTests(settings: Settings, rules: RuleFile): StoryTests {
  const all = alertingRules(rules);
  const byName = new Map(all.map((r) => [r.alert, r]));
  const loud = all
    .filter((r) => r.labels.severity === 'warning' || r.labels.severity === 'critical')
    .map((r) => r.alert);
  const pods = Array.from({ length: Math.max(2, settings.deploy.backendReplicas) }, (_, i) => `10.0.1.${i + 1}:8080`);
  const job = scopeLabels(settings);
  /** A minute well after `rule` has held for its `for`, when it started holding at `from`. */
  const after = (rule: AlertingRule, from = 1) => from + Math.ceil(durationMs(rule.for) / 60000) + 5;
  // Well under ALERT_TOKENS_PER_HOUR summed over the pods: the spend of a normal hour.
  const tokenStep = settings.alertRules.tokensPerHour / 60 / 10 / pods.length;
  const tests: PromtoolTest[] = [];
  const skipped: string[] = [];
  const interval = '1m';

  // Pod 0 carries 500 failures and 30M tokens from before; since then every pod serves successes only.
  const n1 = 180;
  tests.push({
    name: 'story: one target per pod, one pod with old failures, all serving successes: nothing fires',
    interval,
    input_series: [
      ...up(pods, n1),
      ...pods.flatMap((p, i) =>
        podRequests(p, n1, { '2xx': grows(i === 0 ? 5000 : 0, 60, n1), '5xx': grows(i === 0 ? 500 : 0, 0, n1) }),
      ),
      ...pods.map((p, i) => ({
        series: sel(METRICS.requestsFailed, { instance: p }),
        values: grows(i === 0 ? 500 : 0, 0, n1),
      })),
      ...pods.map((p, i) => ({
        series: sel(METRICS.totalTokensUsed, { instance: p }),
        values: grows(i === 0 ? 30e6 : 0, tokenStep, n1),
      })),
    ],
    alert_rule_test: silence(loud, [30, 90, 180]),
  });

  // One request a minute on one pod, one of them a 500 at minute 30.
  if (settings.alertRules.minRequestsPerHour > 60) {
    const n2 = 180;
    tests.push({
      name: 'story: a quiet site, one request a minute, one of them a 500: nothing fires',
      interval,
      input_series: [
        ...up(pods, n2),
        ...podRequests(pods[0], n2, { '2xx': grows(0, 1, n2), '5xx': `0x30 1+0x${n2 - 31}` }),
      ],
      alert_rule_test: silence(loud, [31, 35, 45, 60, 120, 150]),
    });
  } else {
    skipped.push('story "quiet site": ALERT_MIN_REQUESTS_PER_HOUR <= 60 lets one request a minute page');
  }

  // A scan: as many 404s as successes on one pod; the health score of that pod drops.
  const n3 = 60;
  tests.push({
    name: 'story: a 404 scanner beside normal traffic: no warning or critical alert',
    interval,
    input_series: [
      ...up(pods, n3),
      ...pods.flatMap((p, i) =>
        podRequests(p, n3, { '2xx': grows(0, 100, n3), '4xx': grows(0, i === 0 ? 300 : 0, n3) }),
      ),
      ...pods.map((p, i) => ({
        series: sel(METRICS.requestsFailed, { instance: p }),
        values: grows(0, i === 0 ? 300 : 0, n3),
      })),
      ...pods.map((p, i) => ({
        series: sel(METRICS.healthScore, { instance: p }),
        values: `${i === 0 ? 55 : 100}+0x${n3}`,
      })),
    ],
    alert_rule_test: silence(loud, [20, 45, 60]),
  });

  const n4 = 300;
  tests.push({
    name: 'story: a fresh deploy with zero traffic for hours: no warning or critical alert',
    interval,
    input_series: [
      ...up(pods, n4),
      ...pods.map((p) => ({ series: sel(METRICS.requestsTotal, { instance: p }), values: `0+0x${n4}` })),
      ...pods.map((p) => ({ series: sel(METRICS.healthScore, { instance: p }), values: `100+0x${n4}` })),
    ],
    alert_rule_test: silence(loud, [60, 180, 300]),
  });

  // Real failures.
  const highErrorRate = byName.get(ALERTS.highErrorRate);
  const fast = byName.get(ALERTS.errorBudgetFastBurn);
  const busy = Math.max(60, settings.alertRules.minRequestsPerHour);
  const budget = errorBudget(settings.alertRules.sloAvailability);
  const fastPairs = BURN_RATE_ALERTS.find((a) => a.name === ALERTS.errorBudgetFastBurn)?.windows ?? [];
  const fastBurns = fastPairs.some((w) => w.factor * budget < 0.5);
  if (highErrorRate && fast && settings.alertRules.errorRateThreshold < 0.5) {
    const at = Math.max(after(highErrorRate), after(fast));
    const n5 = at + 5;
    tests.push({
      name: 'story: half of all requests are 5xx on every pod: HighErrorRate and ErrorBudgetFastBurn fire',
      interval,
      input_series: [
        ...up(pods, n5),
        ...pods.flatMap((p) => podRequests(p, n5, { '2xx': grows(0, busy, n5), '5xx': grows(0, busy, n5) })),
      ],
      alert_rule_test: [
        fires(highErrorRate, at, job, 0.5),
        fastBurns ? fires(fast, at, job, 0) : { eval_time: `${at}m`, alertname: fast.alert, exp_alerts: [] },
      ],
    });
  } else {
    skipped.push('story "half of all requests 5xx": ALERT_ERROR_RATE_THRESHOLD >= 0.5');
  }
  const down = byName.get(ALERTS.backendDown);
  const podDown = byName.get(ALERTS.backendPodDown);
  if (down && podDown) {
    const at = Math.max(after(down, 0), after(podDown, 0));
    tests.push({
      name: 'story: every pod down: BackendDown fires, BackendPodDown does not',
      interval,
      input_series: up(pods, at + 5, () => 0),
      alert_rule_test: [fires(down, at, job, 0), { eval_time: `${at}m`, alertname: podDown.alert, exp_alerts: [] }],
    });
    tests.push({
      name: 'story: one pod down while the others serve: BackendPodDown fires, BackendDown does not',
      interval,
      input_series: up(pods, at + 5, (i) => (i === 0 ? 0 : 1)),
      alert_rule_test: [
        fires(podDown, at, { ...job, instance: pods[0] }, 0),
        { eval_time: `${at}m`, alertname: down.alert, exp_alerts: [] },
      ],
    });
  }
  const fallback = byName.get(ALERTS.kvstoreFallback);
  const notShared = byName.get(ALERTS.rateLimitsNotShared);
  if (fallback && notShared) {
    const at = after(notShared, 0);
    const backendSeries = (memoryPods: number) =>
      pods.flatMap((instance, i) => [
        {
          series: sel(METRICS.rateLimitBackend, { instance, backend: 'memory' }),
          values: `${i < memoryPods ? 1 : 0}+0x${at + 5}`,
        },
        {
          series: sel(METRICS.rateLimitBackend, { instance, backend: 'kvstore' }),
          values: `${i < memoryPods ? 0 : 1}+0x${at + 5}`,
        },
      ]);
    tests.push({
      name: 'story: one pod rate-limits in memory (a blip on its connection): RateLimitsNotShared stays silent',
      interval,
      input_series: backendSeries(1),
      alert_rule_test: [{ eval_time: `${at}m`, alertname: notShared.alert, exp_alerts: [] }],
    });
    tests.push({
      name: 'story: a cluster master down, two pods on memory: RateLimitsNotShared fires with the count',
      interval,
      input_series: backendSeries(2),
      alert_rule_test: [fires(notShared, at, job, 2)],
    });
  }
  return { tests: tests.map((t) => inScope(t, job)), skipped };
}

/** `test` with its backend series moved into the rules' scope (operator mode adds `namespace`). */
function inScope(test: PromtoolTest, scope: Readonly<Record<string, string>>): PromtoolTest {
  // `sel` writes the job first: `metric{job="…", …}`.
  const head = `{job="${SCRAPE_JOB}"`;
  const scoped = Object.entries(scope)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ');
  return {
    ...test,
    input_series: test.input_series.map((s) => ({ ...s, series: s.series.replace(head, `{${scoped}`) })),
  };
}
