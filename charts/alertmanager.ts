import { Duration } from 'cdk8s';
import { ConfigMap, Deployment, Protocol, Secret, Volume, type Service } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import type { AlertmanagerConfig } from './generators/alertmanager-config';
import {
  ALERTMANAGER_PATHS,
  COMPONENTS,
  CONFIG_DOCUMENTS,
  PORTS,
  SECRETS,
  stackNames,
  type StackNames,
} from './generators/names';
import { toYaml } from './generators/yaml';
import { addImagePullSecrets, imagePullPolicy } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { httpProbe, probesOnNamedPort } from './probes';
import { containerResources, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, runtimeDefaultSeccomp, type RunAs } from './security';
import { exactService, selectExactly } from './selectors';

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
  /** The Alertmanager Deployment (one replica). */
  readonly deployment: Deployment;
  /** Service `alertmanager:9093`. */
  readonly service: Service;
  /** `alertmanager.yml`. */
  readonly configMap: ConfigMap;

  constructor(scope: Construct, id: string, props: AlertmanagerProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.alertmanager;
    const labels = objectLabels(COMPONENTS.alertmanager, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.alertmanager, names.instance);
    const runAs = props.runAs ?? { user: 65534, group: 65534 };
    const configText = toYaml(props.config);
    const cfg = CONFIG_DOCUMENTS.alertmanagerConfig;

    this.configMap = new ConfigMap(this, 'config', {
      metadata: { name: names.alertmanagerConfig, labels },
      data: { [cfg.key]: configText },
    });

    this.deployment = new Deployment(this, 'deployment', {
      metadata: { name, labels },
      select: false,
      replicas: 1,
      podMetadata: { annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(configText) } },
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity(runAs),
    });
    selectExactly(this.deployment, selector);
    const container = this.deployment.addContainer({
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
      ports: [{ name: 'web', number: PORTS.alertmanager, protocol: Protocol.TCP }],
      readiness: httpProbe('/-/ready', { period: Duration.seconds(5) }),
      liveness: httpProbe('/-/healthy', { period: Duration.seconds(15) }),
      resources: containerResources(
        props.resources ?? { requests: { cpu: '20m', memory: '64Mi' }, limits: { cpu: '200m', memory: '256Mi' } },
      ),
      securityContext: RESTRICTED_CONTAINER,
    });
    container.mount(
      ALERTMANAGER_PATHS.configDir,
      Volume.fromConfigMap(this, 'config-volume', this.configMap, { name: 'config' }),
      { readOnly: true },
    );
    // Optional: Alertmanager starts without it; a destination whose file is missing fails at send time.
    const secret = Secret.fromSecretName(this, 'secret', names.alertmanagerSecret);
    const secrets = Volume.fromSecret(this, 'secrets-volume', secret, {
      name: 'secrets',
      optional: true,
      defaultMode: 0o440,
    });
    container.mount(SECRETS.alertmanager.mountPath, secrets, { readOnly: true });
    container.mount(ALERTMANAGER_PATHS.data, Volume.fromEmptyDir(this, 'data-volume', 'data'));
    probesOnNamedPort(this.deployment, container, 'web', [
      ['readinessProbe', 'httpGet'],
      ['livenessProbe', 'httpGet'],
    ]);
    addImagePullSecrets(this.deployment, props.imagePullSecrets);
    runtimeDefaultSeccomp(this.deployment, [container]);

    this.service = exactService(this, 'service', {
      metadata: { name, labels },
      selector,
      ports: [{ name: 'web', port: PORTS.alertmanager }],
    });
  }
}
