import { Chart, Testing } from 'cdk8s';
import { BackendServiceMonitor, stackNames } from '../../../charts';
import { memoryApp, find, synthStack, type Json } from '../fixtures/stack';
import { SCRAPE_JOB } from '../../../contract';

describe('BackendServiceMonitor', () => {
  it('scrapes the backend Service at /api/metrics/prometheus every PROMETHEUS_SCRAPE_INTERVAL, one target per pod, as job svc-ai-search-backend', () => {
    const stack = synthStack({ MONITORING_MODE: 'operator', PROMETHEUS_SCRAPE_INTERVAL: '30s', NAMESPACE: 'search' });
    const sm: Json = find(stack.manifests, 'ServiceMonitor', 'backend');
    expect(sm.apiVersion).toBe('monitoring.coreos.com/v1');
    expect(sm.metadata.namespace).toBe('search');
    expect(sm.spec.namespaceSelector).toEqual({ matchNames: ['search'] });
    expect(sm.spec.serviceDiscoveryRole).toBe('Endpoints');
    const service: Json = find(stack.manifests, 'Service', 'backend');
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(service.metadata.labels[k]).toBe(v);
    expect(sm.spec.endpoints).toEqual([
      {
        port: 'http',
        path: '/api/metrics/prometheus',
        scheme: 'http',
        interval: '30s',
        relabelings: [
          { action: 'keep', sourceLabels: ['__meta_kubernetes_service_name'], regex: 'backend' },
          { action: 'replace', targetLabel: 'job', replacement: SCRAPE_JOB },
        ],
      },
    ]);
    expect(service.spec.ports.map((p: Json) => p.name)).toContain('http');
  });

  it('keeps only the prefixed backend Service: the headless backend-pods Service has the same labels', () => {
    const stack = synthStack({ MONITORING_MODE: 'operator', NAME_PREFIX: 'team-a-' });
    const sm: Json = find(stack.manifests, 'ServiceMonitor', 'team-a-backend');
    const pods: Json = find(stack.manifests, 'Service', 'team-a-backend-pods');
    for (const [k, v] of Object.entries(sm.spec.selector.matchLabels)) expect(pods.metadata.labels[k]).toBe(v);
    expect(sm.spec.endpoints[0].relabelings[0]).toEqual({
      action: 'keep',
      sourceLabels: ['__meta_kubernetes_service_name'],
      regex: 'team-a-backend',
    });
  });

  it('carries the labels it is selected by, after the stack’s own', () => {
    const chart = new Chart(memoryApp(), 'test');
    new BackendServiceMonitor(chart, 'sm', {
      namespace: 'ns',
      interval: '15s',
      labels: { release: 'kube-prometheus-stack' },
      names: stackNames(),
    });
    const [sm] = Testing.synth(chart);
    expect(sm.metadata.labels).toMatchObject({
      release: 'kube-prometheus-stack',
      'app.kubernetes.io/part-of': 'svc-ai-search-backend',
    });
  });
});
