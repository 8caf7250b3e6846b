import { dump, load } from 'js-yaml';
import { parseSettings } from '../../../configs';
import { loadStackSettings } from '../../../charts/stack-settings';
import {
  ALERTS,
  alertingRules,
  alertRules,
  BURN_RATE_ALERTS,
  errorRatioRecord,
  isAlertingRule,
  SLO_WINDOWS,
  toYaml,
  type RuleFile,
} from '../../../charts/generators';
import { checkRules, ruleUnitTests, testRules, workspace } from '../../../tools/validate';
import { WRITE_CONFIRMATION_STATES } from '../../../service/metrics/content-metrics';
import { WRITE_STATES } from '../../../service/content/content-store';
import { promTools, requirePromTools, testRulesAhead } from '../../../tools/harness/prom-tools';
import { METRICS, METRIC_LABELS } from '../../../contract';

const settings = loadStackSettings({});
const rules = alertRules(settings);
const byName = (file: RuleFile, name: string) => {
  const rule = alertingRules(file).find((r) => r.alert === name);
  if (!rule) throw new Error(`no alert ${name}`);
  return rule;
};

describe('alertRules', () => {
  it('has the spec’s BackendDown and HighErrorRate and the alerts an operator needs', () => {
    expect(alertingRules(rules).map((r) => r.alert)).toEqual([
      'BackendDown',
      'BackendPodDown',
      'BackendTargetsMissing',
      'HighErrorRate',
      'HighLatency',
      'LowHealthScore',
      'HighTokenSpend',
      'CacheNearFull',
      'ContentCompactionFailing',
      'ContentWritesRefused',
      'KvstoreWritesUnconfirmed',
      'KvstoreEvictingKeys',
      'KvstoreFallbackActive',
      'RateLimitsNotShared',
      'ErrorBudgetFastBurn',
      'ErrorBudgetSlowBurn',
      'Watchdog',
      'AlertmanagerFailedToSendNotifications',
      'AlertmanagerConfigReloadFailed',
      'PrometheusNotConnectedToAlertmanager',
      'PrometheusErrorSendingAlerts',
      'PrometheusRuleEvaluationFailures',
      'PrometheusConfigReloadFailed',
    ]);
  });

  it('leaves NoTraffic out by default and adds it, info, with its threshold when switched on', () => {
    expect(alertingRules(rules).map((r) => r.alert)).not.toContain(ALERTS.noTraffic);
    const on = alertRules(loadStackSettings({ ALERT_NO_TRAFFIC_ENABLED: 'true', ALERT_NO_TRAFFIC_MIN_REQUESTS: '5' }));
    expect(byName(on, ALERTS.noTraffic)).toMatchObject({
      labels: { severity: 'info' },
      expr: expect.stringMatching(/\[10m\]\)\) < 5$/),
    });
  });

  it('aggregates over pods with sums of rates, never a rate of a sum', () => {
    const text = toYaml(rules);
    expect(text).not.toMatch(/(rate|increase)\(\s*sum/);
    for (const rule of alertingRules(rules)) {
      // Every pod counts the same Redis's evictions: the max of their increases, not the sum.
      const aggregation = rule.alert === ALERTS.kvstoreEvictingKeys ? 'max' : 'sum';
      if (/\b(rate|increase)\(/.test(rule.expr))
        expect(rule.expr).toMatch(new RegExp(`${aggregation} by \\((namespace, )?job[^)]*\\) \\((rate|increase)\\(`));
    }
  });

  it('links every alert to its heading in the runbook page', () => {
    for (const rule of alertingRules(rules)) {
      expect(rule.annotations.runbook_url).toBe(
        `https://github.com/example/svc-ai-search-backend/blob/main/docs/runbooks.md#${rule.alert.toLowerCase()}`,
      );
    }
    const custom = alertRules(loadStackSettings({ RUNBOOK_BASE_URL: 'https://wiki.example.com/runbooks' }));
    expect(byName(custom, ALERTS.backendDown).annotations.runbook_url).toBe(
      'https://wiki.example.com/runbooks#backenddown',
    );
  });

  it('watches the pipeline: an always-firing Watchdog and mixin-style Prometheus and Alertmanager alerts, labelled component=monitoring', () => {
    const watchdog = byName(rules, ALERTS.watchdog);
    expect(watchdog).toMatchObject({ expr: 'vector(1)', labels: { severity: 'none', component: 'monitoring' } });
    expect(byName(rules, ALERTS.alertmanagerFailedToSend).expr).toContain(
      'alertmanager_notifications_failed_total{job="alertmanager"}',
    );
    expect(byName(rules, ALERTS.prometheusNotConnectedToAlertmanager).expr).toContain(
      'prometheus_notifications_alertmanagers_discovered{job="prometheus"}',
    );
    expect(byName(rules, ALERTS.prometheusErrorSendingAlerts).expr).toContain(
      'prometheus_notifications_errors_total{job="prometheus"}',
    );
    expect(byName(rules, ALERTS.prometheusRuleFailures).expr).toContain(
      'prometheus_rule_evaluation_failures_total{job="prometheus"}',
    );
    expect(byName(rules, ALERTS.prometheusConfigReloadFailed).expr).toContain(
      'prometheus_config_last_reload_successful',
    );
    expect(byName(rules, ALERTS.alertmanagerConfigReloadFailed).expr).toContain(
      'alertmanager_config_last_reload_successful',
    );
  });

  it('labels every alert with severity and service, and explains it in summary and description', () => {
    for (const rule of alertingRules(rules)) {
      expect(['critical', 'warning', 'info', ...(rule.alert === ALERTS.watchdog ? ['none'] : [])]).toContain(
        rule.labels.severity,
      );
      expect(rule.labels.service).toBe('svc-ai-search-backend');
      expect(rule.annotations.summary.length).toBeGreaterThan(10);
      expect(rule.annotations.description.length).toBeGreaterThan(30);
      if (rule.labels.component !== 'monitoring') expect(rule.expr).toContain('job="svc-ai-search-backend"');
    }
  });

  it('makes BackendDown critical when no pod is up or the job is absent, and BackendPodDown a warning for one pod', () => {
    const r = byName(rules, ALERTS.backendDown);
    expect(r).toMatchObject({
      expr: 'sum by (namespace, job) (up{job="svc-ai-search-backend"}) == 0\nor\nabsent(up{job="svc-ai-search-backend"})',
      for: '1m',
      labels: { severity: 'critical' },
    });
    expect(byName(rules, ALERTS.backendPodDown)).toMatchObject({
      expr: 'up{job="svc-ai-search-backend"} == 0\nand on (namespace, job)\nsum by (namespace, job) (up{job="svc-ai-search-backend"}) > 0',
      for: '5m',
      labels: { severity: 'warning' },
    });
    expect(byName(rules, ALERTS.backendTargetsMissing).expr).toBe(
      'count by (namespace, job) (up{job="svc-ai-search-backend"}) < 2',
    );
    const one = alertRules(loadStackSettings({ BACKEND_REPLICAS: '1' }));
    expect(alertingRules(one).map((x) => x.alert)).not.toContain(ALERTS.backendTargetsMissing);
  });

  it('defines HighErrorRate as server errors (5xx) / all requests over 5m, with a volume guard', () => {
    const r = byName(rules, ALERTS.highErrorRate);
    const count = `${METRICS.httpRequestDuration}_count`;
    expect(r.expr).toBe(
      [
        '(',
        `sum by (namespace, job) (rate(${count}{job="svc-ai-search-backend", status_class="5xx"}[5m]))`,
        '/',
        `sum by (namespace, job) (rate(${count}{job="svc-ai-search-backend"}[5m]))`,
        ') > 0.05',
        'and on (namespace, job)',
        `  sum by (namespace, job) (rate(${count}{job="svc-ai-search-backend"}[5m])) * 3600 >= 100`,
      ].join('\n'),
    );
    expect(r.expr).not.toContain(METRICS.requestsFailed);
    expect(r).toMatchObject({ for: '5m', labels: { severity: 'warning' } });
  });

  it('guards every burn-rate window pair with the volume of its long window', () => {
    const fast = byName(rules, ALERTS.errorBudgetFastBurn).expr;
    expect(fast).toContain('[1h])) * 3600 >= 100');
    expect(fast).toContain('[6h])) * 3600 >= 100');
    const slow = byName(
      alertRules(loadStackSettings({ ALERT_MIN_REQUESTS_PER_HOUR: '500' })),
      ALERTS.errorBudgetSlowBurn,
    ).expr;
    expect(slow).toContain('[1d])) * 3600 >= 500');
    expect(slow).toContain('[3d])) * 3600 >= 500');
  });

  it('takes every threshold and for duration from settings', () => {
    const custom = alertRules(
      loadStackSettings({
        ALERT_BACKEND_DOWN_FOR: '3m',
        ALERT_ERROR_RATE_THRESHOLD: '0.1',
        ALERT_ERROR_RATE_FOR: '7m',
        ALERT_LATENCY_P99_SECONDS: '0.75',
        ALERT_LATENCY_FOR: '4m',
        ALERT_HEALTH_SCORE_MIN: '55',
        ALERT_HEALTH_SCORE_FOR: '6m',
        ALERT_TOKENS_PER_HOUR: '250000',
        ALERT_TOKEN_SPEND_FOR: '9m',
        ALERT_CACHE_USAGE_PERCENT: '80',
        ALERT_CACHE_FOR: '11m',
        ALERT_KVSTORE_FALLBACK_FOR: '8m',
        ALERT_NO_TRAFFIC_ENABLED: 'true',
        ALERT_NO_TRAFFIC_FOR: '2h',
        ALERT_BACKEND_POD_DOWN_FOR: '12m',
        SLO_AVAILABILITY: '0.99',
      }),
    );
    const at = (name: string) => byName(custom, name);
    expect(at(ALERTS.backendDown).for).toBe('3m');
    expect(at(ALERTS.highErrorRate)).toMatchObject({ for: '7m', expr: expect.stringMatching(/\) > 0\.1\n/) });
    expect(at(ALERTS.highLatency)).toMatchObject({ for: '4m', expr: expect.stringMatching(/> 0\.75$/) });
    expect(at(ALERTS.lowHealthScore)).toMatchObject({ for: '6m', expr: expect.stringMatching(/< 55$/) });
    expect(at(ALERTS.highTokenSpend)).toMatchObject({ for: '9m', expr: expect.stringMatching(/\[1h\]\)\) > 250000$/) });
    expect(at(ALERTS.cacheNearFull)).toMatchObject({ for: '11m', expr: expect.stringMatching(/> 80$/) });
    expect(at(ALERTS.kvstoreFallback).for).toBe('8m');
    expect(at(ALERTS.noTraffic).for).toBe('2h');
    expect(at(ALERTS.backendPodDown).for).toBe('12m');
    expect(at(ALERTS.errorBudgetFastBurn).expr).toContain('ratio_rate1h{job="svc-ai-search-backend"} > 0.144');
    expect(at(ALERTS.highErrorRate).annotations.description).toContain('above 10% (ALERT_ERROR_RATE_THRESHOLD)');
  });

  it('alerts on the kvstore fallback only when the deployed service has a kvstore and reports its store', () => {
    expect(alertingRules(rules).some((r) => r.alert === ALERTS.kvstoreFallback)).toBe(true);
    expect(byName(rules, ALERTS.kvstoreFallback).expr).toBe(
      `max by (namespace, job) (${METRICS.rateLimitBackend}{job="svc-ai-search-backend", backend="memory"}) == 1`,
    );
    const names = (s: ReturnType<typeof parseSettings>) => alertingRules(alertRules(s)).map((r) => r.alert);
    expect(names(parseSettings({}))).not.toContain(ALERTS.kvstoreFallback);
    expect(names(loadStackSettings({ RATE_LIMIT_ENABLE_METRICS: 'false' }))).not.toContain(ALERTS.kvstoreFallback);
    expect(names(loadStackSettings({ RATELIMIT_ENABLED: 'false' }))).not.toContain(ALERTS.kvstoreFallback);
  });

  it('warns, per pod, on any failed DATA_DIR compaction in the last 15m, by the counter the service exposes', () => {
    const rule = byName(rules, ALERTS.contentCompactionFailing);
    expect(rule).toMatchObject({
      expr: 'sum by (namespace, job, instance) (increase(svc_ai_search_content_compaction_failures_total{job="svc-ai-search-backend"}[15m])) > 0',
      for: '0m',
      labels: { severity: 'warning', service: 'svc-ai-search-backend' },
    });
    expect(rule.annotations.description).toContain('Writes are still stored and answered');
    const operator = alertRules(loadStackSettings({ MONITORING_MODE: 'operator', NAMESPACE: 'search' }));
    expect(byName(operator, ALERTS.contentCompactionFailing).expr).toContain(
      '{job="svc-ai-search-backend", namespace="search"}[15m]',
    );
  });

  it('warns, per pod and state, when the DATA_DIR store has refused writes for 1m (a full disk), by the gauge the service exposes', () => {
    expect(WRITE_STATES).toContain(METRIC_LABELS.contentWritesOk);
    const rule = byName(rules, ALERTS.contentWritesRefused);
    expect(rule).toMatchObject({
      expr: 'max by (namespace, job, instance, state) (svc_ai_search_content_write_state{job="svc-ai-search-backend", state!="ok"}) == 1',
      for: '1m',
      labels: { severity: 'warning', service: 'svc-ai-search-backend' },
    });
    expect(rule.annotations.description).toContain('disk_full, its volume has no space left');
    expect(rule.annotations.runbook_url).toMatch(/runbooks\.md#contentwritesrefused$/);
    const operator = alertRules(loadStackSettings({ MONITORING_MODE: 'operator', NAMESPACE: 'search' }));
    expect(byName(operator, ALERTS.contentWritesRefused).expr).toContain(
      '{job="svc-ai-search-backend", namespace="search", state!="ok"}',
    );
  });

  it('warns, per pod and state, when the kvstore has not confirmed content writes for 2m, by the gauge the service exposes', () => {
    expect(WRITE_CONFIRMATION_STATES).toContain(METRIC_LABELS.writesConfirmed);
    const rule = byName(rules, ALERTS.kvstoreWritesUnconfirmed);
    expect(rule).toMatchObject({
      expr: 'max by (namespace, job, instance, state) (svc_ai_search_kvstore_write_confirmation{job="svc-ai-search-backend", state!="ok"}) == 1',
      for: '2m',
      labels: { severity: 'warning', service: 'svc-ai-search-backend' },
    });
    expect(rule.annotations.description).toContain('refuses writes with 503');
    expect(rule.annotations.runbook_url).toMatch(/runbooks\.md#kvstorewritesunconfirmed$/);
    const operator = alertRules(loadStackSettings({ MONITORING_MODE: 'operator', NAMESPACE: 'search' }));
    expect(byName(operator, ALERTS.kvstoreWritesUnconfirmed).expr).toContain(
      '{job="svc-ai-search-backend", namespace="search", state!="ok"}',
    );
  });

  it('warns, per store, when the kvstore evicted keys in the last 15m, by the max over pods of the counter the service exposes', () => {
    const rule = byName(rules, ALERTS.kvstoreEvictingKeys);
    expect(rule).toMatchObject({
      expr: 'max by (namespace, job, store) (increase(svc_ai_search_kvstore_evicted_keys_total{job="svc-ai-search-backend"}[15m])) > 0',
      for: '0m',
      labels: { severity: 'warning', service: 'svc-ai-search-backend' },
    });
    expect(rule.annotations.description).toContain('content.store_losses');
    expect(rule.annotations.runbook_url).toMatch(/runbooks\.md#kvstoreevictingkeys$/);
  });

  it('never alerts on the performance grade (its encoding belongs to the service)', () => {
    expect(toYaml(rules)).not.toContain(METRICS.performanceGrade);
  });

  describe('SLO burn rates', () => {
    const slo = rules.groups[1];

    it('records the 5xx ratio over every window before the alerts read it', () => {
      const records = slo.rules.filter((r) => !isAlertingRule(r));
      expect(records.map((r) => 'record' in r && r.record)).toEqual(SLO_WINDOWS.map(errorRatioRecord));
      expect(records[0].expr).toContain('status_class="5xx"');
      expect(slo.rules.findIndex(isAlertingRule)).toBe(SLO_WINDOWS.length);
    });

    it('follows the SRE workbook table: 14.4x/1h+5m and 6x/6h+30m page, 3x/1d+2h and 1x/3d+6h ticket', () => {
      expect(
        BURN_RATE_ALERTS.map((a) => [a.name, a.severity, a.windows.map((w) => [w.factor, w.long, w.short])]),
      ).toEqual([
        [
          'ErrorBudgetFastBurn',
          'critical',
          [
            [14.4, '1h', '5m'],
            [6, '6h', '30m'],
          ],
        ],
        [
          'ErrorBudgetSlowBurn',
          'warning',
          [
            [3, '1d', '2h'],
            [1, '3d', '6h'],
          ],
        ],
      ]);
      const fast = byName(rules, ALERTS.errorBudgetFastBurn).expr;
      expect(fast).toContain('job:svc_ai_search_request_errors:ratio_rate1h{job="svc-ai-search-backend"} > 0.0144');
      expect(fast).toContain('job:svc_ai_search_request_errors:ratio_rate5m{job="svc-ai-search-backend"} > 0.0144');
      expect(fast).toContain('job:svc_ai_search_request_errors:ratio_rate6h{job="svc-ai-search-backend"} > 0.006');
      expect(fast).toContain('job:svc_ai_search_request_errors:ratio_rate30m{job="svc-ai-search-backend"} > 0.006');
      const slow = byName(rules, ALERTS.errorBudgetSlowBurn).expr;
      expect(slow).toContain('ratio_rate1d{job="svc-ai-search-backend"} > 0.003');
      expect(slow).toContain('ratio_rate2h{job="svc-ai-search-backend"} > 0.003');
      expect(slow).toContain('ratio_rate3d{job="svc-ai-search-backend"} > 0.001');
      expect(slow).toContain('ratio_rate6h{job="svc-ai-search-backend"} > 0.001');
    });
  });

  describe('judged by promtool', () => {
    /** The settings each test below judges. */
    const ENVS = {
      defaults: {},
      operator: { MONITORING_MODE: 'operator', NAMESPACE: 'search' },
      otherThresholds: {
        ALERT_ERROR_RATE_THRESHOLD: '0.7',
        ALERT_LATENCY_P99_SECONDS: '0.3',
        ALERT_TOKENS_PER_HOUR: '1234567',
        ALERT_BACKEND_DOWN_FOR: '90s',
        ALERT_NO_TRAFFIC_ENABLED: 'true',
        ALERT_NO_TRAFFIC_FOR: '0s',
        BACKEND_REPLICAS: '3',
        SLO_AVAILABILITY: '0.95',
        EMBEDDINGS_PROVIDER: 'openai',
      },
      stories: {
        ALERT_BACKEND_POD_DOWN_FOR: '20m',
        ALERT_BACKEND_DOWN_FOR: '3m',
        ALERT_ERROR_RATE_FOR: '30m',
        ALERT_TOKENS_PER_HOUR: '1000',
        SLO_AVAILABILITY: '0.9',
        BACKEND_REPLICAS: '3',
      },
    } satisfies Record<string, Record<string, string>>;

    /**
     * A unit-test document as validateStack writes it (tools/validate/validate-stack.ts): the same
     * bytes, so that a run of the same rules shares promtool's verdict with the validation suites
     * (tools/harness/prom-tools.ts).
     */
    const testsYaml = (tests: ReturnType<typeof ruleUnitTests>) => dump(tests.file, { lineWidth: -1 });

    /** The rule file and unit tests of `env`. */
    const generated = (env: Record<string, string>) => {
      const s = loadStackSettings(env);
      const file = alertRules(s);
      return { file, tests: ruleUnitTests(s, file) };
    };

    /** The default rules changed the ways the drift test expects the generated tests to catch. */
    const DRIFTS: ReadonlyArray<readonly [string, string]> = [
      ['> 0.05', '> 0.6'],
      ['for: 10m', 'for: 5m'],
      ['< 70', '< 20'],
      ['ratio_rate6h{job="svc-ai-search-backend"} > 0.006', 'ratio_rate6h{job="svc-ai-search-backend"} > 0.06'],
    ];
    /**
     * The rules with one drift, and the generated tests of the one alert it changes (its "fires"
     * and "stays silent" tests): when those fail, the whole generated file fails, so running just
     * them proves the same, in a fraction of a second instead of the seconds of every test and
     * story (each drift changes one alert's expr or for, nothing else: checked here).
     */
    const drift = ([from, to]: readonly [string, string]) => {
      const rulesText = toYaml(rules).replace(from, to);
      const drifted = load(rulesText) as RuleFile;
      expect(drifted.groups.flatMap((g) => g.rules.filter((r) => !isAlertingRule(r)))).toEqual(
        rules.groups.flatMap((g) => g.rules.filter((r) => !isAlertingRule(r))),
      );
      const changed = alertingRules(rules)
        .filter((r) => JSON.stringify(r) !== JSON.stringify(byName(drifted, r.alert)))
        .map((r) => r.alert);
      expect(changed).toHaveLength(1);
      const all = ruleUnitTests(loadStackSettings({}), rules).file;
      const own = all.tests.filter((t) => t.name.startsWith(`${changed[0]} `));
      expect(own.map((t) => t.name)).toEqual([
        expect.stringMatching(/ fires once its condition has held for /),
        expect.stringMatching(/ stays silent on healthy series$/),
      ]);
      return { rulesText, testsText: dump({ ...all, tests: own }), alert: changed[0] };
    };
    const unguardedRules = () => toYaml(rules).replaceAll('* 3600 >= 100', '* 3600 >= 0');
    const clientErrorRules = () => toYaml(rules).replaceAll('status_class="5xx"', 'status_class=~"4xx|5xx"');
    /**
     * The default generated tests with only the story named `name` (as the drifts keep only the
     * changed alert's tests): promtool runs each test on its own series, so the story fails alone
     * exactly when it fails in the whole file, and its run is a fraction of the whole file's (the
     * stories are most of its evaluated minutes; the whole file against each of the two changed
     * rule files was ~5 s of promtool CPU apiece).
     */
    const storyTests = (name: string) => {
      const all = ruleUnitTests(loadStackSettings({}), rules).file;
      const own = all.tests.filter((t) => t.name.startsWith(`story: ${name}`));
      expect(own.map((t) => t.name)).toEqual([expect.stringMatching(/^story: /)]);
      return dump({ ...all, tests: own });
    };
    const QUIET_SITE = 'a quiet site';
    const SCANNER = 'a 404 scanner';

    // Every promtool test run of this block, two at a time (each is seconds of one core); the
    // tests' own testRules calls on the same files reuse these results.
    beforeAll(async () => {
      requirePromTools();
      const judged = Object.values(ENVS).map((env) => {
        const { file, tests } = generated(env);
        return { rulesText: toYaml(file), testsText: testsYaml(tests) };
      });
      const stories = [
        { rulesText: unguardedRules(), testsText: storyTests(QUIET_SITE) },
        { rulesText: clientErrorRules(), testsText: storyTests(SCANNER) },
      ];
      await testRulesAhead([...judged, ...DRIFTS.map(drift), ...stories]);
    }, 120000);

    const judge = (env: Record<string, string>) => {
      const { file, tests } = generated(env);
      const ws = workspace();
      try {
        return {
          check: checkRules(promTools, ws, toYaml(file)),
          test: testRules(promTools, ws, toYaml(file), testsYaml(tests)),
          tests,
        };
      } finally {
        ws.dispose();
      }
    };

    it('defaults: check rules passes, and every alert fires and stays silent in promtool test rules', () => {
      const { check, test, tests } = judge(ENVS.defaults);
      expect(check.detail).toContain('SUCCESS: 30 rules found');
      expect(check.ok).toBe(true);
      expect(test.detail).toContain('SUCCESS');
      expect(test.ok).toBe(true);
      expect(tests.skipped).toEqual([]);
      // Both ways for each alert but the always-firing Watchdog, then the nine stories.
      expect(tests.file.tests).toHaveLength(2 * alertingRules(rules).length - 1 + 9);
    });

    it('operator mode: the same service and SLO groups scoped to the namespace, no pipeline group; check rules, every alert and every story pass', () => {
      const s = loadStackSettings({ MONITORING_MODE: 'operator', NAMESPACE: 'search' });
      const file = alertRules(s);
      expect(file.groups.map((g) => g.name)).toEqual(
        alertRules(loadStackSettings({}))
          .groups.map((g) => g.name)
          .filter((n) => !n.endsWith('.pipeline')),
      );
      for (const rule of file.groups.flatMap((g) => g.rules)) {
        for (const m of rule.expr.matchAll(/\{job="[^"]*"([^}]*)\}/g)) expect(m[1]).toMatch(/^, namespace="search"/);
      }
      const { check, test, tests } = judge(ENVS.operator);
      expect(check.ok).toBe(true);
      expect(test.detail).toContain('SUCCESS');
      expect(test.ok).toBe(true);
      expect(tests.skipped).toEqual([]);
      // The namespace survives every aggregation, so the operator's namespace matcher routes each alert.
      const firing = tests.file.tests.flatMap((t) => t.alert_rule_test.flatMap((a) => a.exp_alerts));
      expect(firing.length).toBeGreaterThan(10);
      for (const a of firing) expect(a.exp_labels.namespace).toBe('search');
    });

    it('other thresholds: the generated tests follow them', () => {
      const { check, test, tests } = judge(ENVS.otherThresholds);
      expect(check.ok).toBe(true);
      expect(test.detail).toContain('SUCCESS');
      expect(tests.skipped).toEqual(['story "half of all requests 5xx": ALERT_ERROR_RATE_THRESHOLD >= 0.5']);
    });

    it('the stories hold under other settings: long for durations, a small token budget, a loose SLO, three replicas', () => {
      const { test, tests } = judge(ENVS.stories);
      expect(test.detail).toContain('SUCCESS');
      expect(test.ok).toBe(true);
      expect(tests.file.tests.filter((t) => t.name.startsWith('story: '))).toHaveLength(9);
    });

    it('a rule that drifts from its settings fails the generated tests (they are not vacuous)', () => {
      const ws = workspace();
      try {
        for (const d of DRIFTS) {
          const { rulesText, testsText, alert } = drift(d);
          expect(rulesText).not.toBe(toYaml(rules));
          const judged = testRules(promTools, ws, rulesText, testsText);
          // Failed by an alert that did not match (not, say, a test file promtool cannot read).
          expect({ alert, ok: judged.ok, failed: judged.detail.includes(`alertname: ${alert}, time:`) }).toEqual({
            alert,
            ok: false,
            failed: true,
          });
        }
        // The stories catch the old behaviour: no volume guard, or client errors counted as failures.
        const quiet = testRules(promTools, ws, unguardedRules(), storyTests(QUIET_SITE));
        expect(quiet.ok).toBe(false);
        expect(quiet.detail).toContain(QUIET_SITE);
        const scanner = testRules(promTools, ws, clientErrorRules(), storyTests(SCANNER));
        expect(scanner.ok).toBe(false);
        expect(scanner.detail).toContain(SCANNER);
      } finally {
        ws.dispose();
      }
    });
  });
});
