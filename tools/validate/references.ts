import { COMPONENTS, PORTS, stackNames, type StackNames } from '../../charts/generators/names';
import type { Manifest } from '../read-manifests';
import { describe } from './schemas';
import type { KvstoreDeploy } from '../../configs';

/* Loose views of the fields the checks read; the schemas are checked separately. */
interface ContainerPort {
  name?: string;
  containerPort: number;
}
interface Container {
  name: string;
  ports?: ContainerPort[];
  envFrom?: Array<{ configMapRef?: { name: string }; secretRef?: { name: string } }>;
  env?: Array<{
    name: string;
    value?: string;
    valueFrom?: { secretKeyRef?: { name: string }; configMapKeyRef?: { name: string; key: string } };
  }>;
  volumeMounts?: Array<{ name: string; mountPath: string }>;
  readinessProbe?: Probe;
  livenessProbe?: Probe;
  startupProbe?: Probe;
}
interface Probe {
  httpGet?: { port: string | number };
  tcpSocket?: { port: string | number };
}
interface Volume {
  name: string;
  configMap?: { name: string; items?: Array<{ key: string }> };
  secret?: { secretName: string };
  persistentVolumeClaim?: { claimName: string };
}
interface PodSpec {
  containers: Container[];
  volumes?: Volume[];
  serviceAccountName?: string;
}
interface Workload {
  manifest: Manifest;
  podLabels: Record<string, string>;
  pod: PodSpec;
  claimTemplates: string[];
}

const DNS_SUBDOMAIN = /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/;
const DNS_LABEL_1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;

function spec<T>(m: Manifest): T {
  return (m.spec ?? {}) as T;
}

function selects(
  selector: Readonly<Record<string, string>> | undefined,
  labels: Readonly<Record<string, string>>,
): boolean {
  const entries = Object.entries(selector ?? {});
  return entries.length > 0 && entries.every(([k, v]) => labels[k] === v);
}

function workloads(manifests: readonly Manifest[]): Workload[] {
  return manifests
    .filter((m) => m.kind === 'Deployment' || m.kind === 'StatefulSet')
    .map((m) => {
      const s = spec<{
        template: { metadata?: { labels?: Record<string, string> }; spec: PodSpec };
        volumeClaimTemplates?: Array<{ metadata: { name: string } }>;
      }>(m);
      return {
        manifest: m,
        podLabels: s.template?.metadata?.labels ?? {},
        pod: s.template?.spec ?? { containers: [] },
        claimTemplates: (s.volumeClaimTemplates ?? []).map((t) => t.metadata.name),
      };
    });
}

function portExists(w: Workload, port: string | number): boolean {
  return w.pod.containers.some((c) =>
    (c.ports ?? []).some((p) => (typeof port === 'string' ? p.name === port : p.containerPort === port)),
  );
}

function checkWorkload(
  w: Workload,
  byKind: (kind: string, name: string) => Manifest | undefined,
  problems: string[],
  knownSecrets: ReadonlySet<string>,
): void {
  const me = describe(w.manifest);
  const selector = spec<{ selector?: { matchLabels?: Record<string, string> } }>(w.manifest).selector?.matchLabels;
  if (!selects(selector, w.podLabels)) problems.push(`${me}: selector does not match its own pod template labels`);
  if (w.pod.serviceAccountName && !byKind('ServiceAccount', w.pod.serviceAccountName)) {
    problems.push(`${me}: ServiceAccount ${w.pod.serviceAccountName} is not defined`);
  }
  const volumes = new Map((w.pod.volumes ?? []).map((v) => [v.name, v]));
  for (const v of w.pod.volumes ?? []) {
    if (v.configMap) {
      const cm = byKind('ConfigMap', v.configMap.name);
      if (!cm) problems.push(`${me}: volume ${v.name} uses ConfigMap ${v.configMap.name}, which is not defined`);
      for (const item of v.configMap.items ?? []) {
        if (cm && !((cm.data ?? {}) as Record<string, string>)[item.key])
          problems.push(`${me}: ConfigMap ${v.configMap.name} has no key ${item.key}`);
      }
    }
    if (v.persistentVolumeClaim && !byKind('PersistentVolumeClaim', v.persistentVolumeClaim.claimName)) {
      problems.push(`${me}: volume ${v.name} claims ${v.persistentVolumeClaim.claimName}, which is not defined`);
    }
    if (v.secret && !knownSecrets.has(v.secret.secretName))
      problems.push(`${me}: volume ${v.name} uses undocumented Secret ${v.secret.secretName}`);
  }
  for (const c of w.pod.containers) {
    for (const mount of c.volumeMounts ?? []) {
      if (!volumes.has(mount.name) && !w.claimTemplates.includes(mount.name))
        problems.push(`${me}: container ${c.name} mounts unknown volume ${mount.name}`);
    }
    // ConfigMap and Secret volumes are read-only: no mount point can be created inside them.
    for (const outer of c.volumeMounts ?? []) {
      const v = volumes.get(outer.name);
      if (!v?.configMap && !v?.secret) continue;
      for (const inner of c.volumeMounts ?? []) {
        if (inner.mountPath.startsWith(`${outer.mountPath}/`)) {
          problems.push(`${me}: ${inner.mountPath} is mounted inside the read-only volume at ${outer.mountPath}`);
        }
      }
    }
    for (const from of c.envFrom ?? []) {
      if (from.configMapRef && !byKind('ConfigMap', from.configMapRef.name))
        problems.push(`${me}: envFrom ConfigMap ${from.configMapRef.name} is not defined`);
      if (from.secretRef && !knownSecrets.has(from.secretRef.name))
        problems.push(`${me}: envFrom undocumented Secret ${from.secretRef.name}`);
    }
    for (const e of c.env ?? []) {
      const secret = e.valueFrom?.secretKeyRef?.name;
      if (secret && !knownSecrets.has(secret)) problems.push(`${me}: ${e.name} reads undocumented Secret ${secret}`);
      const cmRef = e.valueFrom?.configMapKeyRef;
      if (cmRef && !byKind('ConfigMap', cmRef.name))
        problems.push(`${me}: ${e.name} reads ConfigMap ${cmRef.name}, which is not defined`);
    }
    for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
      const port = probe?.httpGet?.port ?? probe?.tcpSocket?.port;
      if (port !== undefined && !portExists(w, port))
        problems.push(`${me}: a probe targets port ${port}, which container ${c.name} does not declare`);
    }
  }
}

/** What the stack was synthesized with, for the checks that depend on it. */
export interface ReferenceOptions {
  /** `KVSTORE_DEPLOY`: with `external` no kvstore object may exist. @default 'in-cluster' */
  readonly kvstoreDeploy?: KvstoreDeploy;
}

/**
 * What a schema cannot see: one namespace for everything, valid and unique names, no Secret
 * objects (their values never enter the manifests), every Service, PodDisruptionBudget,
 * NetworkPolicy and autoscaler pointing at a workload that exists, every ConfigMap, claim,
 * ServiceAccount and port that a pod refers to defined, and the four Services of spec and issue
 * at their ports (for each stack in `stacks`, by its names; no kvstore at all with
 * `KVSTORE_DEPLOY=external`). These are the mistakes that make a first `kubectl apply` fail or hang.
 */
export function referenceProblems(
  manifests: readonly Manifest[],
  stacks: StackNames | readonly StackNames[] = stackNames(),
  options: ReferenceOptions = {},
): string[] {
  const stackList = Array.isArray(stacks) ? (stacks as readonly StackNames[]) : [stacks as StackNames];
  const knownSecrets = new Set<string>(stackList.flatMap((n) => [n.appSecret, n.alertmanagerSecret]));
  const problems: string[] = [];
  const namespaces = manifests.filter((m) => m.kind === 'Namespace');
  // No Namespace object is fine (CREATE_NAMESPACE=false, or a user's Chart): then everything shares the first object's.
  if (namespaces.length > 1) problems.push(`expected at most one Namespace, found ${namespaces.length}`);
  const namespace = namespaces[0]?.metadata.name ?? manifests.find((m) => m.kind !== 'Namespace')?.metadata.namespace;
  if (namespace === undefined) problems.push('no namespace: the objects have none and no Namespace object is defined');
  const seen = new Set<string>();
  for (const m of manifests) {
    const id = describe(m);
    if (seen.has(id)) problems.push(`${id} is defined twice`);
    seen.add(id);
    const name = m.metadata?.name ?? '';
    if (!DNS_SUBDOMAIN.test(name) || name.length > 253) problems.push(`${id}: name is not a valid DNS subdomain`);
    if (m.kind === 'Service' && (!DNS_LABEL_1035.test(name) || name.length > 63))
      problems.push(`${id}: a Service name must be a DNS-1035 label`);
    if (m.kind === 'Secret') problems.push(`${id}: Secrets are created by the user (docs/stack.md), never synthesized`);
    if (m.kind !== 'Namespace' && m.metadata.namespace !== namespace) {
      problems.push(`${id}: in namespace ${m.metadata.namespace ?? '<none>'}, not ${namespace}`);
    }
  }
  const byKind = (kind: string, name: string) => manifests.find((m) => m.kind === kind && m.metadata.name === name);
  const all = workloads(manifests);
  for (const w of all) checkWorkload(w, byKind, problems, knownSecrets);

  const selected = (m: Manifest, selector: Record<string, string> | undefined): Workload[] => {
    const hits = all.filter((w) => selects(selector, w.podLabels));
    if (hits.length === 0) problems.push(`${describe(m)}: selects no pods of any workload`);
    return hits;
  };
  for (const m of manifests) {
    if (m.kind === 'Service') {
      const s = spec<{
        selector?: Record<string, string>;
        ports?: Array<{ port: number; targetPort?: string | number }>;
      }>(m);
      const hits = selected(m, s.selector);
      if (hits.length > 1) problems.push(`${describe(m)}: selects the pods of ${hits.length} workloads`);
      for (const p of s.ports ?? []) {
        const target = p.targetPort ?? p.port;
        for (const w of hits)
          if (!portExists(w, target))
            problems.push(
              `${describe(m)}: port ${p.port} targets ${target}, which ${describe(w.manifest)} does not declare`,
            );
      }
    }
    if (m.kind === 'PodDisruptionBudget')
      selected(m, spec<{ selector?: { matchLabels?: Record<string, string> } }>(m).selector?.matchLabels);
    if (m.kind === 'NetworkPolicy')
      selected(m, spec<{ podSelector?: { matchLabels?: Record<string, string> } }>(m).podSelector?.matchLabels);
    if (m.kind === 'HorizontalPodAutoscaler') {
      const ref = spec<{ scaleTargetRef: { kind: string; name: string } }>(m).scaleTargetRef;
      if (!byKind(ref.kind, ref.name))
        problems.push(`${describe(m)}: scales ${ref.kind}/${ref.name}, which is not defined`);
    }
  }

  // Operator mode (a ServiceMonitor stands in) deploys no Prometheus or Alertmanager of its own.
  const operatorMode = manifests.some((m) => m.kind === 'ServiceMonitor');
  const external = options.kvstoreDeploy === 'external';
  const components = Object.values(COMPONENTS).filter(
    (c) =>
      (!operatorMode || (c !== COMPONENTS.prometheus && c !== COMPONENTS.alertmanager)) &&
      !(external && c === COMPONENTS.kvstore),
  );
  if (external) {
    for (const names of stackList) {
      for (const m of manifests) {
        if (m.metadata.name === names.kvstore || m.metadata.name === names.kvstoreConfig)
          problems.push(`${describe(m)}: KVSTORE_DEPLOY=external deploys no kvstore`);
      }
    }
  }
  for (const names of stackList)
    for (const c of components) {
      const svc = byKind('Service', names[c]);
      const port = PORTS[c];
      const ports = spec<{ ports?: Array<{ port: number }> }>(svc ?? ({} as Manifest)).ports ?? [];
      if (!svc) problems.push(`Service ${names[c]} is missing`);
      else if (!ports.some((p) => p.port === port)) problems.push(`Service ${names[c]} does not expose port ${port}`);
    }
  return problems;
}
