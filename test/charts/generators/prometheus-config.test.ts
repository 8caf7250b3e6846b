import { load } from 'js-yaml';
import { loadStackSettings } from '../../../charts/stack-settings';
import { prometheusConfig, retarget, toYaml } from '../../../charts/generators';
import { checkPrometheusConfig, workspace } from '../../../charts/validate';
import { promTools, requirePromTools } from '../../harness/prom-tools';

describe('prometheusConfig', () => {
  const config = prometheusConfig(loadStackSettings({}));

  it('scrapes the job of spec §1.6: backend:8080 at /api/metrics/prometheus', () => {
    expect(config.scrape_configs).toEqual([
      {
        job_name: 'svc-ai-search-backend',
        metrics_path: '/api/metrics/prometheus',
        scheme: 'http',
        static_configs: [{ targets: ['backend:8080'] }],
      },
    ]);
  });

  it('takes the global scrape_interval from settings: 15s by default, 30s when asked', () => {
    expect(config.global.scrape_interval).toBe('15s');
    expect(prometheusConfig(loadStackSettings({ PROMETHEUS_SCRAPE_INTERVAL: '30s' })).global.scrape_interval).toBe('30s');
    expect(prometheusConfig(loadStackSettings({ PROMETHEUS_EVALUATION_INTERVAL: '1m' })).global.evaluation_interval).toBe('1m');
  });

  it('sends alerts to alertmanager:9093 and loads the mounted rule file', () => {
    expect(config.alerting.alertmanagers).toEqual([{ static_configs: [{ targets: ['alertmanager:9093'] }] }]);
    expect(config.rule_files).toEqual(['/etc/prometheus/rules/svc-ai-search-backend.rules.yml']);
  });

  it('round-trips through YAML unchanged', () => {
    expect(load(toYaml(config))).toEqual(config);
  });

  it('retarget moves addresses and rule files, and keeps the job, path and interval', () => {
    const local = retarget(config, { backend: '127.0.0.1:4000', alertmanager: '127.0.0.1:4001', ruleFiles: ['rules.yml'] });
    expect(local.scrape_configs[0]).toMatchObject({
      job_name: 'svc-ai-search-backend',
      metrics_path: '/api/metrics/prometheus',
      static_configs: [{ targets: ['127.0.0.1:4000'] }],
    });
    expect(local.alerting.alertmanagers[0].static_configs[0].targets).toEqual(['127.0.0.1:4001']);
    expect(local.rule_files).toEqual(['rules.yml']);
    expect(local.global).toEqual(config.global);
    expect(retarget(config, {})).toEqual(config);
  });

  describe('judged by promtool', () => {
    beforeAll(requirePromTools);

    it.each([['defaults', {}], ['30s scrape interval', { PROMETHEUS_SCRAPE_INTERVAL: '30s' }]])('%s: promtool check config passes', (_n, env) => {
      const ws = workspace();
      try {
        const r = checkPrometheusConfig(promTools, ws, prometheusConfig(loadStackSettings(env)), 'groups: []\n');
        expect(r.detail).toContain('SUCCESS');
        expect(r.ok).toBe(true);
      } finally {
        ws.dispose();
      }
    });

    it('promtool rejects a broken config (the check is real)', () => {
      const ws = workspace();
      try {
        const broken = { ...config, global: { ...config.global, scrape_interval: 'soon' } };
        expect(checkPrometheusConfig(promTools, ws, broken, 'groups: []\n').ok).toBe(false);
      } finally {
        ws.dispose();
      }
    });
  });
});
