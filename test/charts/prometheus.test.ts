import { load } from 'js-yaml';
import { Testing } from 'cdk8s';
import {
  alertRules,
  loadStackSettings,
  longestRuleRangeMs,
  Prometheus,
  prometheusConfig,
  type PrometheusProps,
} from '../../charts';
import { memoryChart, type Json } from './fixtures/stack';

const settings = loadStackSettings({});
const PROPS: PrometheusProps = {
  image: 'prom/prometheus:v2.53.0',
  config: prometheusConfig(settings),
  rules: alertRules(settings),
  storage: '10Gi',
  retention: '15d',
};

function synth(props: Partial<PrometheusProps> = {}): Json[] {
  const chart = memoryChart();
  new Prometheus(chart, 'prometheus', { ...PROPS, ...props });
  return Testing.synth(chart);
}

const find = (objects: Json[], kind: string, name: string): Json =>
  objects.find((o) => o.kind === kind && o.metadata.name === name);

describe('Prometheus', () => {
  const objects = synth();
  const deployment = find(objects, 'Deployment', 'prometheus');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  it('creates its ConfigMaps, ServiceAccount, PersistentVolumeClaim, Deployment and Service prometheus:9090', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/prometheus-config',
      'ConfigMap/prometheus-rules',
      'ServiceAccount/prometheus',
      'PersistentVolumeClaim/prometheus-data',
      'Deployment/prometheus',
      'Service/prometheus',
    ]);
    expect(find(objects, 'Service', 'prometheus').spec.ports).toEqual([
      { name: 'web', port: 9090, targetPort: 'web', protocol: 'TCP' },
    ]);
  });

  it('carries the generated documents unchanged under clear keys', () => {
    expect(load(find(objects, 'ConfigMap', 'prometheus-config').data['prometheus.yml'])).toEqual(PROPS.config);
    expect(load(find(objects, 'ConfigMap', 'prometheus-rules').data['svc-ai-search-backend.rules.yml'])).toEqual(
      PROPS.rules,
    );
  });

  it('mounts the config and the rules where the config says, side by side', () => {
    expect(container.args).toEqual([
      '--config.file=/etc/prometheus/config/prometheus.yml',
      '--storage.tsdb.path=/prometheus',
      '--storage.tsdb.retention.time=15d',
      '--web.listen-address=:9090',
    ]);
    expect(container.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/prometheus/config', readOnly: true },
      { name: 'rules', mountPath: '/etc/prometheus/rules', readOnly: true },
      { name: 'data', mountPath: '/prometheus' },
    ]);
    const ruleFile = PROPS.config.rule_files[0];
    expect(ruleFile.startsWith('/etc/prometheus/rules/')).toBe(true);
  });

  it('keeps the TSDB on its claim, one writer at a time', () => {
    expect(find(objects, 'PersistentVolumeClaim', 'prometheus-data').spec).toEqual({
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '10Gi' } },
      // cdk8s-plus writes the Kubernetes default out.
      volumeMode: 'Filesystem',
    });
    expect(deployment.spec.strategy).toEqual({ type: 'Recreate' });
    expect(deployment.spec.replicas).toBe(1);
  });

  it('runs under its own ServiceAccount without an API token, restricted', () => {
    expect(pod.serviceAccountName).toBe('prometheus');
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(find(objects, 'ServiceAccount', 'prometheus').automountServiceAccountToken).toBe(false);
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 65534,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, allowPrivilegeEscalation: false });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/-/ready', port: 'web', scheme: 'HTTP' });
    expect(container.livenessProbe.httpGet).toEqual({ path: '/-/healthy', port: 'web', scheme: 'HTTP' });
  });

  it('restarts on a config or rule change', () => {
    const before = deployment.spec.template.metadata.annotations['checksum/config'];
    const other = alertRules(loadStackSettings({ ALERT_ERROR_RATE_THRESHOLD: '0.2' }));
    expect(
      find(synth({ rules: other }), 'Deployment', 'prometheus').spec.template.metadata.annotations['checksum/config'],
    ).not.toBe(before);
  });

  it('refuses a retention shorter than the longest rule range (the 3d burn-rate window)', () => {
    expect(longestRuleRangeMs(PROPS.rules)).toBe(3 * 86400000);
    expect(() => synth({ retention: '2d' })).toThrow(
      'retention 2d (PROMETHEUS_RETENTION) is shorter than the longest rule range (72h)',
    );
    expect(() => synth({ retention: '3d' })).not.toThrow();
  });
});
