import { Duration, Testing } from 'cdk8s';
import { Backend, type BackendProps } from '../../charts';
import { memoryChart, type Json } from './fixtures/stack';

const PROPS: BackendProps = {
  image: 'registry.example.com/svc-ai-search-backend:1.2.3',
  replicas: 3,
  environment: { PORT: '8080', ENVIRONMENT: 'production', KVSTORE_URL: 'redis://kvstore:6379' },
  dataDir: '/var/lib/svc-ai-search',
};

function synth(props: Partial<BackendProps> = {}): Json[] {
  const chart = memoryChart();
  new Backend(chart, 'backend', { ...PROPS, ...props });
  return Testing.synth(chart);
}

const of = (objects: Json[], kind: string): Json => objects.find((o) => o.kind === kind);

describe('Backend', () => {
  const objects = synth();
  const deployment = of(objects, 'Deployment');
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0];

  it('creates a ConfigMap, Deployment, Service and PodDisruptionBudget, all named backend-ish', () => {
    expect(objects.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual([
      'ConfigMap/backend-config',
      'Deployment/backend',
      'Service/backend',
      'Service/backend-pods',
      'PodDisruptionBudget/backend',
    ]);
  });

  it('adds the headless backend-pods Service for per-pod scraping when more than one pod may run', () => {
    const pods = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'backend-pods');
    const svc = objects.find((o) => o.kind === 'Service' && o.metadata.name === 'backend');
    expect(pods?.spec).toEqual({
      // cdk8s-plus writes the Kubernetes defaults out.
      type: 'ClusterIP',
      externalIPs: [],
      clusterIP: 'None',
      // publishNotReadyAddresses is left to its API default (false): unready pods have no DNS record.
      selector: svc?.spec.selector,
      ports: [{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }],
    });
    const names = (o: ReturnType<typeof synth>) => o.filter((x) => x.kind === 'Service').map((x) => x.metadata.name);
    expect(names(synth({ replicas: 1 }))).toEqual(['backend']);
    expect(names(synth({ replicas: 1, autoscaling: { maxReplicas: 4, cpuPercent: 70 } }))).toEqual([
      'backend',
      'backend-pods',
    ]);
  });

  it('puts the settings into the ConfigMap and loads it as environment', () => {
    expect(of(objects, 'ConfigMap').data).toEqual(PROPS.environment);
    expect(container.envFrom).toEqual([{ configMapRef: { name: 'backend-config' } }]);
  });

  it('references the secrets, never their values', () => {
    expect(container.env.filter((e: Json) => e.name !== 'NODE_OPTIONS')).toEqual(
      // API_TOKEN and KVSTORE_PASSWORD are required: the pod does not start without what production needs.
      ['API_TOKEN:api-token:false', 'AI_API_KEY:ai-api-key:true', 'KVSTORE_PASSWORD:kvstore-password:false'].map(
        (triple) => {
          const [name, key, optional] = triple.split(':');
          return {
            name,
            valueFrom: { secretKeyRef: { name: 'svc-ai-search-secrets', key, optional: optional === 'true' } },
          };
        },
      ),
    );
  });

  it('runs the image with the replicas of the settings', () => {
    expect(deployment.spec.replicas).toBe(3);
    expect(container.image).toBe(PROPS.image);
  });

  it('probes /health/live and /health/ready on the http port', () => {
    expect(container.ports).toEqual([{ name: 'http', containerPort: 8080, protocol: 'TCP' }]);
    expect(container.livenessProbe.httpGet).toEqual({ path: '/health/live', port: 'http', scheme: 'HTTP' });
    expect(container.readinessProbe.httpGet).toEqual({ path: '/health/ready', port: 'http', scheme: 'HTTP' });
    expect(container.startupProbe.httpGet).toEqual({ path: '/health/live', port: 'http', scheme: 'HTTP' });
  });

  it('sets resource requests and limits, and the heap limit from the memory limit (half of it)', () => {
    expect(container.resources).toEqual({
      requests: { cpu: '100m', memory: '2048Mi' },
      limits: { cpu: '1', memory: '3072Mi' },
    });
    expect(container.env).toContainEqual({ name: 'NODE_OPTIONS', value: '--max-old-space-size=1536' });
    const small = of(
      synth({ resources: { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '1', memory: '1Gi' } } }),
      'Deployment',
    );
    expect(small.spec.template.spec.containers[0].env).toContainEqual({
      name: 'NODE_OPTIONS',
      value: '--max-old-space-size=512',
    });
  });

  it('refuses a memory limit too small for the heap it sets, a request above the limit, and NODE_OPTIONS in the ConfigMap, naming the value', () => {
    const limits = (memory: string, request = '128Mi') =>
      synth({ resources: { requests: { cpu: '100m', memory: request }, limits: { cpu: '1', memory } } });
    expect(() => limits('384Mi')).toThrow(
      'resources.limits.memory=384Mi is too small for the heap it sets: --max-old-space-size would be 192 MiB (50% of the limit), below 256 MiB; give at least 512Mi',
    );
    expect(() => limits('512Mi')).not.toThrow();
    expect(() => limits('1Gi', '2Gi')).toThrow('resources.requests.memory=2Gi is above resources.limits.memory=1Gi');
    expect(() => synth({ environment: { ...PROPS.environment, NODE_OPTIONS: '--max-old-space-size=99999' } })).toThrow(
      'NODE_OPTIONS is set from resources.limits.memory',
    );
  });

  it('runs restricted: non-root, read-only root, no escalation, no capabilities, RuntimeDefault seccomp', () => {
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      runAsUser: 10001,
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(container.securityContext).toEqual({
      runAsNonRoot: true,
      allowPrivilegeEscalation: false,
      readOnlyRootFilesystem: true,
      privileged: false,
      capabilities: { drop: ['ALL'] },
      seccompProfile: { type: 'RuntimeDefault' },
    });
    expect(pod.automountServiceAccountToken).toBe(false);
    expect(container.volumeMounts).toEqual([
      { name: 'data', mountPath: '/var/lib/svc-ai-search' },
      { name: 'tmp', mountPath: '/tmp' },
    ]);
  });

  it('exposes Service backend on 8080 whatever port the process listens on', () => {
    const objs = synth({ containerPort: 9000 });
    expect(of(objs, 'Deployment').spec.template.spec.containers[0].ports[0].containerPort).toBe(9000);
    expect(of(objs, 'Service').spec.ports).toEqual([{ name: 'http', port: 8080, targetPort: 'http', protocol: 'TCP' }]);
    // The Deployment's own selector; the pods also carry cdk8s-plus's address label, which no selector uses.
    expect(of(objs, 'Service').spec.selector).toEqual(deployment.spec.selector.matchLabels);
    expect(deployment.spec.template.metadata.labels).toMatchObject(deployment.spec.selector.matchLabels);
  });

  it('gives the pod its drain time plus 10 s to stop', () => {
    expect(pod.terminationGracePeriodSeconds).toBe(20);
    expect(
      of(synth({ shutdownTimeout: Duration.seconds(45) }), 'Deployment').spec.template.spec
        .terminationGracePeriodSeconds,
    ).toBe(55);
  });

  it('rolls the pods when the settings change', () => {
    const a = deployment.spec.template.metadata.annotations['checksum/config'];
    const b = of(synth({ environment: { ...PROPS.environment, LOG_LEVEL: 'debug' } }), 'Deployment').spec.template
      .metadata.annotations['checksum/config'];
    expect(a).toMatch(/^[0-9a-f]{64}$/);
    expect(b).not.toBe(a);
    expect(of(synth(), 'Deployment').spec.template.metadata.annotations['checksum/config']).toBe(a);
  });

  it('lets one pod at a time be evicted', () => {
    expect(of(objects, 'PodDisruptionBudget').spec).toEqual({
      maxUnavailable: 1,
      selector: { matchLabels: deployment.spec.selector.matchLabels },
    });
  });

  it('adds an autoscaler when asked, and leaves the replica count to it', () => {
    const objs = synth({ autoscaling: { maxReplicas: 8, cpuPercent: 65 } });
    expect(of(objs, 'Deployment').spec.replicas).toBeUndefined();
    expect(of(objs, 'HorizontalPodAutoscaler')).toMatchObject({
      apiVersion: 'autoscaling/v2',
      spec: {
        scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name: 'backend' },
        minReplicas: 3,
        maxReplicas: 8,
        metrics: [
          { type: 'Resource', resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: 65 } } },
        ],
      },
    });
    expect(of(objects, 'HorizontalPodAutoscaler')).toBeUndefined();
  });

  it('refuses a secret in the ConfigMap and an autoscaler below its minimum', () => {
    expect(() => synth({ environment: { API_TOKEN: 'oops' } })).toThrow(
      'API_TOKEN is a secret and must not be in the backend-config ConfigMap',
    );
    expect(() => synth({ autoscaling: { maxReplicas: 2, cpuPercent: 70 } })).toThrow(
      'autoscaling.maxReplicas (2) is below replicas (3)',
    );
  });

  describe('with a synonyms file', () => {
    const text = '# ours\ncar, automobile\nphone => telephone\n';
    const withSynonyms = synth({ synonyms: text });
    const podSpec = of(withSynonyms, 'Deployment').spec.template.spec;

    it('adds the backend-synonyms ConfigMap holding the text, and nothing without one', () => {
      expect(withSynonyms.map((o) => `${o.kind}/${o.metadata.name}`)).toContain('ConfigMap/backend-synonyms');
      const cm = withSynonyms.find((o) => o.metadata.name === 'backend-synonyms');
      expect(cm.data).toEqual({ 'synonyms.txt': text });
      expect(objects.some((o) => o.metadata.name === 'backend-synonyms')).toBe(false);
      expect(pod.volumes.map((v: Json) => v.name)).not.toContain('synonyms');
    });

    it('mounts it read-only and points SEARCH_SYNONYMS_FILE at it', () => {
      expect(podSpec.volumes).toContainEqual({ name: 'synonyms', configMap: { name: 'backend-synonyms' } });
      expect(podSpec.containers[0].volumeMounts).toContainEqual({
        name: 'synonyms',
        mountPath: '/etc/svc-ai-search/synonyms',
        readOnly: true,
      });
      expect(of(withSynonyms, 'ConfigMap').data.SEARCH_SYNONYMS_FILE).toBe('/etc/svc-ai-search/synonyms/synonyms.txt');
    });

    it('rolls the pods when the file changes', () => {
      const sum = (o: Json[]) => of(o, 'Deployment').spec.template.metadata.annotations['checksum/config'];
      expect(sum(withSynonyms)).not.toBe(sum(objects));
      expect(sum(synth({ synonyms: `${text}tv, television\n` }))).not.toBe(sum(withSynonyms));
      expect(sum(synth({ synonyms: text }))).toBe(sum(withSynonyms));
    });

    it('refuses a malformed file naming its line, and a path without the text', () => {
      expect(() => synth({ synonyms: 'car, automobile\na =>\n' })).toThrow(
        'SEARCH_SYNONYMS_FILE="/etc/svc-ai-search/synonyms/synonyms.txt" line 2: "a =>" has nothing after =>',
      );
      expect(() => synth({ environment: { ...PROPS.environment, SEARCH_SYNONYMS_FILE: '/home/me/syn.txt' } })).toThrow(
        'SEARCH_SYNONYMS_FILE names a file of the synthesizing machine',
      );
    });
  });
});
