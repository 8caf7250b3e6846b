import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import type { AlertmanagerConfig } from './generators/alertmanager-config';
import { ALERTMANAGER_PATHS, COMPONENTS, CONFIG_DOCUMENTS, PORTS, SECRETS, stackNames, type StackNames } from './generators/names';
import { toYaml } from './generators/yaml';
import { imagePullPolicy, pullSecrets } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { resourceRequirements, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, type RunAs } from './security';
import { httpProbe } from './probes';

/** What `Alertmanager` deploys. */
export interface AlertmanagerProps {
  readonly image: string;
  /** `alertmanager.yml` (from `alertmanagerConfig`). */
  readonly config: AlertmanagerConfig;
  /** @default requests 20m / 64Mi, limits 200m / 256Mi */
  readonly resources?: ComputeResources;
  /** The nobody user of the official image. @default 65534:65534 */
  readonly runAs?: RunAs;
  /** Object names of the stack this belongs to. @default stackNames('') */
  readonly names?: StackNames;
  /** Secrets the pod pulls its image with. @default none */
  readonly imagePullSecrets?: readonly string[];
}

/**
 * Alertmanager (one replica, clustering off): ConfigMap with `alertmanager.yml`, the optional
 * `alertmanager-secrets` Secret mounted as files for the config's `*_file` fields, the
 * Deployment and Service `alertmanager:9093`. Silences live in an emptyDir.
 */
export class Alertmanager extends Construct {
  readonly deployment: k8s.KubeDeployment;
  readonly service: k8s.KubeService;

  constructor(scope: Construct, id: string, props: AlertmanagerProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.alertmanager;
    const labels = objectLabels(COMPONENTS.alertmanager, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.alertmanager, names.instance);
    const runAs = props.runAs ?? { user: 65534, group: 65534 };
    const configText = toYaml(props.config);
    const cfg = CONFIG_DOCUMENTS.alertmanagerConfig;

    new k8s.KubeConfigMap(this, 'config', { metadata: { name: names.alertmanagerConfig, labels }, data: { [cfg.key]: configText } });

    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name, labels },
      spec: {
        replicas: 1,
        selector: { matchLabels: selector },
        template: {
          metadata: { labels: selector, annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(configText) } },
          spec: {
            automountServiceAccountToken: false,
            ...pullSecrets(props.imagePullSecrets),
            securityContext: restrictedPodSecurity(runAs),
            containers: [
              {
                name,
                image: props.image,
                imagePullPolicy: imagePullPolicy(props.image),
                args: [
                  `--config.file=${ALERTMANAGER_PATHS.configDir}/${cfg.key}`,
                  `--storage.path=${ALERTMANAGER_PATHS.data}`,
                  `--web.listen-address=:${PORTS.alertmanager}`,
                  // One replica: no peers to gossip with.
                  '--cluster.listen-address=',
                ],
                ports: [{ name: 'web', containerPort: PORTS.alertmanager, protocol: 'TCP' }],
                readinessProbe: httpProbe('web', '/-/ready', { periodSeconds: 5 }),
                livenessProbe: httpProbe('web', '/-/healthy', { periodSeconds: 15 }),
                resources: resourceRequirements(
                  props.resources ?? { requests: { cpu: '20m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
                ),
                securityContext: RESTRICTED_CONTAINER,
                volumeMounts: [
                  { name: 'config', mountPath: ALERTMANAGER_PATHS.configDir, readOnly: true },
                  { name: 'secrets', mountPath: SECRETS.alertmanager.mountPath, readOnly: true },
                  { name: 'data', mountPath: ALERTMANAGER_PATHS.data },
                ],
              },
            ],
            volumes: [
              { name: 'config', configMap: { name: names.alertmanagerConfig } },
              // Optional: Alertmanager starts without it; a destination whose file is missing fails at send time.
              { name: 'secrets', secret: { secretName: names.alertmanagerSecret, optional: true, defaultMode: 0o440 } },
              { name: 'data', emptyDir: {} },
            ],
          },
        },
      },
    });

    this.service = new k8s.KubeService(this, 'service', {
      metadata: { name, labels },
      spec: {
        selector,
        ports: [{ name: 'web', port: PORTS.alertmanager, targetPort: k8s.IntOrString.fromString('web'), protocol: 'TCP' }],
      },
    });
  }
}
