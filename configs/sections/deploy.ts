import { bool, duration, int, list, num, oneOf, str, type Parser } from '../parsers';
import { LABEL_PAIR, type LabelPair } from './label-pair';
import { variable, type VariableSpec } from '../variables';

const DNS_LABEL = str({
  pattern: /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/,
  accepted: 'a DNS label (lower-case letters, digits, -)',
});
/** `NAME_PREFIX`: empty (the default, today's names), or a DNS-label start ending in `-`. */
const PREFIX_LABEL = str({
  pattern: /^[a-z][-a-z0-9]{0,20}-$/,
  accepted: 'empty, or lower-case letters, digits and -, ending in - (e.g. team-a-)',
});
const NAME_PREFIX: Parser<string> = {
  accepted: PREFIX_LABEL.accepted,
  check: (v) => (v === '' ? '' : PREFIX_LABEL.check(v)),
  parse: (raw) => (raw.trim() === '' ? '' : PREFIX_LABEL.parse(raw)),
};
const DNS_SUBDOMAIN = str({
  pattern: /^[a-z0-9]([-a-z0-9.]{0,251}[a-z0-9])?$/,
  accepted: 'a Kubernetes object name (lower-case letters, digits, - and .)',
});
const HOSTNAME = str({
  pattern: /^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)+$/,
  accepted: 'a DNS host name such as search.example.com',
});
const IMAGE = str({ pattern: /^[\w./:@-]+$/, accepted: 'a container image reference such as redis:7.2' });
const MEMORY = str({ pattern: /^\d+(Ki|Mi|Gi|Ti)$/, accepted: 'a memory quantity in Ki, Mi, Gi or Ti such as 3Gi' });
const QUANTITY = str({ pattern: /^\d+(\.\d+)?(Ki|Mi|Gi|Ti|k|M|G|T)?$/, accepted: 'a Kubernetes quantity such as 1Gi' });

/** What `cdk8s synth` generates around the service. Synth-only: the service ignores these. */
export interface DeploySettings {
  /** Namespace of every object. @default 'svc-ai-search' */
  readonly namespace: string;
  /**
   * Write the Namespace object (with the restricted pod-security label) at App level. Off for a
   * namespace someone else owns: synth then leaves it alone. Inside a user's Chart the stack never
   * writes one. @default true
   */
  readonly createNamespace: boolean;
  /** Prefix of every object name (`team-a-` gives `team-a-backend`, ...), so stacks can share a namespace. @default '' */
  readonly namePrefix: string;
  /**
   * Backend image. The default is a placeholder no registry serves: synth warns while it is set
   * (docs/stack.md shows the build-and-push path). @default 'svc-ai-search-backend:0.1.0'
   */
  readonly backendImage: string;
  /** StorageClass of the kvstore and Prometheus volumes. @default undefined (the cluster's default class) */
  readonly storageClass?: string;
  /** Secrets (type docker-registry) the pods pull their images with. @default [] */
  readonly imagePullSecrets: readonly string[];
  /**
   * Host of an Ingress for the backend; unset, no Ingress is written and the backend trusts no
   * proxy header (`TRUST_PROXY` defaults to 0). Set, `TRUST_PROXY` defaults to 1 (the ingress
   * controller's hop). @default undefined
   */
  readonly ingressHost?: string;
  /** Secret with the Ingress's TLS certificate; unset, the Ingress serves plain HTTP. @default undefined */
  readonly ingressTlsSecret?: string;
  /** `ingressClassName` of the Ingress. @default undefined (the cluster's default class) */
  readonly ingressClass?: string;
  /** Backend replicas (the HPA's minimum when enabled). @default 2 */
  readonly backendReplicas: number;
  /**
   * Memory limit of a backend container; the V8 heap limit is derived from it (`NODE_OPTIONS
   * --max-old-space-size`, half of it: configs/sections/backend-memory.ts). The default holds a
   * replica of 1,000,000 documents (README.md, "Memory per replica"). @default '3Gi'
   */
  readonly backendMemoryLimit: string;
  /** Memory request of a backend container (at most the limit). @default '2Gi' */
  readonly backendMemoryRequest: string;
  /** Create a HorizontalPodAutoscaler. @default false */
  readonly hpaEnabled: boolean;
  /** HPA maximum replicas. @default 10 */
  readonly hpaMaxReplicas: number;
  /** HPA CPU utilisation target, percent. @default 70 */
  readonly hpaCpuPercent: number;
  /**
   * Where the backend's Redis comes from. `in-cluster`: the stack deploys one standalone Redis
   * (StatefulSet `kvstore`) and points `KVSTORE_URL` at it. `external`: the stack deploys no Redis;
   * the backend reaches an existing one (standalone, Cluster or Sentinel, `KVSTORE_MODE`) whose URL
   * arrives from the Secret (`kvstore-url`). @default 'in-cluster'
   */
  readonly kvstoreDeploy: KvstoreDeploy;
  /** Redis image of the kvstore (`KVSTORE_DEPLOY=in-cluster` only). @default 'redis:7.2-alpine' */
  readonly kvstoreImage: string;
  /** kvstore volume size. @default '1Gi' */
  readonly kvstoreStorage: string;
  /** Prometheus image. @default 'prom/prometheus:v2.53.0' */
  readonly prometheusImage: string;
  /** Prometheus volume size. @default '10Gi' */
  readonly prometheusStorage: string;
  /** How long Prometheus keeps samples; at least 3d, the longest burn-rate window. @default '15d' */
  readonly prometheusRetention: string;
  /** Prometheus global scrape_interval. @default '15s' */
  readonly scrapeInterval: string;
  /** Prometheus global evaluation_interval. @default '15s' */
  readonly evaluationInterval: string;
  /** Alertmanager image. @default 'prom/alertmanager:v0.25.0' */
  readonly alertmanagerImage: string;
  /**
   * `standalone`: the stack deploys its own Prometheus and Alertmanager. `operator`: it deploys
   * none and writes a ServiceMonitor, a PrometheusRule and an AlertmanagerConfig for a
   * prometheus-operator already in the cluster (docs/stack.md). @default 'standalone'
   */
  readonly monitoringMode: MonitoringMode;
  /**
   * Labels of the operator-mode custom resources (PrometheusRule, ServiceMonitor,
   * AlertmanagerConfig), the ones the cluster's Prometheus selects them by, e.g.
   * `release=kube-prometheus-stack`. @default []
   */
  readonly prometheusRuleLabels: readonly LabelPair[];
}

/** Where the backend's Redis comes from (`KVSTORE_DEPLOY`). */
export type KvstoreDeploy = 'in-cluster' | 'external';

/** Every `KvstoreDeploy`, default first. */
export const KVSTORE_DEPLOYS: readonly KvstoreDeploy[] = ['in-cluster', 'external'];

/** Where the stack's metrics and alerts are evaluated (`MONITORING_MODE`). */
export type MonitoringMode = 'standalone' | 'operator';

/** Every `MonitoringMode`, default first. */
export const MONITORING_MODES: readonly MonitoringMode[] = ['standalone', 'operator'];

/** Thresholds and `for` durations of the generated alert rules. Synth-only. */
export interface AlertRuleSettings {
  /** BackendDown fires after no backend target has been up (or the job has been absent) this long. @default '1m' */
  readonly backendDownFor: string;
  /** BackendPodDown fires after one backend pod has been down this long while others serve. @default '5m' */
  readonly backendPodDownFor: string;
  /**
   * Volume guard: a ratio alert (HighErrorRate, each burn-rate window pair) fires only while the
   * service averages at least this many requests per hour over the alert's window (the long window
   * for burn rates), so one 500 on a quiet site pages no one. @default 100
   */
  readonly minRequestsPerHour: number;
  /** HighErrorRate: server errors (5xx) / all requests over 5m above this ratio. @default 0.05 */
  readonly errorRateThreshold: number;
  /** @default '5m' */ readonly errorRateFor: string;
  /** HighLatency: p99 above this many seconds. @default 2 */
  readonly latencyP99Seconds: number;
  /** @default '10m' */ readonly latencyFor: string;
  /** LowHealthScore: health score below this. @default 70 */
  readonly healthScoreMin: number;
  /** @default '10m' */ readonly healthScoreFor: string;
  /** HighTokenSpend: tokens per hour above this. @default 1000000 */
  readonly tokensPerHour: number;
  /** @default '5m' */ readonly tokenSpendFor: string;
  /** CacheNearFull: cache usage percent above this. @default 90 */
  readonly cacheUsagePercent: number;
  /** @default '15m' */ readonly cacheFor: string;
  /** KvstoreFallback: memory backend in use this long. @default '2m' */
  readonly kvstoreFallbackFor: string;
  /** Generate NoTraffic: off, because a fresh deploy or a quiet night is not an incident. @default false */
  readonly noTrafficEnabled: boolean;
  /** NoTraffic: fewer than this many requests in 10m counts as no traffic. @default 1 */
  readonly noTrafficMinRequests: number;
  /** NoTraffic: no requests this long. @default '30m' */
  readonly noTrafficFor: string;
  /** Availability SLO for the burn-rate alerts, e.g. 0.999. @default 0.999 */
  readonly sloAvailability: number;
}

/** The default `BACKEND_IMAGE`: a local name no registry serves, to be replaced by a pushed image. */
export const PLACEHOLDER_BACKEND_IMAGE = 'svc-ai-search-backend:0.1.0';

/** The default deploy settings. */
export const DEFAULT_DEPLOY: DeploySettings = {
  namespace: 'svc-ai-search',
  createNamespace: true,
  namePrefix: '',
  backendImage: PLACEHOLDER_BACKEND_IMAGE,
  storageClass: undefined,
  imagePullSecrets: [],
  ingressHost: undefined,
  ingressTlsSecret: undefined,
  ingressClass: undefined,
  backendReplicas: 2,
  backendMemoryLimit: '3Gi',
  backendMemoryRequest: '2Gi',
  hpaEnabled: false,
  hpaMaxReplicas: 10,
  hpaCpuPercent: 70,
  kvstoreDeploy: 'in-cluster',
  kvstoreImage: 'redis:7.2-alpine',
  kvstoreStorage: '1Gi',
  prometheusImage: 'prom/prometheus:v2.53.0',
  prometheusStorage: '10Gi',
  prometheusRetention: '15d',
  scrapeInterval: '15s',
  evaluationInterval: '15s',
  alertmanagerImage: 'prom/alertmanager:v0.25.0',
  monitoringMode: 'standalone',
  prometheusRuleLabels: [],
};

export const DEFAULT_ALERT_RULES: AlertRuleSettings = {
  backendDownFor: '1m',
  backendPodDownFor: '5m',
  minRequestsPerHour: 100,
  errorRateThreshold: 0.05,
  errorRateFor: '5m',
  latencyP99Seconds: 2,
  latencyFor: '10m',
  healthScoreMin: 70,
  healthScoreFor: '10m',
  tokensPerHour: 1000000,
  tokenSpendFor: '5m',
  cacheUsagePercent: 90,
  cacheFor: '15m',
  kvstoreFallbackFor: '2m',
  noTrafficEnabled: false,
  noTrafficMinRequests: 1,
  noTrafficFor: '30m',
  sloAvailability: 0.999,
};

const s = { synthOnly: true };
export const DEPLOY_VARIABLES: readonly VariableSpec[] = [
  variable('NAMESPACE', 'deploy.namespace', DNS_LABEL, 'Kubernetes namespace', s),
  variable(
    'CREATE_NAMESPACE',
    'deploy.createNamespace',
    bool(),
    'Write the Namespace object (false: the namespace exists and is left alone)',
    s,
  ),
  variable(
    'NAME_PREFIX',
    'deploy.namePrefix',
    NAME_PREFIX,
    'Prefix of every object name, so stacks can share a namespace',
    s,
  ),
  variable('BACKEND_IMAGE', 'deploy.backendImage', IMAGE, 'Backend container image', s),
  variable(
    'STORAGE_CLASS',
    'deploy.storageClass',
    DNS_SUBDOMAIN,
    'StorageClass of the kvstore and Prometheus volumes (unset: the cluster default)',
    s,
  ),
  variable(
    'IMAGE_PULL_SECRETS',
    'deploy.imagePullSecrets',
    list(DNS_SUBDOMAIN),
    'Comma-separated docker-registry Secrets for pulling images',
    s,
  ),
  variable(
    'INGRESS_HOST',
    'deploy.ingressHost',
    HOSTNAME,
    'Host of an Ingress for the backend (unset: no Ingress, TRUST_PROXY defaults to 0)',
    s,
  ),
  variable(
    'INGRESS_TLS_SECRET',
    'deploy.ingressTlsSecret',
    DNS_SUBDOMAIN,
    'TLS Secret of the Ingress (unset: plain HTTP)',
    s,
  ),
  variable(
    'INGRESS_CLASS',
    'deploy.ingressClass',
    DNS_SUBDOMAIN,
    'ingressClassName of the Ingress (unset: the cluster default)',
    s,
  ),
  variable('BACKEND_REPLICAS', 'deploy.backendReplicas', int({ min: 1, max: 100 }), 'Backend replicas', s),
  variable(
    'BACKEND_MEMORY_LIMIT',
    'deploy.backendMemoryLimit',
    MEMORY,
    'Memory limit of a backend container; the Node heap limit (NODE_OPTIONS --max-old-space-size) is half of it',
    s,
  ),
  variable(
    'BACKEND_MEMORY_REQUEST',
    'deploy.backendMemoryRequest',
    MEMORY,
    'Memory request of a backend container (at most BACKEND_MEMORY_LIMIT)',
    s,
  ),
  variable('HPA_ENABLED', 'deploy.hpaEnabled', bool(), 'Create a HorizontalPodAutoscaler for the backend', s),
  variable('HPA_MAX_REPLICAS', 'deploy.hpaMaxReplicas', int({ min: 1, max: 1000 }), 'HPA maximum replicas', s),
  variable(
    'HPA_CPU_PERCENT',
    'deploy.hpaCpuPercent',
    int({ min: 1, max: 100 }),
    'HPA CPU utilisation target, percent',
    s,
  ),
  variable(
    'KVSTORE_DEPLOY',
    'deploy.kvstoreDeploy',
    oneOf(KVSTORE_DEPLOYS),
    'in-cluster: the stack deploys one standalone Redis; external: no Redis is deployed, the backend uses KVSTORE_MODE/KVSTORE_NODES and the kvstore-url Secret key',
    s,
  ),
  variable('KVSTORE_IMAGE', 'deploy.kvstoreImage', IMAGE, 'kvstore (Redis) image', s),
  variable('KVSTORE_STORAGE', 'deploy.kvstoreStorage', QUANTITY, 'kvstore volume size', s),
  variable('PROMETHEUS_IMAGE', 'deploy.prometheusImage', IMAGE, 'Prometheus image', s),
  variable('PROMETHEUS_STORAGE', 'deploy.prometheusStorage', QUANTITY, 'Prometheus volume size', s),
  variable(
    'PROMETHEUS_RETENTION',
    'deploy.prometheusRetention',
    duration(),
    'How long Prometheus keeps samples (at least 3d)',
    s,
  ),
  variable('PROMETHEUS_SCRAPE_INTERVAL', 'deploy.scrapeInterval', duration(), 'Prometheus scrape_interval', s),
  variable(
    'PROMETHEUS_EVALUATION_INTERVAL',
    'deploy.evaluationInterval',
    duration(),
    'Prometheus evaluation_interval',
    s,
  ),
  variable('ALERTMANAGER_IMAGE', 'deploy.alertmanagerImage', IMAGE, 'Alertmanager image', s),
  variable(
    'MONITORING_MODE',
    'deploy.monitoringMode',
    oneOf(MONITORING_MODES),
    'standalone: own Prometheus and Alertmanager; operator: ServiceMonitor, PrometheusRule and AlertmanagerConfig for a prometheus-operator',
    s,
  ),
  variable(
    'PROMETHEUS_RULE_LABELS',
    'deploy.prometheusRuleLabels',
    list(LABEL_PAIR),
    'Operator mode: labels the cluster Prometheus selects the PrometheusRule, ServiceMonitor and AlertmanagerConfig by (e.g. release=kube-prometheus-stack)',
    s,
  ),
  variable('ALERT_BACKEND_DOWN_FOR', 'alertRules.backendDownFor', duration(), 'BackendDown: for', s),
  variable('ALERT_BACKEND_POD_DOWN_FOR', 'alertRules.backendPodDownFor', duration(), 'BackendPodDown: for', s),
  variable(
    'ALERT_MIN_REQUESTS_PER_HOUR',
    'alertRules.minRequestsPerHour',
    int({ min: 0, max: 100000000 }),
    'Ratio alerts need this many requests per hour over their window (volume guard)',
    s,
  ),
  variable(
    'ALERT_ERROR_RATE_THRESHOLD',
    'alertRules.errorRateThreshold',
    num({ min: 0, exclusiveMin: true, max: 1 }),
    'HighErrorRate: 5xx/total ratio',
    s,
  ),
  variable('ALERT_ERROR_RATE_FOR', 'alertRules.errorRateFor', duration(), 'HighErrorRate: for', s),
  variable(
    'ALERT_LATENCY_P99_SECONDS',
    'alertRules.latencyP99Seconds',
    num({ min: 0, exclusiveMin: true }),
    'HighLatency: p99 seconds',
    s,
  ),
  variable('ALERT_LATENCY_FOR', 'alertRules.latencyFor', duration(), 'HighLatency: for', s),
  variable(
    'ALERT_HEALTH_SCORE_MIN',
    'alertRules.healthScoreMin',
    num({ min: 0, max: 100 }),
    'LowHealthScore: threshold',
    s,
  ),
  variable('ALERT_HEALTH_SCORE_FOR', 'alertRules.healthScoreFor', duration(), 'LowHealthScore: for', s),
  variable(
    'ALERT_TOKENS_PER_HOUR',
    'alertRules.tokensPerHour',
    num({ min: 0, exclusiveMin: true }),
    'HighTokenSpend: tokens per hour',
    s,
  ),
  variable('ALERT_TOKEN_SPEND_FOR', 'alertRules.tokenSpendFor', duration(), 'HighTokenSpend: for', s),
  variable(
    'ALERT_CACHE_USAGE_PERCENT',
    'alertRules.cacheUsagePercent',
    num({ min: 0, exclusiveMin: true, max: 100 }),
    'CacheNearFull: usage percent',
    s,
  ),
  variable('ALERT_CACHE_FOR', 'alertRules.cacheFor', duration(), 'CacheNearFull: for', s),
  variable('ALERT_KVSTORE_FALLBACK_FOR', 'alertRules.kvstoreFallbackFor', duration(), 'KvstoreFallback: for', s),
  variable('ALERT_NO_TRAFFIC_ENABLED', 'alertRules.noTrafficEnabled', bool(), 'Generate the NoTraffic alert', s),
  variable(
    'ALERT_NO_TRAFFIC_MIN_REQUESTS',
    'alertRules.noTrafficMinRequests',
    int({ min: 1, max: 100000000 }),
    'NoTraffic: fewer requests than this in 10m',
    s,
  ),
  variable('ALERT_NO_TRAFFIC_FOR', 'alertRules.noTrafficFor', duration(), 'NoTraffic: for', s),
  variable(
    'SLO_AVAILABILITY',
    'alertRules.sloAvailability',
    num({ min: 0.5, max: 0.99999 }),
    'Availability SLO for burn-rate alerts',
    s,
  ),
];
