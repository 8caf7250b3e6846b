import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import {
  ConfigMap,
  Deployment,
  DeploymentStrategy,
  PersistentVolumeAccessMode,
  PersistentVolumeClaim,
  Protocol,
  ServiceAccount,
  Volume,
  k8s,
  type Service,
} from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { durationMs } from '../configs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { COMPONENTS, CONFIG_DOCUMENTS, PORTS, PROMETHEUS_PATHS, stackNames, type StackNames } from './generators/names';
import type { PrometheusConfig } from './generators/prometheus-config';
import type { RuleFile } from './generators/rule-types';
import { toYaml } from './generators/yaml';
import { addImagePullSecrets, imagePullPolicy } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { httpProbe, probesOnNamedPort } from './probes';
import { containerResources, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, runtimeDefaultSeccomp, type RunAs } from './security';
import { exactService, selectExactly } from './selectors';

/** What `Prometheus` deploys. */
export interface PrometheusProps {
  readonly image: string;
  /** `prometheus.yml` (from `prometheusConfig`). */
  readonly config: PrometheusConfig;
  /** The rule file (from `alertRules`). */
  readonly rules: RuleFile;
  /** Size of the data PersistentVolumeClaim, e.g. `10Gi`. */
  readonly storage: string;
  /** `--storage.tsdb.retention.time`; must cover the longest range a rule reads. */
  readonly retention: string;
  /** @default requests 100m / 512Mi, limits 1 CPU / 2Gi */
  readonly resources?: ComputeResources;
  /** The nobody user of the official image. @default 65534:65534 */
  readonly runAs?: RunAs;
  /** Object names of the stack this belongs to. @default stackNames('') */
  readonly names?: StackNames;
  /** Secrets the pod pulls its image with. @default none */
  readonly imagePullSecrets?: readonly string[];
  /** StorageClass of the volume. @default the cluster's default class */
  readonly storageClass?: string;
}

/** Longest range selector (`[3d]`) in any rule, in milliseconds. */
export function longestRuleRangeMs(rules: RuleFile): number {
  let longest = 0;
  for (const group of rules.groups) {
    for (const rule of group.rules) {
      for (const m of rule.expr.matchAll(/\[(\d+(?:ms|s|m|h|d|w|y))+\]/g)) {
        longest = Math.max(longest, durationMs(m[0].slice(1, -1)));
      }
    }
  }
  return longest;
}

/**
 * Prometheus: ConfigMaps with `prometheus.yml` and the rule file, a PersistentVolumeClaim for the
 * TSDB, a ServiceAccount without API access (targets are static), the Deployment and Service
 * `prometheus:9090`.
 */
export class Prometheus extends Construct {
  /** The Prometheus Deployment (one replica, `Recreate`: one writer per TSDB). */
  readonly deployment: Deployment;
  /** Service `prometheus:9090`. */
  readonly service: Service;
  /** `prometheus.yml`. */
  readonly configMap: ConfigMap;
  /** The rule file. */
  readonly rulesConfigMap: ConfigMap;
  /** The TSDB's claim. */
  readonly dataClaim: PersistentVolumeClaim;
  /** Prometheus's own identity, without API access (targets are static). */
  readonly serviceAccount: ServiceAccount;

  constructor(scope: Construct, id: string, props: PrometheusProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.prometheus;
    const labels = objectLabels(COMPONENTS.prometheus, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.prometheus, names.instance);
    const runAs = props.runAs ?? { user: 65534, group: 65534 };
    const configText = toYaml(props.config);
    const rulesText = toYaml(props.rules);
    const { prometheusConfig: cfg, prometheusRules: rules } = CONFIG_DOCUMENTS;

    this.node.addValidation({
      validate: () => {
        const need = longestRuleRangeMs(props.rules);
        return durationMs(props.retention) < need
          ? [
              `retention ${props.retention} (PROMETHEUS_RETENTION) is shorter than the longest rule range (${need / 3600000}h): the burn-rate alerts would read missing data`,
            ]
          : [];
      },
    });

    this.configMap = new ConfigMap(this, 'config', {
      metadata: { name: names.prometheusConfig, labels },
      data: { [cfg.key]: configText },
    });
    this.rulesConfigMap = new ConfigMap(this, 'rules', {
      metadata: { name: names.prometheusRules, labels },
      data: { [rules.key]: rulesText },
    });

    this.serviceAccount = new ServiceAccount(this, 'service-account', {
      metadata: { name, labels },
      automountToken: false,
    });

    this.dataClaim = new PersistentVolumeClaim(this, 'data', {
      metadata: { name: names.prometheusData, labels },
      accessModes: [PersistentVolumeAccessMode.READ_WRITE_ONCE],
      storageClassName: props.storageClass,
    });
    // cdk8s-plus writes sizes in whole Gi; the size stays as the user wrote it (`PROMETHEUS_STORAGE`).
    ApiObject.of(this.dataClaim).addJsonPatch(
      JsonPatch.add('/spec/resources', { requests: { storage: k8s.Quantity.fromString(props.storage) } }),
    );

    this.deployment = new Deployment(this, 'deployment', {
      metadata: { name, labels },
      select: false,
      replicas: 1,
      // One writer per TSDB: the old pod releases the volume before the new one mounts it.
      strategy: DeploymentStrategy.recreate(),
      podMetadata: { annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(configText, rulesText) } },
      serviceAccount: this.serviceAccount,
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity(runAs),
      terminationGracePeriod: Duration.seconds(60),
    });
    selectExactly(this.deployment, selector);
    const container = this.deployment.addContainer({
      name,
      image: props.image,
      imagePullPolicy: imagePullPolicy(props.image),
      args: [
        `--config.file=${PROMETHEUS_PATHS.configDir}/${cfg.key}`,
        `--storage.tsdb.path=${PROMETHEUS_PATHS.data}`,
        `--storage.tsdb.retention.time=${props.retention}`,
        `--web.listen-address=:${PORTS.prometheus}`,
      ],
      ports: [{ name: 'web', number: PORTS.prometheus, protocol: Protocol.TCP }],
      readiness: httpProbe('/-/ready', { period: Duration.seconds(5) }),
      liveness: httpProbe('/-/healthy', { period: Duration.seconds(15) }),
      resources: containerResources(
        props.resources ?? { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
      ),
      securityContext: RESTRICTED_CONTAINER,
    });
    container.mount(
      PROMETHEUS_PATHS.configDir,
      Volume.fromConfigMap(this, 'config-volume', this.configMap, { name: 'config' }),
      { readOnly: true },
    );
    container.mount(
      PROMETHEUS_PATHS.rulesDir,
      Volume.fromConfigMap(this, 'rules-volume', this.rulesConfigMap, { name: 'rules' }),
      { readOnly: true },
    );
    container.mount(
      PROMETHEUS_PATHS.data,
      Volume.fromPersistentVolumeClaim(this, 'data-volume', this.dataClaim, { name: 'data' }),
    );
    probesOnNamedPort(this.deployment, container, 'web', [
      ['readinessProbe', 'httpGet'],
      ['livenessProbe', 'httpGet'],
    ]);
    addImagePullSecrets(this.deployment, props.imagePullSecrets);
    runtimeDefaultSeccomp(this.deployment, [container]);

    this.service = exactService(this, 'service', {
      metadata: { name, labels },
      selector,
      ports: [{ name: 'web', port: PORTS.prometheus }],
    });
  }
}
