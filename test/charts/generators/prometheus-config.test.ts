import { load } from 'js-yaml';
import { loadStackSettings } from '../../../charts/stack-settings';
import { prometheusConfig, retarget, toYaml } from '../../../charts/generators';
import { checkPrometheusConfig, workspace } from '../../../tools/validate';
import { promTools, requirePromTools } from '../../../tools/harness/prom-tools';

describe('prometheusConfig', () => {
  const config = prometheusConfig(loadStackSettings({}));

  it('scrapes every backend pod as its own target at the default 2 replicas, through the headless backend-pods Service', () => {
    expect(config.scrape_configs[0]).toEqual({
      job_name: 'svc-ai-search-backend',
      metrics_path: '/api/metrics/prometheus',
      scheme: 'http',
      dns_sd_configs: [{ names: ['backend-pods.svc-ai-search.svc'], type: 'A', port: 8080, refresh_interval: '30s' }],
      relabel_configs: [
        { source_labels: ['__address__'], regex: '(.+):\\d+', target_label: 'pod_ip', replacement: '$1' },
      ],
    });
  });

  it('keeps the literal target of spec §1.6, backend:8080, with one replica and no autoscaler', () => {
    const one = prometheusConfig(loadStackSettings({ BACKEND_REPLICAS: '1' }));
    expect(one.scrape_configs[0]).toEqual({
      job_name: 'svc-ai-search-backend',
      metrics_path: '/api/metrics/prometheus',
      scheme: 'http',
      static_configs: [{ targets: ['backend:8080'] }],
    });
    const hpa = prometheusConfig(loadStackSettings({ BACKEND_REPLICAS: '1', HPA_ENABLED: 'true' }));
    expect(hpa.scrape_configs[0].dns_sd_configs).toHaveLength(1);
  });

  it('discovers pods on the container port (PORT), not the Service port', () => {
    const c = prometheusConfig(loadStackSettings({ PORT: '9000' }));
    expect(c.scrape_configs[0].dns_sd_configs?.[0].port).toBe(9000);
  });

  it('scrapes Prometheus itself and Alertmanager', () => {
    expect(config.scrape_configs.slice(1)).toEqual([
      {
        job_name: 'prometheus',
        metrics_path: '/metrics',
        scheme: 'http',
        static_configs: [{ targets: ['localhost:9090'] }],
      },
      {
        job_name: 'alertmanager',
        metrics_path: '/metrics',
        scheme: 'http',
        static_configs: [{ targets: ['alertmanager:9093'] }],
      },
    ]);
  });

  it('takes the global scrape_interval from settings: 15s by default, 30s when asked', () => {
    expect(config.global.scrape_interval).toBe('15s');
    expect(prometheusConfig(loadStackSettings({ PROMETHEUS_SCRAPE_INTERVAL: '30s' })).global.scrape_interval).toBe(
      '30s',
    );
    expect(
      prometheusConfig(loadStackSettings({ PROMETHEUS_EVALUATION_INTERVAL: '1m' })).global.evaluation_interval,
    ).toBe('1m');
  });

  it('sends alerts to alertmanager:9093 and loads the mounted rule file', () => {
    expect(config.alerting.alertmanagers).toEqual([{ static_configs: [{ targets: ['alertmanager:9093'] }] }]);
    expect(config.rule_files).toEqual(['/etc/prometheus/rules/svc-ai-search-backend.rules.yml']);
  });

  it('round-trips through YAML unchanged', () => {
    expect(load(toYaml(config))).toEqual(config);
  });

  it('retarget moves addresses and rule files, and keeps the job, path and interval', () => {
    const local = retarget(config, {
      backends: ['127.0.0.1:4000', '127.0.0.1:4002'],
      alertmanager: '127.0.0.1:4001',
      prometheus: '127.0.0.1:4003',
      ruleFiles: ['rules.yml'],
    });
    expect(local.scrape_configs[0]).toEqual({
      job_name: 'svc-ai-search-backend',
      metrics_path: '/api/metrics/prometheus',
      scheme: 'http',
      static_configs: [{ targets: ['127.0.0.1:4000', '127.0.0.1:4002'] }],
    });
    expect(local.scrape_configs.map((j) => j.static_configs?.[0].targets)).toEqual([
      ['127.0.0.1:4000', '127.0.0.1:4002'],
      ['127.0.0.1:4003'],
      ['127.0.0.1:4001'],
    ]);
    expect(local.alerting.alertmanagers[0].static_configs[0].targets).toEqual(['127.0.0.1:4001']);
    expect(local.rule_files).toEqual(['rules.yml']);
    expect(local.global).toEqual(config.global);
    expect(retarget(config, {})).toEqual(config);
  });

  describe('judged by promtool', () => {
    beforeAll(requirePromTools);

    it.each([
      ['defaults (DNS discovery of the pods)', {}],
      ['one replica (static target)', { BACKEND_REPLICAS: '1' }],
      ['30s scrape interval', { PROMETHEUS_SCRAPE_INTERVAL: '30s' }],
    ])('%s: promtool check config passes', (_n, env) => {
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
