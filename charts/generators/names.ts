/**
 * Names shared by the generated configs and the Kubernetes objects that carry them. Spec §1.6
 * fixes the job, the target and the metrics path; §6.1 the `service` label. Everything that a
 * user sees in `dist/` or in Alertmanager is spelled here once.
 */

/** Value of the `service` alert label and the Prometheus job name (spec §1.6, §6.1). */
export const SERVICE_NAME = 'svc-ai-search-backend';

/** Prometheus job that scrapes the backend (spec §1.6). */
export const SCRAPE_JOB = SERVICE_NAME;

/** Scrape jobs of the monitoring pipeline itself (the names the Prometheus and Alertmanager mixins use). */
export const PIPELINE_JOBS = { prometheus: 'prometheus', alertmanager: 'alertmanager' } as const;

/** Where the backend exposes the text exposition (spec §1.6: not `/metrics`). */
export const METRICS_PATH = '/api/metrics/prometheus';

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
  backend: 8080,
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
  /** The backend's and the kvstore's Secret. */
  app: {
    name: 'svc-ai-search-secrets',
    keys: { apiToken: 'api-token', aiApiKey: 'ai-api-key', kvstorePassword: 'kvstore-password' },
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
