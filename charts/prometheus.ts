import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { durationMs } from '../configs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { COMPONENTS, CONFIG_DOCUMENTS, PORTS, PROMETHEUS_PATHS, stackNames, type StackNames } from './generators/names';
import type { PrometheusConfig } from './generators/prometheus-config';
import type { RuleFile } from './generators/rule-types';
import { toYaml } from './generators/yaml';
import { imagePullPolicy, pullSecrets } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { resourceRequirements, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, type RunAs } from './security';
import { httpProbe } from './probes';

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
  readonly deployment: k8s.KubeDeployment;
  readonly service: k8s.KubeService;

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
          ? [`retention ${props.retention} (PROMETHEUS_RETENTION) is shorter than the longest rule range (${need / 3600000}h): the burn-rate alerts would read missing data`]
          : [];
      },
    });

    new k8s.KubeConfigMap(this, 'config', { metadata: { name: names.prometheusConfig, labels }, data: { [cfg.key]: configText } });
    new k8s.KubeConfigMap(this, 'rules', { metadata: { name: names.prometheusRules, labels }, data: { [rules.key]: rulesText } });

    new k8s.KubeServiceAccount(this, 'service-account', {
      metadata: { name, labels },
      automountServiceAccountToken: false,
    });

    const claim = names.prometheusData;
    new k8s.KubePersistentVolumeClaim(this, 'data', {
      metadata: { name: claim, labels },
      spec: { accessModes: ['ReadWriteOnce'], ...(props.storageClass ? { storageClassName: props.storageClass } : {}), resources: { requests: { storage: k8s.Quantity.fromString(props.storage) } } },
    });

    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        // One writer per TSDB: the old pod releases the volume before the new one mounts it.
        strategy: { type: 'Recreate' },
        template: {
          metadata: {
            labels: selector,
            annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(configText, rulesText) },
          },
          spec: {
            serviceAccountName: name,
            automountServiceAccountToken: false,
            ...pullSecrets(props.imagePullSecrets),
            securityContext: restrictedPodSecurity(runAs),
            terminationGracePeriodSeconds: 60,
            containers: [
              {
                name,
                image: props.image,
                imagePullPolicy: imagePullPolicy(props.image),
                args: [
                  `--config.file=${PROMETHEUS_PATHS.configDir}/${cfg.key}`,
                  `--storage.tsdb.path=${PROMETHEUS_PATHS.data}`,
                  `--storage.tsdb.retention.time=${props.retention}`,
                  `--web.listen-address=:${PORTS.prometheus}`,
                ],
                ports: [{ name: 'web', containerPort: PORTS.prometheus, protocol: 'TCP' }],
                readinessProbe: httpProbe('web', '/-/ready', { periodSeconds: 5 }),
                livenessProbe: httpProbe('web', '/-/healthy', { periodSeconds: 15 }),
                resources: resourceRequirements(
                  props.resources ?? { requests: { cpu: '100m', memory: '512Mi' }, limits: { cpu: '1', memory: '2Gi' } },
                ),
                securityContext: RESTRICTED_CONTAINER,
                volumeMounts: [
                  { name: 'config', mountPath: PROMETHEUS_PATHS.configDir, readOnly: true },
                  { name: 'rules', mountPath: PROMETHEUS_PATHS.rulesDir, readOnly: true },
                  { name: 'data', mountPath: PROMETHEUS_PATHS.data },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: names.prometheusConfig } },
              { name: 'rules', configMap: { name: names.prometheusRules } },
              { name: 'data', persistentVolumeClaim: { claimName: claim } },
            ],
          },
        },
      },
    });

    this.service = new k8s.KubeService(this, 'service', {
      metadata: { name, labels },
      spec: {
        selector,
        ports: [{ name: 'web', port: PORTS.prometheus, targetPort: k8s.IntOrString.fromString('web'), protocol: 'TCP' }],
      },
    });
  }
}
