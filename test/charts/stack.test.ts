import { backendEnvironment, selectorLabels } from '../../charts';
import { referenceProblems, schemaProblems } from '../../tools/validate';
import { find, SECRET_ENV, SECRET_VALUES, synthStack } from './fixtures/stack';

describe('the stack', () => {
  const stack = synthStack();

  it('writes one file per component, in the order kubectl apply needs', () => {
    expect([...stack.files.keys()]).toEqual([
      '0000-namespace.k8s.yaml',
      '0001-kvstore.k8s.yaml',
      '0002-backend.k8s.yaml',
      '0003-alertmanager.k8s.yaml',
      '0004-prometheus.k8s.yaml',
      '0005-dashboard.k8s.yaml',
    ]);
    expect(stack.manifests[0]).toMatchObject({ kind: 'Namespace', metadata: { name: 'svc-ai-search' } });
  });

  it('names the Services exactly backend, kvstore, alertmanager, prometheus, and the headless backend-pods', () => {
    const services = stack.manifests.filter((m) => m.kind === 'Service').map((m) => m.metadata.name);
    expect(services.sort()).toEqual(['alertmanager', 'backend', 'backend-pods', 'kvstore', 'prometheus']);
  });

  it('puts everything in the settings’ namespace, which enforces the restricted pod standard', () => {
    const other = synthStack({ NAMESPACE: 'search-prod' });
    for (const m of other.manifests.slice(1)) expect(m.metadata.namespace).toBe('search-prod');
    expect(
      find(other.manifests, 'Namespace', 'search-prod').metadata.labels['pod-security.kubernetes.io/enforce'],
    ).toBe('restricted');
  });

  it('is valid against the Kubernetes schemas, and every reference resolves', () => {
    expect(schemaProblems(stack.manifests)).toEqual([]);
    expect(referenceProblems(stack.manifests)).toEqual([]);
  });

  it('gives the backend every service setting as environment, with the deployed overrides', () => {
    const data = find(stack.manifests, 'ConfigMap', 'backend-config').data;
    expect(data).toEqual(backendEnvironment(stack.settings));
    expect(data).toMatchObject({
      ENVIRONMENT: 'production',
      TRUST_PROXY: '0',
      KVSTORE_URL: 'redis://kvstore:6379',
      PORT: '8080',
    });
    expect(Object.keys(data)).not.toEqual(expect.arrayContaining(['API_TOKEN']));
    for (const key of [
      'API_TOKEN',
      'AI_API_KEY',
      'KVSTORE_PASSWORD',
      'SMTP_PASSWORD',
      'CHAT_WEBHOOK_URL',
      'PROMETHEUS_SCRAPE_INTERVAL',
    ]) {
      expect(data[key]).toBeUndefined();
    }
  });

  it('takes replicas, image, storage and images from settings', () => {
    const s = synthStack({
      BACKEND_REPLICAS: '4',
      BACKEND_IMAGE: 'registry.example.com/search:2.0.0',
      KVSTORE_STORAGE: '5Gi',
      PROMETHEUS_STORAGE: '50Gi',
      PROMETHEUS_RETENTION: '30d',
    });
    const backend = find(s.manifests, 'Deployment', 'backend');
    expect(backend.spec.replicas).toBe(4);
    expect(backend.spec.template.spec.containers[0].image).toBe('registry.example.com/search:2.0.0');
    expect(
      find(s.manifests, 'StatefulSet', 'kvstore').spec.volumeClaimTemplates[0].spec.resources.requests.storage,
    ).toBe('5Gi');
    expect(find(s.manifests, 'PersistentVolumeClaim', 'prometheus-data').spec.resources.requests.storage).toBe('50Gi');
    expect(find(s.manifests, 'Deployment', 'prometheus').spec.template.spec.containers[0].args).toContain(
      '--storage.tsdb.retention.time=30d',
    );
  });

  it('adds the autoscaler when HPA_ENABLED', () => {
    const s = synthStack({ HPA_ENABLED: 'true', HPA_MAX_REPLICAS: '6', HPA_CPU_PERCENT: '60' });
    expect(find(s.manifests, 'HorizontalPodAutoscaler', 'backend').spec).toMatchObject({
      minReplicas: 2,
      maxReplicas: 6,
    });
    expect(schemaProblems(s.manifests)).toEqual([]);
    expect(referenceProblems(s.manifests)).toEqual([]);
    expect(stack.manifests.some((m) => m.kind === 'HorizontalPodAutoscaler')).toBe(false);
  });

  it('lets only the backend reach the kvstore', () => {
    const np = find(stack.manifests, 'NetworkPolicy', 'kvstore');
    expect(np.spec.ingress[0].from).toEqual([{ podSelector: { matchLabels: selectorLabels('backend') } }]);
    // The backend's pods carry those labels (and cdk8s-plus's address label, which the policy does not use).
    expect(find(stack.manifests, 'Deployment', 'backend').spec.template.metadata.labels).toMatchObject(
      selectorLabels('backend'),
    );
  });

  it('writes no secret value anywhere, and no Secret object, with every secret set at synth time', () => {
    const s = synthStack(SECRET_ENV);
    for (const [file, text] of s.files) {
      for (const v of SECRET_VALUES) expect({ file, leaks: text.includes(v) }).toEqual({ file, leaks: false });
    }
    expect(s.manifests.some((m) => m.kind === 'Secret')).toBe(false);
    expect(s.files.get('0003-alertmanager.k8s.yaml')).toContain('/etc/alertmanager/secrets/smtp-password');
  });

  it('fails synth on settings the constructs cannot honour', () => {
    expect(() => synthStack({ PROMETHEUS_RETENTION: '1d' })).toThrow('PROMETHEUS_RETENTION');
  });

  it('is the same for the same settings', () => {
    expect(synthStack().files).toEqual(stack.files);
  });
});

describe('the stack in operator mode', () => {
  const stack = synthStack({ MONITORING_MODE: 'operator' });

  it('writes the backend, the kvstore, the operator resources and the dashboard; no Prometheus or Alertmanager', () => {
    expect([...stack.files.keys()]).toEqual([
      '0000-namespace.k8s.yaml',
      '0001-kvstore.k8s.yaml',
      '0002-backend.k8s.yaml',
      '0003-monitoring.k8s.yaml',
      '0004-dashboard.k8s.yaml',
    ]);
    expect(stack.manifests.filter((m) => m.apiVersion.startsWith('monitoring.coreos.com/')).map((m) => m.kind)).toEqual(
      ['ServiceMonitor', 'PrometheusRule', 'AlertmanagerConfig'],
    );
    const services = stack.manifests.filter((m) => m.kind === 'Service').map((m) => m.metadata.name);
    expect(services.sort()).toEqual(['backend', 'backend-pods', 'kvstore']);
  });

  it('is valid against the Kubernetes and prometheus-operator schemas, and every reference resolves', () => {
    expect(schemaProblems(stack.manifests)).toEqual([]);
    expect(referenceProblems(stack.manifests)).toEqual([]);
  });
});
