import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { KVSTORE_DATA_DIR } from './generators/kvstore-config';
import { COMPONENTS, PORTS, SECRETS, stackNames, type StackNames } from './generators/names';
import { imagePullPolicy, pullSecrets } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { resourceRequirements, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, type RunAs } from './security';

/** What `Kvstore` deploys. */
export interface KvstoreProps {
  /** Redis image. */
  readonly image: string;
  /** Size of the PersistentVolumeClaim, e.g. `1Gi`. */
  readonly storage: string;
  /** `redis.conf` (from `kvstoreConfig`). */
  readonly config: string;
  /** Pod labels of the only clients the NetworkPolicy admits. */
  readonly clientSelector: Readonly<Record<string, string>>;
  /** @default requests 50m / 64Mi, limits 500m / 256Mi */
  readonly resources?: ComputeResources;
  /** The redis user of the official image. @default 999:1000 */
  readonly runAs?: RunAs;
  /** Object names of the stack this belongs to. @default stackNames('') */
  readonly names?: StackNames;
  /** Secrets the pod pulls its image with. @default none */
  readonly imagePullSecrets?: readonly string[];
  /** StorageClass of the volume. @default the cluster's default class */
  readonly storageClass?: string;
}

/** Name of the kvstore's ConfigMap. */
export const KVSTORE_CONFIG_MAP = 'kvstore-config';

const CONFIG_DIR = '/etc/redis';

/**
 * Starts Redis with the password on stdin, so it is neither in the manifest nor in the process
 * arguments; `exec` keeps redis-server as PID 1 so SIGTERM flushes the append-only file.
 */
export const KVSTORE_START_SCRIPT = [
  'if [ -z "$KVSTORE_PASSWORD" ]; then echo "KVSTORE_PASSWORD is empty: set kvstore-password in the svc-ai-search-secrets Secret" >&2; exit 1; fi',
  `exec redis-server ${CONFIG_DIR}/redis.conf - <<EOF`,
  'requirepass "$KVSTORE_PASSWORD"',
  'EOF',
  '',
].join('\n');

/** Readiness: an authenticated PING (the password goes through REDISCLI_AUTH, not the command line). */
export const KVSTORE_READY_SCRIPT = 'REDISCLI_AUTH="$KVSTORE_PASSWORD" redis-cli ping | grep -q PONG';

/**
 * The kvstore: a one-replica Redis StatefulSet with a PersistentVolumeClaim and append-only
 * persistence, its password from the Secret, Service `kvstore:6379`, and a NetworkPolicy that
 * admits only the backend.
 */
export class Kvstore extends Construct {
  readonly statefulSet: k8s.KubeStatefulSet;
  readonly service: k8s.KubeService;

  constructor(scope: Construct, id: string, props: KvstoreProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.kvstore;
    const labels = objectLabels(COMPONENTS.kvstore, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.kvstore, names.instance);
    const runAs = props.runAs ?? { user: 999, group: 1000 };

    new k8s.KubeConfigMap(this, 'config', {
      metadata: { name: names.kvstoreConfig, labels },
      data: { 'redis.conf': props.config },
    });

    this.service = new k8s.KubeService(this, 'service', {
      metadata: { name, labels },
      spec: {
        selector,
        ports: [{ name: 'redis', port: PORTS.kvstore, targetPort: k8s.IntOrString.fromString('redis'), protocol: 'TCP' }],
      },
    });

    this.statefulSet = new k8s.KubeStatefulSet(this, 'statefulset', {
      metadata: { name, labels },
      spec: {
        serviceName: name,
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: selector, annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(props.config) } },
          spec: {
            automountServiceAccountToken: false,
            ...pullSecrets(props.imagePullSecrets),
            securityContext: restrictedPodSecurity(runAs),
            terminationGracePeriodSeconds: 30,
            containers: [
              {
                name,
                image: props.image,
                imagePullPolicy: imagePullPolicy(props.image),
                command: ['sh', '-c', KVSTORE_START_SCRIPT],
                ports: [{ name: 'redis', containerPort: PORTS.kvstore, protocol: 'TCP' }],
                env: [
                  {
                    name: 'KVSTORE_PASSWORD',
                    valueFrom: { secretKeyRef: { name: names.appSecret, key: SECRETS.app.keys.kvstorePassword } },
                  },
                ],
                readinessProbe: { exec: { command: ['sh', '-c', KVSTORE_READY_SCRIPT] }, periodSeconds: 5, timeoutSeconds: 2 },
                livenessProbe: { tcpSocket: { port: k8s.IntOrString.fromString('redis') }, periodSeconds: 10, timeoutSeconds: 2 },
                resources: resourceRequirements(
                  props.resources ?? { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
                ),
                securityContext: RESTRICTED_CONTAINER,
                volumeMounts: [
                  { name: 'data', mountPath: KVSTORE_DATA_DIR },
                  { name: 'config', mountPath: CONFIG_DIR, readOnly: true },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: names.kvstoreConfig } },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
        volumeClaimTemplates: [
          {
            metadata: { name: 'data', labels: selector },
            spec: {
              accessModes: ['ReadWriteOnce'],
              ...(props.storageClass ? { storageClassName: props.storageClass } : {}),
              resources: { requests: { storage: k8s.Quantity.fromString(props.storage) } },
            },
          },
        ],
      },
    });

    new k8s.KubeNetworkPolicy(this, 'network-policy', {
      metadata: { name, labels },
      spec: {
        podSelector: { matchLabels: selector },
        policyTypes: ['Ingress'],
        ingress: [
          {
            from: [{ podSelector: { matchLabels: { ...props.clientSelector } } }],
            ports: [{ port: k8s.IntOrString.fromNumber(PORTS.kvstore), protocol: 'TCP' }],
          },
        ],
      },
    });
  }
}
