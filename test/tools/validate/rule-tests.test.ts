import { alertingRules, alertRules, loadStackSettings, type RuleFile } from '../../../charts';
import { ruleUnitTests } from '../../../tools/validate';

describe('ruleUnitTests', () => {
  const settings = loadStackSettings({});
  const rules = alertRules(settings);
  const { file, skipped } = ruleUnitTests(settings, rules);

  it('tests every alert both ways', () => {
    for (const rule of alertingRules(rules)) {
      const mine = file.tests.filter((t) => t.name.startsWith(`${rule.alert} `));
      const always = rule.expr === 'vector(1)';
      expect(mine.map((t) => t.name)).toEqual([
        `${rule.alert} fires once its condition has held for ${rule.for}`,
        ...(always ? [] : [`${rule.alert} stays silent on healthy series`]),
      ]);
    }
    expect(skipped).toEqual([]);
    expect(file.rule_files).toEqual(['svc-ai-search-backend.rules.yml']);
  });

  it('checks that an alert is still pending a minute before its for elapses', () => {
    const t = file.tests.find((x) => x.name.startsWith('HighErrorRate fires'));
    expect(t?.alert_rule_test.map((c) => [c.eval_time, c.exp_alerts.length])).toEqual([
      ['5m', 0],
      ['7m', 1],
    ]);
    expect(t?.alert_rule_test[1].exp_alerts[0]).toEqual({
      exp_labels: { job: 'svc-ai-search-backend', severity: 'warning', service: 'svc-ai-search-backend' },
      exp_annotations: {
        summary: 'High server error rate on svc-ai-search-backend',
        description:
          '50% of requests failed with a server error (5xx) over the last 5m, above 5% (ALERT_ERROR_RATE_THRESHOLD), ' +
          'while the service averages at least 100 requests an hour (ALERT_MIN_REQUESTS_PER_HOUR). Client errors (4xx) are not counted.',
        runbook_url: 'https://github.com/example/svc-ai-search-backend/blob/main/docs/runbooks.md#higherrorrate',
      },
    });
  });

  it('says which alerts cannot fire under the settings, and still tests them silent', () => {
    const s = loadStackSettings({ ALERT_CACHE_USAGE_PERCENT: '100' });
    const r = ruleUnitTests(s, alertRules(s));
    expect(r.skipped).toEqual(['CacheNearFull: ALERT_CACHE_USAGE_PERCENT=100: no usage is above it']);
    expect(r.file.tests.filter((t) => t.name.startsWith('CacheNearFull')).map((t) => t.name)).toEqual([
      'CacheNearFull stays silent on healthy series',
    ]);
  });

  it('adds the stories of issue 10, each on two pods that are their own targets', () => {
    expect(file.tests.filter((t) => t.name.startsWith('story: ')).map((t) => t.name)).toEqual([
      'story: one target per pod, one pod with old failures, all serving successes: nothing fires',
      'story: a quiet site, one request a minute, one of them a 500: nothing fires',
      'story: a 404 scanner beside normal traffic: no warning or critical alert',
      'story: a fresh deploy with zero traffic for hours: no warning or critical alert',
      'story: half of all requests are 5xx on every pod: HighErrorRate and ErrorBudgetFastBurn fire',
      'story: every pod down: BackendDown fires, BackendPodDown does not',
      'story: one pod down while the others serve: BackendPodDown fires, BackendDown does not',
      'story: one pod rate-limits in memory (a blip on its connection): RateLimitsNotShared stays silent',
      'story: a cluster master down, two pods on memory: RateLimitsNotShared fires with the count',
    ]);
    const quiet = file.tests.find((t) => t.name.startsWith('story: a quiet site'));
    const checked = new Set(quiet?.alert_rule_test.map((c) => c.alertname));
    for (const name of ['HighErrorRate', 'ErrorBudgetFastBurn', 'ErrorBudgetSlowBurn', 'BackendDown'])
      expect(checked).toContain(name);
    expect(quiet?.alert_rule_test.every((c) => c.exp_alerts.length === 0)).toBe(true);
  });

  it('skips the quiet-site story when the volume guard lets one request a minute through', () => {
    const s = loadStackSettings({ ALERT_MIN_REQUESTS_PER_HOUR: '10' });
    expect(ruleUnitTests(s, alertRules(s)).skipped).toEqual([
      'story "quiet site": ALERT_MIN_REQUESTS_PER_HOUR <= 60 lets one request a minute page',
    ]);
  });

  it('refuses an alert it has no scenario for', () => {
    const extra: RuleFile = {
      groups: [
        ...rules.groups,
        {
          name: 'x',
          rules: [
            {
              alert: 'Unknown',
              expr: 'vector(1)',
              for: '1m',
              labels: { severity: 'info', service: 'x' },
              annotations: { summary: 's', description: 'd', runbook_url: 'u' },
            },
          ],
        },
      ],
    };
    expect(() => ruleUnitTests(settings, extra)).toThrow('no unit-test scenario for alert Unknown');
  });
});
