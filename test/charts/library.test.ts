import { App, Chart, Testing } from 'cdk8s';
import {
  imagePullPolicy,
  imageVersion,
  loadStackSettings,
  selectorLabels,
  SearchBackendStack,
  stackNames,
  stackWarnings,
} from '../../charts';
import type { Manifest } from '../../tools/read-manifests';
import { referenceProblems, schemaProblems } from '../../tools/validate';
import { memoryApp, find, synthStack, type Json } from './fixtures/stack';

/** Two stacks with different prefixes inside one user Chart. */
function twoStacksInOneChart(): { manifests: Manifest[]; a: SearchBackendStack; b: SearchBackendStack } {
  const app = memoryApp();
  const chart = new Chart(app, 'team', { namespace: 'shared-ns' });
  const settings = loadStackSettings({ BACKEND_REPLICAS: '1' });
  const a = new SearchBackendStack(chart, 'a', { settings, namePrefix: 'team-a-' });
  const b = new SearchBackendStack(chart, 'b', { settings: loadStackSettings({}), namePrefix: 'team-b-' });
  return { manifests: Testing.synth(chart) as Manifest[], a, b };
}

describe('SearchBackendStack inside a user Chart', () => {
  const { manifests, a, b } = twoStacksInOneChart();

  it('writes no Namespace, and every object takes the Chart’s namespace', () => {
    expect(manifests.some((m) => m.kind === 'Namespace')).toBe(false);
    expect(manifests.filter((m) => m.metadata.namespace !== 'shared-ns')).toEqual([]);
  });

  it('synthesizes two prefixed stacks without a name collision, valid and with every reference resolving', () => {
    const keys = manifests.map((m) => `${m.kind}/${m.metadata.name}`);
    expect(new Set(keys).size).toBe(keys.length);
    expect(schemaProblems(manifests)).toEqual([]);
    expect(referenceProblems(manifests, [a.names, b.names])).toEqual([]);
  });

  it('wires each stack to its own backend, kvstore, alertmanager, ConfigMaps and Secrets', () => {
    for (const [stack, p] of [
      [a, 'team-a-'],
      [b, 'team-b-'],
    ] as const) {
      const prom: Json = find(manifests, 'ConfigMap', `${p}prometheus-config`);
      const text: string = prom.data['prometheus.yml'];
      expect(text).toContain(`${p}alertmanager:9093`);
      expect(text).toContain(
        stack.settings.deploy.backendReplicas > 1 ? `${p}backend-pods.shared-ns.svc` : `${p}backend:8080`,
      );
      const cm: Json = find(manifests, 'ConfigMap', `${p}backend-config`);
      expect(cm.data.KVSTORE_URL).toBe(`redis://${p}kvstore:6379`);
      const deploy: Json = find(manifests, 'Deployment', `${p}backend`);
      const container = deploy.spec.template.spec.containers[0];
      expect(container.envFrom).toEqual([{ configMapRef: { name: `${p}backend-config` } }]);
      expect(container.env.filter((e: Json) => e.valueFrom).map((e: Json) => e.valueFrom.secretKeyRef.name)).toEqual([
        `${p}svc-ai-search-secrets`,
        `${p}svc-ai-search-secrets`,
        `${p}svc-ai-search-secrets`,
      ]);
      const svc: Json = find(manifests, 'Service', `${p}backend`);
      expect(svc.spec.selector).toEqual(selectorLabels('backend', stackNames(p).instance));
      const np: Json = find(manifests, 'NetworkPolicy', `${p}kvstore`);
      expect(np.spec.ingress[0].from).toEqual([
        { podSelector: { matchLabels: selectorLabels('backend', `${p}svc-ai-search-backend`) } },
      ]);
      expect(find(manifests, 'Deployment', `${p}alertmanager`).spec.template.spec.volumes).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ secret: expect.objectContaining({ secretName: `${p}alertmanager-secrets` }) }),
        ]),
      );
    }
    // One stack's Service never selects the other's pods.
    expect(find(manifests, 'Service', 'team-a-backend').spec.selector).not.toEqual(
      find(manifests, 'Service', 'team-b-backend').spec.selector,
    );
  });

  it('exposes its components for composition', () => {
    expect(a.backend.deployment.metadata.name).toBe('team-a-backend');
    expect(b.kvstore?.statefulSet.metadata.name).toBe('team-b-kvstore');
  });

  it('labels every object with instance, component and version', () => {
    const s = synthStack({ INGRESS_HOST: 'search.example.com' });
    for (const m of [...manifests, ...s.manifests]) {
      const l = m.metadata.labels ?? {};
      expect({
        m: `${m.kind}/${m.metadata.name}`,
        has: ['instance', 'component', 'version'].filter((k) => l[`app.kubernetes.io/${k}`] !== undefined),
      }).toEqual({ m: `${m.kind}/${m.metadata.name}`, has: ['instance', 'component', 'version'] });
    }
    expect(find(s.manifests, 'StatefulSet', 'kvstore').metadata.labels['app.kubernetes.io/version']).toBe('7.2-alpine');
    expect(imageVersion('r.example.com:5000/x@sha256:' + 'ab'.repeat(32))).toBe('sha256-abababababab');
    expect(imageVersion('r.example.com:5000/x')).toBe('latest');
  });
});

describe('SearchBackendStack at App level', () => {
  it('leaves an existing namespace alone with CREATE_NAMESPACE=false', () => {
    const s = synthStack({ CREATE_NAMESPACE: 'false', NAMESPACE: 'shared' });
    expect([...s.files.keys()]).toEqual([
      '0000-kvstore.k8s.yaml',
      '0001-backend.k8s.yaml',
      '0002-alertmanager.k8s.yaml',
      '0003-prometheus.k8s.yaml',
      '0004-dashboard.k8s.yaml',
    ]);
    expect(s.manifests.some((m) => m.kind === 'Namespace')).toBe(false);
    expect(s.manifests.every((m) => m.metadata.namespace === 'shared')).toBe(true);
    expect(schemaProblems(s.manifests)).toEqual([]);
    expect(referenceProblems(s.manifests)).toEqual([]);
  });

  it('takes NAME_PREFIX from the settings', () => {
    const s = synthStack({ NAME_PREFIX: 'blue-' });
    expect(find(s.manifests, 'ConfigMap', 'blue-backend-config').data.KVSTORE_URL).toBe('redis://blue-kvstore:6379');
    expect(referenceProblems(s.manifests, stackNames('blue-'))).toEqual([]);
    expect(schemaProblems(s.manifests)).toEqual([]);
  });

  it('fits two prefixed stacks in one App', () => {
    const app = new App({ outdir: '/nonexistent-not-written' });
    const settings = loadStackSettings({ CREATE_NAMESPACE: 'false' });
    new SearchBackendStack(app, 'a', { settings, namePrefix: 'a-' });
    new SearchBackendStack(app, 'b', { settings, namePrefix: 'b-' });
    expect(app.charts.map((c) => c.node.id)).toEqual([
      'a-kvstore',
      'a-backend',
      'a-alertmanager',
      'a-prometheus',
      'a-dashboard',
      'b-kvstore',
      'b-backend',
      'b-alertmanager',
      'b-prometheus',
      'b-dashboard',
    ]);
  });

  it('rejects a NAME_PREFIX that cannot start a DNS label', () => {
    expect(() => loadStackSettings({ NAME_PREFIX: 'Team_A' })).toThrow('NAME_PREFIX');
  });
});

describe('deploy settings', () => {
  it('writes an Ingress only with INGRESS_HOST, and trusts one proxy hop only then', () => {
    const plain = synthStack();
    expect(plain.manifests.some((m) => m.kind === 'Ingress')).toBe(false);
    expect(find(plain.manifests, 'ConfigMap', 'backend-config').data.TRUST_PROXY).toBe('0');

    const s = synthStack({
      INGRESS_HOST: 'search.example.com',
      INGRESS_TLS_SECRET: 'search-tls',
      INGRESS_CLASS: 'nginx',
    });
    const ingress: Json = find(s.manifests, 'Ingress', 'backend');
    expect(ingress.spec).toEqual({
      ingressClassName: 'nginx',
      tls: [{ hosts: ['search.example.com'], secretName: 'search-tls' }],
      rules: [
        {
          host: 'search.example.com',
          http: {
            paths: [
              { path: '/', pathType: 'Prefix', backend: { service: { name: 'backend', port: { number: 8080 } } } },
            ],
          },
        },
      ],
    });
    expect(find(s.manifests, 'ConfigMap', 'backend-config').data.TRUST_PROXY).toBe('1');
    expect(schemaProblems(s.manifests)).toEqual([]);
    expect(referenceProblems(s.manifests)).toEqual([]);
  });

  it('puts STORAGE_CLASS on both volumes and IMAGE_PULL_SECRETS on every pod', () => {
    const s = synthStack({ STORAGE_CLASS: 'fast-ssd', IMAGE_PULL_SECRETS: 'regcred,mirror' });
    expect(find(s.manifests, 'StatefulSet', 'kvstore').spec.volumeClaimTemplates[0].spec.storageClassName).toBe(
      'fast-ssd',
    );
    expect(find(s.manifests, 'PersistentVolumeClaim', 'prometheus-data').spec.storageClassName).toBe('fast-ssd');
    const pods = s.manifests.filter((m) => m.kind === 'Deployment' || m.kind === 'StatefulSet');
    expect(pods).toHaveLength(4);
    for (const m of pods)
      expect((m as Json).spec.template.spec.imagePullSecrets).toEqual([{ name: 'regcred' }, { name: 'mirror' }]);
    expect(schemaProblems(s.manifests)).toEqual([]);
  });

  it('pulls by digest or release tag IfNotPresent, and untagged or latest Always', () => {
    expect(imagePullPolicy('registry.example.com/search@sha256:' + 'a'.repeat(64))).toBe('IfNotPresent');
    expect(imagePullPolicy('registry.example.com:5000/search:1.2.3')).toBe('IfNotPresent');
    expect(imagePullPolicy('registry.example.com:5000/search')).toBe('Always');
    expect(imagePullPolicy('search:latest')).toBe('Always');
    const s = synthStack({ BACKEND_IMAGE: 'registry.example.com/search:latest' });
    expect(find(s.manifests, 'Deployment', 'backend').spec.template.spec.containers[0].imagePullPolicy).toBe('Always');
  });

  it('warns while BACKEND_IMAGE is the placeholder, and not after', () => {
    expect(stackWarnings(loadStackSettings({})).join()).toMatch(/BACKEND_IMAGE is still the placeholder/);
    expect(stackWarnings(loadStackSettings({ BACKEND_IMAGE: 'registry.example.com/search:1.0.0' }))).toEqual([]);
  });

  it('leaves spec.replicas to the autoscaler when HPA_ENABLED', () => {
    const s = synthStack({ HPA_ENABLED: 'true' });
    expect(find(s.manifests, 'Deployment', 'backend').spec.replicas).toBeUndefined();
  });
});
