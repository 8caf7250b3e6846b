import { toYaml } from '../../../charts';
import { alertRules } from '../../../charts/generators/alert-rules';
import { loadStackSettings } from '../../../charts/stack-settings';
import { ruleFileOf, checkRules, ruleUnitTests, testRules, workspace } from '../../../tools/validate';
import { dump } from 'js-yaml';
import { promTools, requirePromTools } from '../../../tools/harness/prom-tools';
import { find, synthStack, type Json } from '../fixtures/stack';

describe('BackendPrometheusRule', () => {
  const env = { MONITORING_MODE: 'operator', PROMETHEUS_RULE_LABELS: 'release=kube-prometheus-stack,team=search' };
  const stack = synthStack(env);
  const rule: Json = find(stack.manifests, 'PrometheusRule', 'svc-ai-search-backend');

  it('holds exactly the rule groups alertRules generates (one generator, two wrappers)', () => {
    expect(rule.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(ruleFileOf(rule)).toEqual(JSON.parse(JSON.stringify(alertRules(stack.settings))));
    expect(rule.spec.groups.map((g: Json) => g.name)).toEqual([
      'svc-ai-search-backend.alerts',
      'svc-ai-search-backend.slo',
    ]);
  });

  it('is labelled with PROMETHEUS_RULE_LABELS', () => {
    expect(rule.metadata.labels).toMatchObject({ release: 'kube-prometheus-stack', team: 'search' });
  });

  it('leaves out the Prometheus and Alertmanager workloads and their ConfigMaps; the backend and kvstore stay', () => {
    const kinds = stack.manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(
      kinds.filter(
        (k) =>
          /prometheus|alertmanager/.test(k) && !k.startsWith('PrometheusRule') && !k.startsWith('AlertmanagerConfig'),
      ),
    ).toEqual([]);
    expect(kinds).toEqual(
      expect.arrayContaining([
        'Deployment/backend',
        'StatefulSet/kvstore',
        'ServiceMonitor/backend',
        'AlertmanagerConfig/alertmanager',
      ]),
    );
  });

  describe('judged by promtool', () => {
    beforeAll(requirePromTools);
    it('its groups pass check rules and every generated unit test and story', () => {
      const file = ruleFileOf(rule);
      const ws = workspace();
      try {
        const text = toYaml(file);
        const check = checkRules(promTools, ws, text);
        expect(check.ok).toBe(true);
        const tests = ruleUnitTests(loadStackSettings(env), file);
        const result = testRules(promTools, ws, text, dump(tests.file, { lineWidth: -1 }));
        expect(result.detail).toContain('SUCCESS');
        expect(result.ok).toBe(true);
      } finally {
        ws.dispose();
      }
    });
  });
});
