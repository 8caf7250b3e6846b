import { load, loadAll } from 'js-yaml';
import { App, Chart, Duration, Size } from 'cdk8s';
import { Cpu, Namespaces, NetworkPolicyPort, Pods, Probe, Protocol } from 'cdk8s-plus-27';
import { loadStackSettings, SearchBackendStack, selectorLabels } from '../../charts';
import type { Manifest } from '../../tools/read-manifests';
import { referenceProblems, schemaProblems } from '../../tools/validate';
import { find, type Json } from './fixtures/stack';

const EXPORTER = { 'app.kubernetes.io/name': 'redis-exporter' };

/**
 * A platform team's Chart that composes with the stack's cdk8s-plus constructs instead of patching
 * YAML: a log-shipping sidecar on the backend, and its own exporter let through the kvstore's policy.
 */
function composedYaml(): { manifests: Manifest[]; yaml: string; stack: SearchBackendStack } {
  const app = new App({ outdir: '/nonexistent' });
  const chart = new Chart(app, 'platform', { namespace: 'search' });
  const stack = new SearchBackendStack(chart, 'search', { settings: loadStackSettings({ HPA_ENABLED: 'true' }) });

  stack.backend.deployment.addContainer({
    name: 'log-shipper',
    image: 'fluent/fluent-bit:3.0.7',
    args: ['--quiet'],
    ports: [{ name: 'metrics', number: 2020, protocol: Protocol.TCP }],
    // cdk8s-plus probes port 80 unless told (or given `portNumber`): make validate's reference check says so.
    liveness: Probe.fromHttpGet('/api/v1/health', { port: 2020, periodSeconds: Duration.seconds(30) }),
    resources: {
      cpu: { request: Cpu.millis(10), limit: Cpu.millis(100) },
      memory: { request: Size.mebibytes(16), limit: Size.mebibytes(64) },
    },
  });

  const exporter = Pods.select(chart, 'redis-exporter', {
    labels: EXPORTER,
    namespaces: Namespaces.select(chart, 'monitoring', { names: ['monitoring'] }),
  });
  stack.kvstore?.networkPolicy.addIngressRule(exporter, [NetworkPolicyPort.tcp(6379)]);

  const yaml = app.synthYaml();
  return { manifests: (loadAll(yaml) as Manifest[]).filter(Boolean), yaml, stack };
}

describe('composing with the stack’s cdk8s-plus constructs', () => {
  const { manifests, yaml, stack } = composedYaml();

  it('exposes the constructs a consumer composes with', () => {
    expect(stack.backend.deployment.containers.map((c) => c.name)).toEqual(['backend', 'log-shipper']);
    expect(stack.kvstore?.statefulSet.name).toBe('kvstore');
    expect(stack.kvstore?.networkPolicy.name).toBe('kvstore');
    expect(stack.backend.autoscaler?.maxReplicas).toBe(10);
  });

  it('puts the sidecar beside the backend container, which keeps its probes, secrets and restricted context', () => {
    const deploy: Json = find(manifests, 'Deployment', 'backend');
    const [backend, sidecar] = deploy.spec.template.spec.containers;
    expect(sidecar).toMatchObject({
      name: 'log-shipper',
      image: 'fluent/fluent-bit:3.0.7',
      ports: [{ name: 'metrics', containerPort: 2020 }],
    });
    // cdk8s-plus's defaults make the sidecar restricted too.
    expect(sidecar.securityContext).toMatchObject({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
    });
    expect(backend.name).toBe('backend');
    expect(backend.readinessProbe.httpGet.port).toBe('http');
    expect(backend.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    expect(deploy.spec.template.spec.securityContext.seccompProfile).toEqual({ type: 'RuntimeDefault' });
    // The selector is still the stable labels alone.
    expect(deploy.spec.selector).toEqual({ matchLabels: selectorLabels('backend') });
    // With the autoscaler the Deployment leaves the replica count alone.
    expect(deploy.spec.replicas).toBeUndefined();
  });

  it('lets the exporter through the kvstore’s policy beside the backend', () => {
    const np: Json = find(manifests, 'NetworkPolicy', 'kvstore');
    expect(np.spec.podSelector).toEqual({ matchLabels: selectorLabels('kvstore') });
    expect(np.spec.ingress).toEqual([
      { from: [{ podSelector: { matchLabels: selectorLabels('backend') } }], ports: [{ port: 6379, protocol: 'TCP' }] },
      {
        from: [
          {
            podSelector: { matchLabels: EXPORTER },
            namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
          },
        ],
        ports: [{ port: 6379, protocol: 'TCP' }],
      },
    ]);
  });

  it('synthesizes YAML that shows both, valid against the Kubernetes schemas with every reference resolving', () => {
    const deployDoc = yaml.split('\n---\n').find((d) => /kind: Deployment\n/.test(d) && /\n  name: backend\n/.test(d));
    expect(deployDoc).toContain('name: log-shipper');
    expect((load(deployDoc ?? '') as Json).spec.template.spec.containers).toHaveLength(2);
    expect(yaml).toContain('app.kubernetes.io/name: redis-exporter');
    expect(schemaProblems(manifests)).toEqual([]);
    expect(referenceProblems(manifests, stack.names)).toEqual([]);
  });
});
