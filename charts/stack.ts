import { Chart, Duration, type App } from 'cdk8s';
import { k8s } from 'cdk8s-plus-27';
import { serviceEnvironment, variableSpec, type Settings } from '../configs';
import { Alertmanager } from './alertmanager';
import { Backend } from './backend';
import { alertmanagerConfig } from './generators/alertmanager-config';
import { alertRules } from './generators/alert-rules';
import { kvstoreConfig } from './generators/kvstore-config';
import { COMPONENTS, KVSTORE_URL } from './generators/names';
import { prometheusConfig } from './generators/prometheus-config';
import { Kvstore } from './kvstore';
import { PART_OF, selectorLabels } from './labels';
import { Prometheus } from './prometheus';

/** The charts of the stack, one file each in `dist/`, in apply order. */
export interface StackCharts {
  readonly namespace: Chart;
  readonly kvstore: Chart;
  readonly backend: Chart;
  readonly alertmanager: Chart;
  readonly prometheus: Chart;
}

/**
 * The backend's environment in the cluster: every non-secret service setting, plus
 * `KVSTORE_URL`. That variable is flagged secret because a URL may carry a password; this one
 * does not (the password arrives as `KVSTORE_PASSWORD` from the Secret).
 */
export function backendEnvironment(settings: Settings): Record<string, string> {
  return { ...serviceEnvironment(settings), [variableSpec('KVSTORE_URL').name]: KVSTORE_URL };
}

/**
 * Adds the whole stack to `app`, from one settings object: a chart per component, each
 * depending on the one before, so `dist/` files sort in the order `kubectl apply -f dist/` needs
 * (the Namespace first).
 */
export function addStack(app: App, settings: Settings): StackCharts {
  const d = settings.deploy;
  const namespace = new Chart(app, 'namespace');
  new k8s.KubeNamespace(namespace, 'namespace', {
    metadata: {
      name: d.namespace,
      labels: {
        'app.kubernetes.io/part-of': PART_OF,
        'app.kubernetes.io/managed-by': 'cdk8s',
        // Every pod here meets the "restricted" standard; the cluster refuses any that does not.
        'pod-security.kubernetes.io/enforce': 'restricted',
      },
    },
  });

  let previous: Chart = namespace;
  const chart = (id: string): Chart => {
    const c = new Chart(app, id, { namespace: d.namespace });
    c.addDependency(previous);
    previous = c;
    return c;
  };

  const kvstore = chart(COMPONENTS.kvstore);
  new Kvstore(kvstore, 'kvstore', {
    image: d.kvstoreImage,
    storage: d.kvstoreStorage,
    config: kvstoreConfig(),
    clientSelector: selectorLabels(COMPONENTS.backend),
  });

  const backend = chart(COMPONENTS.backend);
  new Backend(backend, 'backend', {
    image: d.backendImage,
    replicas: d.backendReplicas,
    environment: backendEnvironment(settings),
    containerPort: settings.service.port,
    dataDir: settings.service.dataDir,
    shutdownTimeout: Duration.seconds(settings.service.shutdownTimeoutSeconds),
    autoscaling: d.hpaEnabled ? { maxReplicas: d.hpaMaxReplicas, cpuPercent: d.hpaCpuPercent } : undefined,
  });

  const alertmanager = chart(COMPONENTS.alertmanager);
  new Alertmanager(alertmanager, 'alertmanager', { image: d.alertmanagerImage, config: alertmanagerConfig(settings) });

  const prometheus = chart(COMPONENTS.prometheus);
  new Prometheus(prometheus, 'prometheus', {
    image: d.prometheusImage,
    config: prometheusConfig(settings),
    rules: alertRules(settings),
    storage: d.prometheusStorage,
    retention: d.prometheusRetention,
  });

  return { namespace, kvstore, backend, alertmanager, prometheus };
}
