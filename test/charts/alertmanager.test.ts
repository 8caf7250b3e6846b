import { load } from 'js-yaml';
import { Testing } from 'cdk8s';
import { Alertmanager, alertmanagerConfig, loadStackSettings } from '../../charts';
import { memoryChart, type Json } from './fixtures/stack';

const config = alertmanagerConfig(loadStackSettings({}));

function synth(): Json[] {
  const chart = memoryChart();
  new Alertmanager(chart, 'alertmanager', { image: 'prom/alertmanager:v0.25.0', config });
  return Testing.synth(chart);
}

describe('Alertmanager', () => {
  const objects = synth();
  const deployment = objects.find((o) => o.kind === 'Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  it('creates a ConfigMap, Deployment and Service alertmanager:9093', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/alertmanager-config',
      'Deployment/alertmanager',
      'Service/alertmanager',
    ]);
    expect(objects[2].spec.ports).toEqual([{ name: 'web', port: 9093, targetPort: 'web', protocol: 'TCP' }]);
  });

  it('carries the generated config unchanged and points the binary at it', () => {
    expect(load(objects[0].data['alertmanager.yml'])).toEqual(config);
    expect(container.args).toContain('--config.file=/etc/alertmanager/config/alertmanager.yml');
    expect(container.args).toContain('--cluster.listen-address=');
  });

  it('mounts the optional alertmanager-secrets Secret as files beside, not inside, the config', () => {
    expect(pod.volumes).toContainEqual({
      name: 'secrets',
      secret: { secretName: 'alertmanager-secrets', optional: true, defaultMode: 0o440 },
    });
    expect(container.volumeMounts).toEqual([
      { name: 'config', mountPath: '/etc/alertmanager/config', readOnly: true },
      { name: 'secrets', mountPath: '/etc/alertmanager/secrets', readOnly: true },
      { name: 'data', mountPath: '/alertmanager' },
    ]);
  });

  it('runs restricted with probes', () => {
    expect(pod.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 65534, fsGroup: 65534 });
    expect(container.securityContext).toMatchObject({ readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/-/ready', port: 'web', scheme: 'HTTP' });
    expect(pod.automountServiceAccountToken).toBe(false);
  });
});
