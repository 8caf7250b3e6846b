import { CLUSTER_DEFAULT_RECEIVER, operatorRouteCases, validateStack } from '../../../tools/validate';
import { promTools, requirePromTools } from '../../../tools/harness/prom-tools';
import { SECRET_ENV, synthStack, type Json } from '../../charts/fixtures/stack';

describe('validateStack', () => {
  beforeAll(requirePromTools);

  it('passes the stack synthesized with every destination on, with the real tools', () => {
    const env = { ...SECRET_ENV, WEBHOOK_URL: 'https://hooks.example.com/alerts' };
    const stack = synthStack(env);
    const results = validateStack({
      manifests: stack.manifests,
      settings: stack.settings,
      tools: promTools,
      leakCheck: { files: stack.files, env },
    });
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.map((r) => r.check)).toEqual([
      'kubernetes schemas (20 objects)',
      'kubernetes references',
      'rules match the settings',
      'promtool check config',
      'promtool check rules',
      'promtool test rules (54 tests)',
      'amtool check-config',
      'amtool config routes test (41 cases)',
      'no secret values in the output',
    ]);
  });

  it.each([
    ['prefixed, no Namespace', { NAME_PREFIX: 'team-a-', CREATE_NAMESPACE: 'false' }],
    [
      'with an Ingress, storage class and pull secrets',
      {
        INGRESS_HOST: 'search.example.com',
        INGRESS_TLS_SECRET: 'tls',
        STORAGE_CLASS: 'fast',
        IMAGE_PULL_SECRETS: 'regcred',
      },
    ],
    ['autoscaled', { HPA_ENABLED: 'true' }],
  ])('passes every check for the %s variant', (_, env) => {
    const stack = synthStack(env);
    const results = validateStack({ manifests: stack.manifests, settings: stack.settings, tools: promTools });
    expect(results.filter((r) => !r.ok)).toEqual([]);
  });

  it('says so when the manifests were synthesized from other settings', () => {
    const stack = synthStack({ ALERT_ERROR_RATE_THRESHOLD: '0.2' });
    const other = synthStack({});
    const results = validateStack({
      manifests: stack.manifests,
      settings: other.settings,
      tools: promTools,
      routeCases: [],
    });
    expect(results.find((r) => r.check === 'rules match the settings')).toMatchObject({ ok: false });
    expect(results.some((r) => r.check.startsWith('promtool test rules'))).toBe(false);
  });

  it('reports a broken Alertmanager config and stops before routing it', () => {
    const stack = synthStack();
    const manifests = JSON.parse(JSON.stringify(stack.manifests)) as Json[];
    const cm = manifests.find((m) => m.metadata.name === 'alertmanager-config');
    cm.data['alertmanager.yml'] = cm.data['alertmanager.yml'].replace('receiver: default', 'receiver: nobody');
    const results = validateStack({ manifests, settings: stack.settings, tools: promTools });
    expect(results.find((r) => r.check === 'amtool check-config')).toMatchObject({
      ok: false,
      detail: expect.stringContaining('nobody'),
    });
    expect(results.some((r) => r.check.startsWith('amtool config routes test'))).toBe(false);
  });

  it('reports missing config documents', () => {
    const stack = synthStack();
    const results = validateStack({
      manifests: stack.manifests.filter((m) => m.metadata.name !== 'prometheus-rules'),
      settings: stack.settings,
      tools: promTools,
    });
    expect(results.find((r) => r.check === 'config documents in ConfigMaps')).toEqual({
      check: 'config documents in ConfigMaps',
      ok: false,
      detail: 'no ConfigMap prometheus-rules among the manifests',
    });
  });
});

describe('validateStack in operator mode', () => {
  beforeAll(requirePromTools);

  it('passes the operator-mode stack: CRD schemas, the PrometheusRule under promtool, the AlertmanagerConfig routed by amtool', () => {
    const env = {
      ...SECRET_ENV,
      MONITORING_MODE: 'operator',
      PROMETHEUS_RULE_LABELS: 'release=kube-prometheus-stack',
      WEBHOOK_URL: 'https://hooks.example.com/alerts',
    };
    const stack = synthStack(env);
    const results = validateStack({
      manifests: stack.manifests,
      settings: stack.settings,
      tools: promTools,
      leakCheck: { files: stack.files, env },
    });
    expect(results.filter((r) => !r.ok)).toEqual([]);
    expect(results.map((r) => r.check)).toEqual([
      expect.stringMatching(/^kubernetes schemas/),
      'kubernetes references',
      'operator resources',
      'PrometheusRule groups match the settings',
      'promtool check rules (PrometheusRule groups)',
      expect.stringMatching(/^promtool test rules on the PrometheusRule groups \(\d+ tests\)$/),
      'amtool check-config (AlertmanagerConfig routing, nested as the operator does)',
      expect.stringMatching(/^amtool config routes test, AlertmanagerConfig \(\d+ cases\)$/),
      'no secret values in the output',
    ]);
  });

  it.each([
    ['prefixed, no Namespace', { NAME_PREFIX: 'team-a-', CREATE_NAMESPACE: 'false' }],
    ['autoscaled, three replicas', { HPA_ENABLED: 'true', BACKEND_REPLICAS: '3' }],
  ])('passes every check for the %s variant', (_, env) => {
    const stack = synthStack({ ...env, MONITORING_MODE: 'operator' });
    expect(
      validateStack({ manifests: stack.manifests, settings: stack.settings, tools: promTools }).filter((r) => !r.ok),
    ).toEqual([]);
  });

  it('catches a schema error, a ServiceMonitor that would scrape every pod twice, and a job the rules would not find', () => {
    const stack = synthStack({ MONITORING_MODE: 'operator' });
    const manifests = JSON.parse(JSON.stringify(stack.manifests)) as Json[];
    const sm = manifests.find((m) => m.kind === 'ServiceMonitor');
    sm.spec.endpoints[0].relabelings = [];
    sm.spec.endpoints[0].scheme = 'ftp';
    const failed = validateStack({ manifests, settings: stack.settings, tools: promTools, routeCases: [] }).filter(
      (r) => !r.ok,
    );
    expect(failed.map((r) => r.check)).toEqual([expect.stringMatching(/^kubernetes schemas/), 'operator resources']);
    expect(failed[0].detail).toContain('ServiceMonitor/backend: data/spec/endpoints/0/scheme');
    expect(failed[1].detail).toContain('every pod would be scraped twice');
    expect(failed[1].detail).toContain('no relabeling sets job="svc-ai-search-backend"');
  });

  it('routes an alert of another namespace to none of its receivers', () => {
    const stack = synthStack({ MONITORING_MODE: 'operator' });
    const cases = operatorRouteCases(stack.settings.deploy.namespace);
    expect(cases.filter((c) => c.labels.namespace !== stack.settings.deploy.namespace)).toEqual([
      expect.objectContaining({ expected: [CLUSTER_DEFAULT_RECEIVER] }),
    ]);
    const results = validateStack({ manifests: stack.manifests, settings: stack.settings, tools: promTools });
    expect(results.find((r) => r.check.startsWith('amtool config routes test'))).toMatchObject({ ok: true });
  });
});
