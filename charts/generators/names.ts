import { SERVICE_NAME, SERVICE_PORT } from '../../contract';

/**
 * Names of the stack's own objects, shared by the generated configs and the Kubernetes objects
 * that carry them. The names the service must agree on (service name, scrape job, paths, port,
 * metrics) are in `contract/`.
 */

/** Scrape jobs of the monitoring pipeline itself (the names the Prometheus and Alertmanager mixins use). */
export const PIPELINE_JOBS = { prometheus: 'prometheus', alertmanager: 'alertmanager' } as const;

/** Stable object names: the Services are exactly these, so in-cluster DNS names are too. */
export const COMPONENTS = {
  backend: 'backend',
  kvstore: 'kvstore',
  prometheus: 'prometheus',
  alertmanager: 'alertmanager',
} as const;

/** Headless companion Service of `backend`: one DNS A record per ready pod, for per-pod scraping. */
export const BACKEND_PODS_SERVICE = 'backend-pods';

/** One component of the stack. */
export type ComponentName = (typeof COMPONENTS)[keyof typeof COMPONENTS];

/** Service ports. */
export const PORTS = {
  backend: SERVICE_PORT,
  kvstore: 6379,
  prometheus: 9090,
  alertmanager: 9093,
} as const;

/** `host:port` of each Service inside the namespace. */
export const ADDRESSES = {
  backend: `${COMPONENTS.backend}:${PORTS.backend}`,
  /** Prometheus scrapes itself on loopback. */
  prometheus: `localhost:${PORTS.prometheus}`,
  kvstore: `${COMPONENTS.kvstore}:${PORTS.kvstore}`,
  alertmanager: `${COMPONENTS.alertmanager}:${PORTS.alertmanager}`,
} as const;

/** The kvstore URL the deployed backend uses; the password comes from the Secret. */
export const KVSTORE_URL = `redis://${ADDRESSES.kvstore}`;

/**
 * Secrets the user creates with `kubectl create secret` (docs/stack.md). The manifests only
 * reference them: no value is ever synthesized.
 */
export const SECRETS = {
  /** The backend's and the kvstore's Secret. `kvstore-url` and `kvstore-sentinel-password` only with `KVSTORE_DEPLOY=external`. */
  app: {
    name: 'svc-ai-search-secrets',
    keys: {
      apiToken: 'api-token',
      aiApiKey: 'ai-api-key',
      embeddingsApiKey: 'embeddings-api-key',
      kvstorePassword: 'kvstore-password',
      kvstoreUrl: 'kvstore-url',
      kvstoreSentinelPassword: 'kvstore-sentinel-password',
    },
  },
  /** Mounted into Alertmanager as files; the config reads them through `*_file` fields. */
  alertmanager: {
    name: 'alertmanager-secrets',
    mountPath: '/etc/alertmanager/secrets',
    keys: {
      chatWebhookUrl: 'chat-webhook-url',
      smtpPassword: 'smtp-password',
      webhookBearerToken: 'webhook-bearer-token',
      incidentServiceKey: 'incident-service-key',
    },
  },
} as const;

/** Path of one Alertmanager secret file, as the config refers to it. */
export function alertmanagerSecretFile(key: keyof typeof SECRETS.alertmanager.keys): string {
  return `${SECRETS.alertmanager.mountPath}/${SECRETS.alertmanager.keys[key]}`;
}

/** ConfigMaps holding the generated config documents, and their keys. */
export const CONFIG_DOCUMENTS = {
  prometheusConfig: { configMap: 'prometheus-config', key: 'prometheus.yml' },
  prometheusRules: { configMap: 'prometheus-rules', key: `${SERVICE_NAME}.rules.yml` },
  alertmanagerConfig: { configMap: 'alertmanager-config', key: 'alertmanager.yml' },
} as const;

/**
 * Where Prometheus finds its config and rule files inside the container. Sibling folders, never
 * one mount inside another: ConfigMap volumes are read-only, so a nested mount point cannot be
 * created in them.
 */
export const PROMETHEUS_PATHS = {
  configDir: '/etc/prometheus/config',
  rulesDir: '/etc/prometheus/rules',
  data: '/prometheus',
} as const;

/** Where Alertmanager finds its config inside the container (a sibling of the secrets folder). */
export const ALERTMANAGER_PATHS = {
  configDir: '/etc/alertmanager/config',
  data: '/alertmanager',
} as const;

/**
 * Every object name of one stack, from its name prefix (`NAME_PREFIX`, or `SearchBackendStack`'s
 * `namePrefix`). The empty prefix gives the names above; `team-a-` gives `team-a-backend`, ...,
 * so two stacks share a namespace without colliding and each one's configs point at its own
 * Services.
 */
export interface StackNames {
  /** The prefix itself, e.g. `team-a-` or ``. */
  readonly prefix: string;
  /** `app.kubernetes.io/instance` of every object of this stack (part of every selector). */
  readonly instance: string;
  readonly backend: string;
  /** Headless per-pod Service of the backend. */
  readonly backendPods: string;
  readonly backendConfig: string;
  /** ConfigMap of the backend's synonyms file (only with `SEARCH_SYNONYMS_FILE`). */
  readonly backendSynonyms: string;
  readonly kvstore: string;
  readonly kvstoreConfig: string;
  readonly prometheus: string;
  readonly prometheusData: string;
  readonly prometheusConfig: string;
  readonly prometheusRules: string;
  readonly alertmanager: string;
  readonly alertmanagerConfig: string;
  /** ConfigMap of the Grafana dashboard (both monitoring modes). */
  readonly grafanaDashboard: string;
  /** The backend's and kvstore's Secret (`SECRETS.app`'s keys). */
  readonly appSecret: string;
  /** Alertmanager's Secret (`SECRETS.alertmanager`'s keys). */
  readonly alertmanagerSecret: string;
  /** `host:port` of the Services inside the namespace. */
  readonly addresses: { readonly backend: string; readonly kvstore: string; readonly alertmanager: string };
  /** The kvstore URL of this stack's backend (no password: that comes from the Secret). */
  readonly kvstoreUrl: string;
}

/** The names of the stack with `prefix` (see `StackNames`). */
export function stackNames(prefix = ''): StackNames {
  const p = (n: string) => `${prefix}${n}`;
  return {
    prefix,
    instance: p(SERVICE_NAME),
    backend: p(COMPONENTS.backend),
    backendPods: p(BACKEND_PODS_SERVICE),
    backendConfig: p('backend-config'),
    backendSynonyms: p('backend-synonyms'),
    kvstore: p(COMPONENTS.kvstore),
    kvstoreConfig: p('kvstore-config'),
    prometheus: p(COMPONENTS.prometheus),
    prometheusData: p(`${COMPONENTS.prometheus}-data`),
    prometheusConfig: p(CONFIG_DOCUMENTS.prometheusConfig.configMap),
    prometheusRules: p(CONFIG_DOCUMENTS.prometheusRules.configMap),
    alertmanager: p(COMPONENTS.alertmanager),
    alertmanagerConfig: p(CONFIG_DOCUMENTS.alertmanagerConfig.configMap),
    grafanaDashboard: p('grafana-dashboard'),
    appSecret: p(SECRETS.app.name),
    alertmanagerSecret: p(SECRETS.alertmanager.name),
    addresses: {
      backend: `${p(COMPONENTS.backend)}:${PORTS.backend}`,
      kvstore: `${p(COMPONENTS.kvstore)}:${PORTS.kvstore}`,
      alertmanager: `${p(COMPONENTS.alertmanager)}:${PORTS.alertmanager}`,
    },
    kvstoreUrl: `redis://${p(COMPONENTS.kvstore)}:${PORTS.kvstore}`,
  };
}
