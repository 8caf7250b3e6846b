import { Duration } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { variableSpec } from '../configs';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { imagePullPolicy, pullSecrets } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { COMPONENTS, PORTS, SECRETS, stackNames, type StackNames } from './generators/names';
import { resourceRequirements, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, type RunAs } from './security';
import { httpProbe } from './probes';

/** Autoscaling of the backend on CPU. */
export interface BackendAutoscaling {
  /** Most replicas. */
  readonly maxReplicas: number;
  /** Target average CPU utilisation, percent of the request. */
  readonly cpuPercent: number;
}

/** What `Backend` deploys. */
export interface BackendProps {
  /** Container image. */
  readonly image: string;
  /** Replicas, or the autoscaler's minimum when `autoscaling` is set. */
  readonly replicas: number;
  /** Environment of the service (every non-secret setting); becomes the `backend-config` ConfigMap. */
  readonly environment: Readonly<Record<string, string>>;
  /** Port the process listens on (`PORT`). The Service always exposes 8080. @default 8080 */
  readonly containerPort?: number;
  /** Writable folder for `DATA_DIR` (the root filesystem is read-only); an emptyDir. */
  readonly dataDir: string;
  /** How long in-flight requests may drain on SIGTERM (`SHUTDOWN_TIMEOUT_SECONDS`); the pod gets 10 s more. @default 10 s */
  readonly shutdownTimeout?: Duration;
  /** Create a HorizontalPodAutoscaler. @default none */
  readonly autoscaling?: BackendAutoscaling;
  /** @default requests 100m / 128Mi, limits 1 CPU / 512Mi */
  readonly resources?: ComputeResources;
  /** @default 10001:10001 */
  readonly runAs?: RunAs;
  /** Object names of the stack this belongs to. @default stackNames('') */
  readonly names?: StackNames;
  /** Secrets the pod pulls its image with. @default none */
  readonly imagePullSecrets?: readonly string[];
}

/** Secret environment variables: referenced from `svc-ai-search-secrets`, never written. */
const SECRET_ENV: ReadonlyArray<readonly [string, string, boolean]> = [
  // Required: production refuses requests without a token, and the kvstore without its password.
  [variableSpec('API_TOKEN').name, SECRETS.app.keys.apiToken, false],
  // Optional: the extractive chat provider needs no key.
  [variableSpec('AI_API_KEY').name, SECRETS.app.keys.aiApiKey, true],
  [variableSpec('KVSTORE_PASSWORD').name, SECRETS.app.keys.kvstorePassword, false],
];

/** Name of the backend's ConfigMap (without a `NAME_PREFIX`). */
export const BACKEND_CONFIG_MAP = 'backend-config';

/**
 * The service: ConfigMap of settings, Deployment (probes, restricted security context, secrets by
 * reference), Service `backend:8080`, PodDisruptionBudget and, when enabled, an autoscaler.
 */
export class Backend extends Construct {
  readonly deployment: k8s.KubeDeployment;
  readonly service: k8s.KubeService;
  /** Headless `backend-pods`, present when more than one pod may run: Prometheus scrapes each pod through it. */
  readonly podsService?: k8s.KubeService;
  readonly configMap: k8s.KubeConfigMap;
  readonly autoscaler?: k8s.KubeHorizontalPodAutoscalerV2;

  constructor(scope: Construct, id: string, props: BackendProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.backend;
    const labels = objectLabels(COMPONENTS.backend, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.backend, names.instance);
    const containerPort = props.containerPort ?? PORTS.backend;
    const drain = props.shutdownTimeout ?? Duration.seconds(10);
    const runAs = props.runAs ?? { user: 10001, group: 10001 };
    const environment = Object.fromEntries(Object.entries(props.environment).sort(([a], [b]) => a.localeCompare(b)));

    this.node.addValidation({
      validate: () => {
        const errors: string[] = [];
        for (const [env] of SECRET_ENV) {
          if (env in props.environment) errors.push(`${env} is a secret and must not be in the ${names.backendConfig} ConfigMap`);
        }
        if (props.autoscaling && props.autoscaling.maxReplicas < props.replicas) {
          errors.push(`autoscaling.maxReplicas (${props.autoscaling.maxReplicas}) is below replicas (${props.replicas})`);
        }
        return errors;
      },
    });

    this.configMap = new k8s.KubeConfigMap(this, 'config', {
      metadata: { name: names.backendConfig, labels },
      data: environment,
    });

    const probe = (path: string, periodSeconds: number, failureThreshold: number) =>
      httpProbe('http', path, { periodSeconds, timeoutSeconds: 2, failureThreshold });

    this.deployment = new k8s.KubeDeployment(this, 'deployment', {
      metadata: { name, labels },
      spec: {
        // With an autoscaler the replica count is its business: `kubectl apply` must not reset it.
        replicas: props.autoscaling ? undefined : props.replicas,
        selector: { matchLabels: selector },
        strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: k8s.IntOrString.fromNumber(0), maxSurge: k8s.IntOrString.fromNumber(1) } },
        template: {
          metadata: { labels: selector, annotations: { [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(JSON.stringify(environment)) } },
          spec: {
            automountServiceAccountToken: false,
            ...pullSecrets(props.imagePullSecrets),
            securityContext: restrictedPodSecurity(runAs),
            terminationGracePeriodSeconds: drain.toSeconds() + 10,
            topologySpreadConstraints: [
              { maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'ScheduleAnyway', labelSelector: { matchLabels: selector } },
            ],
            containers: [
              {
                name,
                image: props.image,
                imagePullPolicy: imagePullPolicy(props.image),
                ports: [{ name: 'http', containerPort, protocol: 'TCP' }],
                envFrom: [{ configMapRef: { name: names.backendConfig } }],
                env: SECRET_ENV.map(([env, key, optional]) => ({
                  name: env,
                  valueFrom: { secretKeyRef: { name: names.appSecret, key, optional } },
                })),
                startupProbe: probe('/health/live', 2, 30),
                livenessProbe: probe('/health/live', 10, 3),
                readinessProbe: probe('/health/ready', 5, 3),
                resources: resourceRequirements(
                  props.resources ?? { requests: { cpu: '100m', memory: '128Mi' }, limits: { cpu: '1', memory: '512Mi' } },
                ),
                securityContext: RESTRICTED_CONTAINER,
                volumeMounts: [
                  { name: 'data', mountPath: props.dataDir },
                  { name: 'tmp', mountPath: '/tmp' },
                ],
              },
            ],
            volumes: [
              { name: 'data', emptyDir: {} },
              { name: 'tmp', emptyDir: {} },
            ],
          },
        },
      },
    });

    this.service = new k8s.KubeService(this, 'service', {
      metadata: { name, labels },
      spec: {
        selector,
        ports: [{ name: 'http', port: PORTS.backend, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
      },
    });

    // Per-pod scraping: the ClusterIP Service would spread scrapes over pods and interleave their counters.
    if (props.replicas > 1 || props.autoscaling) {
      this.podsService = new k8s.KubeService(this, 'pods-service', {
        metadata: { name: names.backendPods, labels },
        spec: {
          clusterIp: 'None',
          publishNotReadyAddresses: false,
          selector,
          ports: [{ name: 'http', port: PORTS.backend, targetPort: k8s.IntOrString.fromString('http'), protocol: 'TCP' }],
        },
      });
    }

    // One pod at a time may be evicted: with 2+ replicas one keeps serving, with 1 drains still work.
    new k8s.KubePodDisruptionBudget(this, 'pdb', {
      metadata: { name, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
    });

    if (props.autoscaling) {
      this.autoscaler = new k8s.KubeHorizontalPodAutoscalerV2(this, 'hpa', {
        metadata: { name, labels },
        spec: {
          scaleTargetRef: { apiVersion: 'apps/v1', kind: 'Deployment', name },
          minReplicas: props.replicas,
          maxReplicas: props.autoscaling.maxReplicas,
          metrics: [
            {
              type: 'Resource',
              resource: { name: 'cpu', target: { type: 'Utilization', averageUtilization: props.autoscaling.cpuPercent } },
            },
          ],
        },
      });
    }
  }
}
