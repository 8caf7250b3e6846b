import { alertingRules, alertRules, loadStackSettings, type RuleFile } from '../../../charts';
import { ruleUnitTests } from '../../../charts/validate';

describe('ruleUnitTests', () => {
  const settings = loadStackSettings({});
  const rules = alertRules(settings);
  const { file, skipped } = ruleUnitTests(settings, rules);

  it('tests every alert both ways', () => {
    for (const rule of alertingRules(rules)) {
      const mine = file.tests.filter((t) => t.name.startsWith(`${rule.alert} `));
      expect(mine.map((t) => t.name)).toEqual([
        `${rule.alert} fires once its condition has held for ${rule.for}`,
        `${rule.alert} stays silent on healthy series`,
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
        summary: 'High error rate on svc-ai-search-backend',
        description: '50% of requests failed (status >= 400) over the last 5m, above 5% (ALERT_ERROR_RATE_THRESHOLD).',
      },
    });
  });

  it('says which alerts cannot fire under the settings, and still tests them silent', () => {
    const s = loadStackSettings({ ALERT_CACHE_USAGE_PERCENT: '100' });
    const r = ruleUnitTests(s, alertRules(s));
    expect(r.skipped).toEqual(['CacheNearFull: ALERT_CACHE_USAGE_PERCENT=100: no usage is above it']);
    expect(r.file.tests.filter((t) => t.name.startsWith('CacheNearFull')).map((t) => t.name)).toEqual(['CacheNearFull stays silent on healthy series']);
  });

  it('refuses an alert it has no scenario for', () => {
    const extra: RuleFile = {
      groups: [...rules.groups, { name: 'x', rules: [{ alert: 'Unknown', expr: 'vector(1)', for: '1m', labels: { severity: 'info', service: 'x' }, annotations: { summary: 's', description: 'd' } }] }],
    };
    expect(() => ruleUnitTests(settings, extra)).toThrow('no unit-test scenario for alert Unknown');
  });
});
