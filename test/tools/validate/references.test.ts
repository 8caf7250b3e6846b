import type { Manifest } from '../../../tools/read-manifests';
import { referenceProblems } from '../../../tools/validate';
import { synthStack, type Json } from '../../charts/fixtures/stack';

const { manifests } = synthStack();

/** A deep copy of the stack with one object changed. */
function mutate(kind: string, name: string, change: (m: Json) => void): Manifest[] {
  const copy = JSON.parse(JSON.stringify(manifests)) as Json[];
  const target = copy.find((m) => m.kind === kind && m.metadata.name === name);
  change(target);
  return copy;
}

describe('referenceProblems', () => {
  it('finds nothing wrong with the stack', () => {
    expect(referenceProblems(manifests)).toEqual([]);
  });

  it.each<[string, Manifest[], string]>([
    [
      'a Service selecting nothing',
      mutate('Service', 'backend', (m) => (m.spec.selector = { app: 'nope' })),
      'Service/backend: selects no pods of any workload',
    ],
    [
      'a Service port without a container port',
      mutate('Service', 'prometheus', (m) => (m.spec.ports[0].targetPort = 'metrics')),
      'Service/prometheus: port 9090 targets metrics',
    ],
    [
      'a Service renamed',
      mutate('Service', 'alertmanager', (m) => (m.metadata.name = 'am')),
      'Service alertmanager is missing',
    ],
    [
      'a missing ConfigMap',
      mutate('ConfigMap', 'prometheus-rules', (m) => (m.metadata.name = 'rules')),
      'volume rules uses ConfigMap prometheus-rules, which is not defined',
    ],
    [
      'an envFrom of a missing ConfigMap',
      mutate('ConfigMap', 'backend-config', (m) => (m.metadata.name = 'cfg')),
      'envFrom ConfigMap backend-config is not defined',
    ],
    [
      'a mount inside a ConfigMap volume',
      mutate(
        'Deployment',
        'alertmanager',
        (m) => (m.spec.template.spec.containers[0].volumeMounts[0].mountPath = '/etc/alertmanager'),
      ),
      '/etc/alertmanager/secrets is mounted inside the read-only volume at /etc/alertmanager',
    ],
    [
      'a probe on an undeclared port',
      mutate('Deployment', 'backend', (m) => (m.spec.template.spec.containers[0].readinessProbe.httpGet.port = 'web')),
      'a probe targets port web',
    ],
    [
      'an undocumented Secret',
      mutate(
        'StatefulSet',
        'kvstore',
        (m) => (m.spec.template.spec.containers[0].env[0].valueFrom.secretKeyRef.name = 'redis'),
      ),
      'reads undocumented Secret redis',
    ],
    [
      'an object in another namespace',
      mutate('Service', 'kvstore', (m) => (m.metadata.namespace = 'default')),
      'Service/kvstore: in namespace default',
    ],
    [
      'a workload whose selector misses its pods',
      mutate('Deployment', 'prometheus', (m) => (m.spec.selector.matchLabels = { a: 'b' })),
      'selector does not match its own pod template labels',
    ],
  ])('reports %s', (_name, broken, message) => {
    expect(referenceProblems(broken).join('\n')).toContain(message);
  });

  it('reports a synthesized Secret: their values never enter the manifests', () => {
    const withSecret = [
      ...manifests,
      { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'svc-ai-search-secrets', namespace: 'svc-ai-search' } },
    ];
    expect(referenceProblems(withSecret)).toContain(
      'Secret/svc-ai-search-secrets: Secrets are created by the user (docs/stack.md), never synthesized',
    );
  });
});
