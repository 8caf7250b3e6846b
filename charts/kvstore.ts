import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import {
  ConfigMap,
  EnvValue,
  NetworkPolicy,
  NetworkPolicyPort,
  Pods,
  Probe,
  Protocol,
  Secret,
  StatefulSet,
  Volume,
  k8s,
  type Service,
} from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { patchContainer } from './container-patch';
import { KVSTORE_DATA_DIR } from './generators/kvstore-config';
import { COMPONENTS, PORTS, SECRETS, stackNames, type StackNames } from './generators/names';
import { addImagePullSecrets, imagePullPolicy } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { probesOnNamedPort } from './probes';
import { containerResources, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, runtimeDefaultSeccomp, type RunAs } from './security';
import { dropAddressSelector, exactService, selectExactly } from './selectors';

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
  /** The Redis StatefulSet (one replica). */
  readonly statefulSet: StatefulSet;
  /** Service `kvstore:6379`. */
  readonly service: Service;
  /** `redis.conf`. */
  readonly configMap: ConfigMap;
  /** Admits only the backend's pods; add peers with `networkPolicy.addIngressRule`. */
  readonly networkPolicy: NetworkPolicy;

  constructor(scope: Construct, id: string, props: KvstoreProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.kvstore;
    const labels = objectLabels(COMPONENTS.kvstore, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.kvstore, names.instance);
    const runAs = props.runAs ?? { user: 999, group: 1000 };

    this.configMap = new ConfigMap(this, 'config', {
      metadata: { name: names.kvstoreConfig, labels },
      data: { 'redis.conf': props.config },
    });

    this.service = exactService(this, 'service', {
      metadata: { name, labels },
      selector,
      ports: [{ name: 'redis', port: PORTS.kvstore }],
    });

    this.statefulSet = new StatefulSet(this, 'statefulset', {
      metadata: { name, labels },
      service: this.service,
      select: false,
      replicas: 1,
      podMetadata: { annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(props.config) } },
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity(runAs),
      terminationGracePeriod: Duration.seconds(30),
    });
    selectExactly(this.statefulSet, selector);
    // The StatefulSet made the Service select it by construct address too.
    dropAddressSelector(this.service);
    const secret = Secret.fromSecretName(this, 'app-secret', names.appSecret);
    const container = this.statefulSet.addContainer({
      name,
      image: props.image,
      imagePullPolicy: imagePullPolicy(props.image),
      command: ['sh', '-c', KVSTORE_START_SCRIPT],
      ports: [{ name: 'redis', number: PORTS.kvstore, protocol: Protocol.TCP }],
      envVariables: {
        KVSTORE_PASSWORD: EnvValue.fromSecretValue({ secret, key: SECRETS.app.keys.kvstorePassword }),
      },
      readiness: Probe.fromCommand(['sh', '-c', KVSTORE_READY_SCRIPT], {
        periodSeconds: Duration.seconds(5),
        timeoutSeconds: Duration.seconds(2),
      }),
      liveness: Probe.fromTcpSocket({
        port: PORTS.kvstore,
        periodSeconds: Duration.seconds(10),
        timeoutSeconds: Duration.seconds(2),
      }),
      resources: containerResources(
        props.resources ?? { requests: { cpu: '50m', memory: '64Mi' }, limits: { cpu: '500m', memory: '256Mi' } },
      ),
      securityContext: RESTRICTED_CONTAINER,
    });
    container.mount(CONFIG_DIR, Volume.fromConfigMap(this, 'config-volume', this.configMap, { name: 'config' }), {
      readOnly: true,
    });
    container.mount('/tmp', Volume.fromEmptyDir(this, 'tmp-volume', 'tmp'));
    addImagePullSecrets(this.statefulSet, props.imagePullSecrets);
    runtimeDefaultSeccomp(this.statefulSet, [container]);
    probesOnNamedPort(this.statefulSet, container, 'redis', [['livenessProbe', 'tcpSocket']]);

    // cdk8s-plus StatefulSets have no volumeClaimTemplates: the data volume is written as the API has it.
    patchContainer(this.statefulSet, container, (c) => [
      JsonPatch.add(`${c}/volumeMounts/0`, { name: 'data', mountPath: KVSTORE_DATA_DIR }),
    ]);
    ApiObject.of(this.statefulSet).addJsonPatch(
      JsonPatch.add('/spec/volumeClaimTemplates', [
        {
          metadata: { name: 'data', labels: selector },
          spec: {
            accessModes: ['ReadWriteOnce'],
            ...(props.storageClass ? { storageClassName: props.storageClass } : {}),
            resources: { requests: { storage: k8s.Quantity.fromString(props.storage) } },
          },
        },
      ]),
    );

    this.networkPolicy = new NetworkPolicy(this, 'network-policy', {
      metadata: { name, labels },
      // By the stable labels: cdk8s-plus would select the StatefulSet by its construct address.
      selector: Pods.select(this, 'pods', { labels: selector }),
      ingress: {
        rules: [
          {
            peer: Pods.select(this, 'clients', { labels: { ...props.clientSelector } }),
            ports: [NetworkPolicyPort.tcp(PORTS.kvstore)],
          },
        ],
      },
    });
  }
}
