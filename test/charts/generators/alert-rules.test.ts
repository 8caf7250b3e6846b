import { dump } from 'js-yaml';
import { parseSettings } from '../../../configs';
import { loadStackSettings } from '../../../charts/stack-settings';
import {
  ALERTS,
  alertingRules,
  alertRules,
  BURN_RATE_ALERTS,
  errorRatioRecord,
  isAlertingRule,
  METRICS,
  SLO_WINDOWS,
  toYaml,
  type RuleFile,
} from '../../../charts/generators';
import { checkRules, ruleUnitTests, testRules, workspace } from '../../../charts/validate';
import { promTools, requirePromTools } from '../../harness/prom-tools';

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
      'HighErrorRate',
      'HighLatency',
      'LowHealthScore',
      'HighTokenSpend',
      'CacheNearFull',
      'KvstoreFallbackActive',
      'NoTraffic',
      'ErrorBudgetFastBurn',
      'ErrorBudgetSlowBurn',
    ]);
  });

  it('labels every alert with severity and service, and explains it in summary and description', () => {
    for (const rule of alertingRules(rules)) {
      expect(['critical', 'warning', 'info']).toContain(rule.labels.severity);
      expect(rule.labels.service).toBe('svc-ai-search-backend');
      expect(rule.annotations.summary.length).toBeGreaterThan(10);
      expect(rule.annotations.description.length).toBeGreaterThan(30);
      expect(rule.expr).toContain('job="svc-ai-search-backend"');
    }
  });

  it('makes BackendDown critical on the scrape job’s up', () => {
    const r = byName(rules, ALERTS.backendDown);
    expect(r).toMatchObject({ expr: 'up{job="svc-ai-search-backend"} == 0', for: '1m', labels: { severity: 'critical' } });
  });

  it('defines HighErrorRate as failed / total over 5m (status >= 400, spec) above the threshold', () => {
    const r = byName(rules, ALERTS.highErrorRate);
    expect(r.expr).toContain(`rate(${METRICS.requestsFailed}{job="svc-ai-search-backend"}[5m])`);
    expect(r.expr).toContain(`rate(${METRICS.requestsTotal}{job="svc-ai-search-backend"}[5m])`);
    expect(r.expr).toMatch(/> 0\.05$/);
    expect(r).toMatchObject({ for: '5m', labels: { severity: 'warning' } });
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
        ALERT_NO_TRAFFIC_FOR: '2h',
        SLO_AVAILABILITY: '0.99',
      }),
    );
    const at = (name: string) => byName(custom, name);
    expect(at(ALERTS.backendDown).for).toBe('3m');
    expect(at(ALERTS.highErrorRate)).toMatchObject({ for: '7m', expr: expect.stringMatching(/> 0\.1$/) });
    expect(at(ALERTS.highLatency)).toMatchObject({ for: '4m', expr: expect.stringMatching(/> 0\.75$/) });
    expect(at(ALERTS.lowHealthScore)).toMatchObject({ for: '6m', expr: expect.stringMatching(/< 55$/) });
    expect(at(ALERTS.highTokenSpend)).toMatchObject({ for: '9m', expr: expect.stringMatching(/\[1h\]\)\) > 250000$/) });
    expect(at(ALERTS.cacheNearFull)).toMatchObject({ for: '11m', expr: expect.stringMatching(/> 80$/) });
    expect(at(ALERTS.kvstoreFallback).for).toBe('8m');
    expect(at(ALERTS.noTraffic).for).toBe('2h');
    expect(at(ALERTS.errorBudgetFastBurn).expr).toContain('ratio_rate1h{job="svc-ai-search-backend"} > 0.144');
    expect(at(ALERTS.highErrorRate).annotations.description).toContain('above 10% (ALERT_ERROR_RATE_THRESHOLD)');
  });

  it('alerts on the kvstore fallback only when the deployed service has a kvstore and reports its store', () => {
    expect(alertingRules(rules).some((r) => r.alert === ALERTS.kvstoreFallback)).toBe(true);
    expect(byName(rules, ALERTS.kvstoreFallback).expr).toBe(
      `max by (job) (${METRICS.rateLimitBackend}{job="svc-ai-search-backend", backend="memory"}) == 1`,
    );
    const names = (s: ReturnType<typeof parseSettings>) => alertingRules(alertRules(s)).map((r) => r.alert);
    expect(names(parseSettings({}))).not.toContain(ALERTS.kvstoreFallback);
    expect(names(loadStackSettings({ RATE_LIMIT_ENABLE_METRICS: 'false' }))).not.toContain(ALERTS.kvstoreFallback);
    expect(names(loadStackSettings({ RATELIMIT_ENABLED: 'false' }))).not.toContain(ALERTS.kvstoreFallback);
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
      expect(BURN_RATE_ALERTS.map((a) => [a.name, a.severity, a.windows.map((w) => [w.factor, w.long, w.short])])).toEqual([
        ['ErrorBudgetFastBurn', 'critical', [[14.4, '1h', '5m'], [6, '6h', '30m']]],
        ['ErrorBudgetSlowBurn', 'warning', [[3, '1d', '2h'], [1, '3d', '6h']]],
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
    beforeAll(requirePromTools);

    const judge = (env: Record<string, string>) => {
      const s = loadStackSettings(env);
      const file = alertRules(s);
      const tests = ruleUnitTests(s, file);
      const ws = workspace();
      try {
        return { check: checkRules(promTools, ws, toYaml(file)), test: testRules(promTools, ws, toYaml(file), dump(tests.file)), tests };
      } finally {
        ws.dispose();
      }
    };

    it('defaults: check rules passes, and every alert fires and stays silent in promtool test rules', () => {
      const { check, test, tests } = judge({});
      expect(check.detail).toContain('SUCCESS: 17 rules found');
      expect(check.ok).toBe(true);
      expect(test.detail).toContain('SUCCESS');
      expect(test.ok).toBe(true);
      expect(tests.skipped).toEqual([]);
      expect(tests.file.tests).toHaveLength(2 * alertingRules(rules).length);
    });

    it('other thresholds: the generated tests follow them', () => {
      const { check, test, tests } = judge({
        ALERT_ERROR_RATE_THRESHOLD: '0.7',
        ALERT_LATENCY_P99_SECONDS: '0.3',
        ALERT_TOKENS_PER_HOUR: '1234567',
        ALERT_BACKEND_DOWN_FOR: '90s',
        ALERT_NO_TRAFFIC_FOR: '0s',
        SLO_AVAILABILITY: '0.95',
      });
      expect(check.ok).toBe(true);
      expect(test.detail).toContain('SUCCESS');
      expect(tests.skipped).toEqual([]);
    });

    it('a rule that drifts from its settings fails the generated tests (they are not vacuous)', () => {
      const s = loadStackSettings({});
      const tests = dump(ruleUnitTests(s, rules).file);
      const ws = workspace();
      try {
        for (const [from, to] of [
          ['> 0.05', '> 0.6'],
          ['for: 10m', 'for: 5m'],
          ['< 70', '< 20'],
          ['ratio_rate6h{job="svc-ai-search-backend"} > 0.006', 'ratio_rate6h{job="svc-ai-search-backend"} > 0.06'],
        ]) {
          const drifted = toYaml(rules).replace(from, to);
          expect(drifted).not.toBe(toYaml(rules));
          expect(testRules(promTools, ws, drifted, tests).ok).toBe(false);
        }
      } finally {
        ws.dispose();
      }
    });
  });
});
