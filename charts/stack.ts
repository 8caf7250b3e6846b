import { Chart, Duration } from 'cdk8s';
import { Namespace } from 'cdk8s-plus-27';
import { Construct } from 'constructs';
import { readSynonymsFile, serviceEnvironment, variableSpec, type Settings } from '../configs';
import { Alertmanager } from './alertmanager';
import { Backend, DEFAULT_BACKEND_RESOURCES } from './backend';
import { backendSecretEnvironment } from './backend-secrets';
import { GrafanaDashboard } from './dashboard';
import { BackendIngress } from './ingress';
import { alertmanagerConfig } from './generators/alertmanager-config';
import { alertRules } from './generators/alert-rules';
import { dashboardFileName, grafanaDashboard } from './generators/dashboard';
import { kvstoreConfig } from './generators/kvstore-config';
import { COMPONENTS, stackNames, type StackNames } from './generators/names';
import { prometheusConfig } from './generators/prometheus-config';
import { Kvstore } from './kvstore';
import { imageVersion, PART_OF, selectorLabels } from './labels';
import { OperatorMonitoring } from './operator/operator-monitoring';
import { Prometheus } from './prometheus';

/**
 * The backend's environment in the cluster: every non-secret service setting (with it
 * `KVSTORE_MODE`, `KVSTORE_NODES`, `KVSTORE_SENTINEL_MASTER`), plus, with the in-cluster kvstore,
 * `KVSTORE_URL` of this stack's kvstore. That variable is flagged secret because a URL may carry
 * a password; this one does not (the password arrives as `KVSTORE_PASSWORD` from the Secret). An
 * external kvstore's URL comes from the Secret only (`backendSecretEnvironment`).
 */
export function backendEnvironment(
  settings: Settings,
  names: StackNames = stackNames(settings.deploy.namePrefix),
): Record<string, string> {
  const env = serviceEnvironment(settings);
  if (settings.deploy.kvstoreDeploy === 'external') return env;
  return { ...env, [variableSpec('KVSTORE_URL').name]: names.kvstoreUrl };
}

/** What `SearchBackendStack` deploys. */
export interface SearchBackendStackProps {
  /** The stack's settings, from `loadStackSettings(env)`. */
  readonly settings: Settings;
  /** Prefix of every object name, e.g. `team-a-`. @default settings.deploy.namePrefix (`NAME_PREFIX`, '') */
  readonly namePrefix?: string;
  /**
   * The text of the backend's synonyms file (`BackendProps.synonyms`). @default the file
   * `settings.search.synonymsFile` names, read here (a missing or malformed one throws
   * `SettingsError` naming `SEARCH_SYNONYMS_FILE` and the line); none without it
   */
  readonly synonyms?: string;
}

/**
 * The whole stack (kvstore, backend, Alertmanager, Prometheus) from one settings object. With
 * `KVSTORE_DEPLOY=external` no kvstore is deployed (`kvstore` is undefined) and the backend reads
 * the external Redis's URL from the Secret. With
 * `MONITORING_MODE=operator` the Prometheus and Alertmanager components are left out and
 * `operator` holds a ServiceMonitor, a PrometheusRule and an AlertmanagerConfig instead. Both
 * modes write the Grafana dashboard's ConfigMap (`dashboard`).
 *
 * - Inside a user's `Chart`: every object goes into that Chart and takes its namespace; no
 *   Namespace object is written (the Chart's owner has one).
 * - At App level (`scope` is the `App`, the root construct): one Chart per component, each depending on the one
 *   before, so `dist/` files sort in the order `kubectl apply -f dist/` needs, the Namespace
 *   first when `CREATE_NAMESPACE` (default true). Chart ids carry the name prefix, so two stacks
 *   fit in one App.
 *
 * The components are public, for composing (`stack.backend.deployment`).
 */
export class SearchBackendStack extends Construct {
  /** The object names of this stack. */
  readonly names: StackNames;
  /** The settings the stack was built from, with `namePrefix` applied. */
  readonly settings: Settings;
  /** Redis (`KVSTORE_DEPLOY=in-cluster` only): `kvstore.statefulSet`, `kvstore.service`, `kvstore.networkPolicy` (add peers with `addIngressRule`). */
  readonly kvstore?: Kvstore;
  /** The service: `backend.deployment` (add sidecars with `addContainer`), `backend.service`, `backend.autoscaler`. */
  readonly backend: Backend;
  /** The stack's Alertmanager (standalone mode only): `alertmanager.deployment`, `alertmanager.service`, `alertmanager.configMap`. */
  readonly alertmanager?: Alertmanager;
  /** The stack's Prometheus (standalone mode only): `prometheus.deployment`, `prometheus.service`, `prometheus.configMap`, `prometheus.dataClaim`. */
  readonly prometheus?: Prometheus;
  /** The prometheus-operator resources (operator mode only). */
  readonly operator?: OperatorMonitoring;
  /** The Grafana dashboard's ConfigMap (both modes). */
  readonly dashboard: GrafanaDashboard;
  /** The backend's Ingress, when `INGRESS_HOST` is set. */
  readonly ingress?: BackendIngress;
  /** The Namespace object, when written (App level with `CREATE_NAMESPACE`). */
  readonly namespace?: Namespace;

  constructor(scope: Construct, id: string, props: SearchBackendStackProps) {
    super(scope, id);
    const prefix = props.namePrefix ?? props.settings.deploy.namePrefix;
    // App level: a Chart per component, as siblings of this construct so file names stay `NNNN-<id>`.
    const app = scope.node.scope === undefined ? scope : undefined;
    // In a user's Chart its namespace wins: the generated configs (per-pod DNS names) must agree with it.
    const namespace = (app ? undefined : Chart.of(scope).namespace) ?? props.settings.deploy.namespace;
    const settings: Settings = {
      ...props.settings,
      deploy: { ...props.settings.deploy, namePrefix: prefix, namespace },
    };
    const names = stackNames(prefix);
    const d = settings.deploy;
    this.names = names;
    this.settings = settings;

    let previous: Chart | undefined;
    const home = (component: string): Construct => {
      if (!app) return this;
      const c = new Chart(app, `${prefix}${component}`, { namespace: d.namespace });
      if (previous) c.addDependency(previous);
      previous = c;
      return c;
    };

    if (app && d.createNamespace) {
      const chart = new Chart(app, `${prefix}namespace`);
      previous = chart;
      this.namespace = new Namespace(chart, 'namespace', {
        metadata: {
          name: d.namespace,
          labels: {
            'app.kubernetes.io/part-of': PART_OF,
            'app.kubernetes.io/instance': names.instance,
            'app.kubernetes.io/component': 'namespace',
            'app.kubernetes.io/version': imageVersion(d.backendImage),
            'app.kubernetes.io/managed-by': 'cdk8s',
            // Every pod here meets the "restricted" standard; the cluster refuses any that does not.
            'pod-security.kubernetes.io/enforce': 'restricted',
          },
        },
      });
    }

    if (d.kvstoreDeploy === 'in-cluster') {
      this.kvstore = new Kvstore(home(COMPONENTS.kvstore), `${prefix}kvstore`, {
        image: d.kvstoreImage,
        storage: d.kvstoreStorage,
        config: kvstoreConfig(),
        clientSelector: selectorLabels(COMPONENTS.backend, names.instance),
        names,
        storageClass: d.storageClass,
        imagePullSecrets: d.imagePullSecrets,
      });
    }

    this.backend = new Backend(home(COMPONENTS.backend), `${prefix}backend`, {
      image: d.backendImage,
      replicas: d.backendReplicas,
      resources: {
        requests: { cpu: DEFAULT_BACKEND_RESOURCES.requests.cpu, memory: d.backendMemoryRequest },
        limits: { cpu: DEFAULT_BACKEND_RESOURCES.limits.cpu, memory: d.backendMemoryLimit },
      },
      environment: backendEnvironment(settings, names),
      containerPort: settings.service.port,
      dataDir: settings.service.dataDir,
      shutdownTimeout: Duration.seconds(settings.service.shutdownTimeoutSeconds),
      autoscaling: d.hpaEnabled ? { maxReplicas: d.hpaMaxReplicas, cpuPercent: d.hpaCpuPercent } : undefined,
      names,
      imagePullSecrets: d.imagePullSecrets,
      secretEnvironment: backendSecretEnvironment({
        kvstoreDeploy: d.kvstoreDeploy,
        kvstoreMode: settings.kvstore.topology.mode,
        embeddings: settings.embeddings.provider !== 'none',
      }),
      synonyms: props.synonyms ?? readSynonymsFile(settings.search.synonymsFile)?.text,
    });
    if (d.ingressHost) {
      this.ingress = new BackendIngress(this.backend, 'ingress', {
        service: this.backend.service,
        host: d.ingressHost,
        tlsSecret: d.ingressTlsSecret,
        ingressClass: d.ingressClass,
        names,
        version: imageVersion(d.backendImage),
      });
    }

    if (d.monitoringMode === 'operator') {
      this.operator = new OperatorMonitoring(home('monitoring'), `${prefix}monitoring`, {
        settings,
        names,
        version: imageVersion(d.backendImage),
      });
    } else {
      this.alertmanager = new Alertmanager(home(COMPONENTS.alertmanager), `${prefix}alertmanager`, {
        image: d.alertmanagerImage,
        config: alertmanagerConfig(settings),
        names,
        imagePullSecrets: d.imagePullSecrets,
      });

      this.prometheus = new Prometheus(home(COMPONENTS.prometheus), `${prefix}prometheus`, {
        image: d.prometheusImage,
        config: prometheusConfig(settings),
        rules: alertRules(settings),
        storage: d.prometheusStorage,
        retention: d.prometheusRetention,
        names,
        storageClass: d.storageClass,
        imagePullSecrets: d.imagePullSecrets,
      });
    }

    this.dashboard = new GrafanaDashboard(home('dashboard'), `${prefix}dashboard`, {
      dashboard: grafanaDashboard(settings),
      fileName: dashboardFileName(settings),
      names,
      version: imageVersion(d.backendImage),
    });
  }
}
