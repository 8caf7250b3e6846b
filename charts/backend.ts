import { ApiObject, Duration, JsonPatch } from 'cdk8s';
import {
  ConfigMap,
  Deployment,
  DeploymentStrategy,
  Env,
  EnvValue,
  HorizontalPodAutoscaler,
  Metric,
  MetricTarget,
  PercentOrAbsolute,
  Protocol,
  Replicas,
  Secret,
  Volume,
  k8s,
  type Service,
} from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import {
  backendMemoryProblem,
  heapMiBFor,
  memoryMiB,
  parseSynonyms,
  SettingsError,
  SYNONYMS_VARIABLE,
  terminationGraceSeconds,
  variableSpec,
} from '../configs';
import { backendSecretEnvironment, type SecretEnvReference } from './backend-secrets';
import { configChecksum, CONFIG_CHECKSUM_ANNOTATION } from './checksum';
import { addImagePullSecrets, imagePullPolicy } from './images';
import { imageVersion, objectLabels, selectorLabels } from './labels';
import { PATHS } from '../contract';
import { COMPONENTS, PORTS, stackNames, type StackNames } from './generators/names';
import { httpProbe, probesOnNamedPort } from './probes';
import { containerResources, type ComputeResources } from './resources';
import { RESTRICTED_CONTAINER, restrictedPodSecurity, runtimeDefaultSeccomp, type RunAs } from './security';
import { exactService, selectExactly } from './selectors';
import { STACK_SYNONYMS_DIR, STACK_SYNONYMS_FILE } from './stack-settings';

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
  /** How long in-flight requests may drain on SIGTERM (`SHUTDOWN_TIMEOUT_SECONDS`); the pod gets `SHUTDOWN_GRACE_EXTRA_SECONDS` (10 s) more, to persist the search segment and close the stores. @default 10 s */
  readonly shutdownTimeout?: Duration;
  /** Create a HorizontalPodAutoscaler. @default none */
  readonly autoscaling?: BackendAutoscaling;
  /**
   * The container's requests and limits. The memory limit also sets the V8 heap limit
   * (`NODE_OPTIONS=--max-old-space-size`, half of it: configs/sections/backend-memory.ts); a
   * limit too small for a useful heap is refused by validation. @default `DEFAULT_BACKEND_RESOURCES`
   */
  readonly resources?: ComputeResources;
  /** @default 10001:10001 */
  readonly runAs?: RunAs;
  /** Object names of the stack this belongs to. @default stackNames('') */
  readonly names?: StackNames;
  /** Secrets the pod pulls its image with. @default none */
  readonly imagePullSecrets?: readonly string[];
  /**
   * Environment variables read from the app Secret by reference, never written.
   * @default backendSecretEnvironment(): API_TOKEN, AI_API_KEY and the in-cluster kvstore's KVSTORE_PASSWORD
   */
  readonly secretEnvironment?: readonly SecretEnvReference[];
  /**
   * The text of a synonyms file (Solr's format, docs/api.md#synonyms): the `backend-synonyms`
   * ConfigMap, mounted read-only at `STACK_SYNONYMS_FILE`, where `SEARCH_SYNONYMS_FILE` points;
   * its checksum is in the pods' annotation, so a changed file rolls them. @default none: no synonyms
   */
  readonly synonyms?: string;
}

/**
 * Requests 100m CPU / 2Gi, limits 1 CPU / 3Gi: room for a replica of 1,000,000 documents (README.md,
 * "Memory per replica"), the `BACKEND_MEMORY_*` settings' defaults.
 */
export const DEFAULT_BACKEND_RESOURCES: ComputeResources = {
  requests: { cpu: '100m', memory: '2Gi' },
  limits: { cpu: '1', memory: '3Gi' },
};

/**
 * The service: ConfigMap of settings, Deployment (probes, restricted security context, secrets by
 * reference), Service `backend:8080`, PodDisruptionBudget and, when enabled, an autoscaler.
 */
export class Backend extends Construct {
  /** The service's Deployment; add sidecars with `deployment.addContainer`. */
  readonly deployment: Deployment;
  /** Service `backend:8080`. */
  readonly service: Service;
  /** Headless `backend-pods`, present when more than one pod may run: Prometheus scrapes each pod through it. */
  readonly podsService?: Service;
  /** The service's settings, loaded as environment. */
  readonly configMap: ConfigMap;
  /** The synonyms file, when `synonyms` is given. */
  readonly synonymsConfigMap?: ConfigMap;
  /** One pod at a time may be evicted (cdk8s-plus has no PodDisruptionBudget construct). */
  readonly disruptionBudget: k8s.KubePodDisruptionBudget;
  /** The autoscaler, when `autoscaling` is set. */
  readonly autoscaler?: HorizontalPodAutoscaler;

  constructor(scope: Construct, id: string, props: BackendProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    const name = names.backend;
    const labels = objectLabels(COMPONENTS.backend, names.instance, imageVersion(props.image));
    const selector = selectorLabels(COMPONENTS.backend, names.instance);
    const containerPort = props.containerPort ?? PORTS.backend;
    const drain = props.shutdownTimeout ?? Duration.seconds(10);
    const runAs = props.runAs ?? { user: 10001, group: 10001 };
    const secretEnv = props.secretEnvironment ?? backendSecretEnvironment();
    const synonyms = props.synonyms;
    const withSynonyms =
      synonyms === undefined ? props.environment : { ...props.environment, [SYNONYMS_VARIABLE]: STACK_SYNONYMS_FILE };
    const environment = Object.fromEntries(Object.entries(withSynonyms).sort(([a], [b]) => a.localeCompare(b)));
    const resources = props.resources ?? DEFAULT_BACKEND_RESOURCES;
    const limitMiB = memoryMiB(resources.limits.memory);

    this.node.addValidation({
      validate: () => {
        const errors: string[] = [];
        for (const { variable } of secretEnv) {
          if (variable in props.environment)
            errors.push(`${variable} is a secret and must not be in the ${names.backendConfig} ConfigMap`);
        }
        for (const { variable } of secretEnv) {
          if (!variableSpec(variable).secret)
            errors.push(`${variable} is not a secret setting: it belongs in the ${names.backendConfig} ConfigMap`);
        }
        const memory = backendMemoryProblem(resources.requests.memory, resources.limits.memory, {
          request: 'resources.requests.memory',
          limit: 'resources.limits.memory',
        });
        if (memory) errors.push(memory.message);
        if ('NODE_OPTIONS' in props.environment)
          errors.push(
            `NODE_OPTIONS is set from resources.limits.memory (the heap limit) and must not be in the ${names.backendConfig} ConfigMap`,
          );
        if (synonyms === undefined && SYNONYMS_VARIABLE in props.environment)
          errors.push(
            `${SYNONYMS_VARIABLE} names a file of the synthesizing machine: give its text as \`synonyms\` (mounted at ${STACK_SYNONYMS_FILE})`,
          );
        if (synonyms !== undefined) {
          try {
            parseSynonyms(synonyms, STACK_SYNONYMS_FILE);
          } catch (e) {
            if (!(e instanceof SettingsError)) throw e;
            errors.push(...e.issues.map((i) => i.message));
          }
        }
        if (props.autoscaling && props.autoscaling.maxReplicas < props.replicas) {
          errors.push(
            `autoscaling.maxReplicas (${props.autoscaling.maxReplicas}) is below replicas (${props.replicas})`,
          );
        }
        return errors;
      },
    });

    this.configMap = new ConfigMap(this, 'config', {
      metadata: { name: names.backendConfig, labels },
      data: environment,
    });
    if (synonyms !== undefined) {
      this.synonymsConfigMap = new ConfigMap(this, 'synonyms', {
        metadata: { name: names.backendSynonyms, labels },
        data: { [STACK_SYNONYMS_FILE.slice(STACK_SYNONYMS_DIR.length + 1)]: synonyms },
      });
    }

    this.deployment = new Deployment(this, 'deployment', {
      metadata: { name, labels },
      select: false,
      // With an autoscaler the replica count is its business: `kubectl apply` must not reset it
      // (cdk8s-plus leaves `replicas` out of a Deployment an autoscaler targets).
      replicas: props.autoscaling ? undefined : props.replicas,
      strategy: DeploymentStrategy.rollingUpdate({
        maxUnavailable: PercentOrAbsolute.absolute(0),
        maxSurge: PercentOrAbsolute.absolute(1),
      }),
      podMetadata: {
        annotations: {
          [CONFIG_CHECKSUM_ANNOTATION]: configChecksum(
            JSON.stringify(environment),
            ...(synonyms === undefined ? [] : [synonyms]),
          ),
        },
      },
      automountServiceAccountToken: false,
      securityContext: restrictedPodSecurity(runAs),
      // The drain, then persisting the search segment and closing the stores (configs/sections/shutdown-grace.ts).
      terminationGracePeriod: Duration.seconds(terminationGraceSeconds(drain.toSeconds())),
    });
    selectExactly(this.deployment, selector);
    const secret = Secret.fromSecretName(this, 'app-secret', names.appSecret);
    const probe = (path: string, period: number, failureThreshold: number) =>
      httpProbe(path, { period: Duration.seconds(period), timeout: Duration.seconds(2), failureThreshold });
    const container = this.deployment.addContainer({
      name,
      image: props.image,
      imagePullPolicy: imagePullPolicy(props.image),
      ports: [{ name: 'http', number: containerPort, protocol: Protocol.TCP }],
      envFrom: [Env.fromConfigMap(this.configMap)],
      envVariables: {
        ...Object.fromEntries(
          secretEnv.map(({ variable, key, optional }) => [
            variable,
            EnvValue.fromSecretValue({ secret, key }, { optional }),
          ]),
        ),
        // The heap limit from the container's (Node would size it from the node's memory).
        ...(limitMiB === undefined
          ? {}
          : { NODE_OPTIONS: EnvValue.fromValue(`--max-old-space-size=${heapMiBFor(limitMiB)}`) }),
      },
      startup: probe(PATHS.live, 2, 30),
      liveness: probe(PATHS.live, 10, 3),
      readiness: probe(PATHS.ready, 5, 3),
      resources: containerResources(resources),
      securityContext: RESTRICTED_CONTAINER,
    });
    container.mount(props.dataDir, Volume.fromEmptyDir(this, 'data-volume', 'data'));
    container.mount('/tmp', Volume.fromEmptyDir(this, 'tmp-volume', 'tmp'));
    if (this.synonymsConfigMap) {
      const volume = Volume.fromConfigMap(this, 'synonyms-volume', this.synonymsConfigMap, { name: 'synonyms' });
      container.mount(STACK_SYNONYMS_DIR, volume, { readOnly: true });
    }
    probesOnNamedPort(this.deployment, container, 'http', [
      ['startupProbe', 'httpGet'],
      ['livenessProbe', 'httpGet'],
      ['readinessProbe', 'httpGet'],
    ]);
    addImagePullSecrets(this.deployment, props.imagePullSecrets);
    runtimeDefaultSeccomp(this.deployment, [container]);
    // cdk8s-plus's `spread` writes pod anti-affinity; a skew constraint still schedules when nodes run out.
    ApiObject.of(this.deployment).addJsonPatch(
      JsonPatch.add('/spec/template/spec/topologySpreadConstraints', [
        {
          maxSkew: 1,
          topologyKey: 'kubernetes.io/hostname',
          whenUnsatisfiable: 'ScheduleAnyway',
          labelSelector: { matchLabels: selector },
        },
      ]),
    );

    const ports = [{ name: 'http', port: PORTS.backend }];
    this.service = exactService(this, 'service', { metadata: { name, labels }, selector, ports });

    // Per-pod scraping: the ClusterIP Service would spread scrapes over pods and interleave their counters.
    if (props.replicas > 1 || props.autoscaling) {
      this.podsService = exactService(this, 'pods-service', {
        metadata: { name: names.backendPods, labels },
        selector,
        ports,
        clusterIP: 'None',
      });
    }

    // One pod at a time may be evicted: with 2+ replicas one keeps serving, with 1 drains still work.
    this.disruptionBudget = new k8s.KubePodDisruptionBudget(this, 'pdb', {
      metadata: { name, labels },
      spec: { maxUnavailable: k8s.IntOrString.fromNumber(1), selector: { matchLabels: selector } },
    });

    // Below its minimum the validation above names the settings; cdk8s-plus would throw its own words first.
    if (props.autoscaling && props.autoscaling.maxReplicas >= props.replicas) {
      this.autoscaler = new HorizontalPodAutoscaler(this, 'hpa', {
        metadata: { name, labels },
        target: this.deployment,
        minReplicas: props.replicas,
        maxReplicas: props.autoscaling.maxReplicas,
        metrics: [Metric.resourceCpu(MetricTarget.averageUtilization(props.autoscaling.cpuPercent))],
        // Kubernetes's own defaults, written out: cdk8s-plus's differ (4 pods or 200% a minute up, minReplicas per 5 min down).
        scaleUp: {
          stabilizationWindow: Duration.seconds(0),
          policies: [
            { replicas: Replicas.absolute(4), duration: Duration.seconds(15) },
            { replicas: Replicas.percent(100), duration: Duration.seconds(15) },
          ],
        },
        scaleDown: {
          stabilizationWindow: Duration.minutes(5),
          policies: [{ replicas: Replicas.percent(100), duration: Duration.seconds(15) }],
        },
      });
    }
  }
}
