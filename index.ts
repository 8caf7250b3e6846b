/**
 * The library entry of `svc-ai-search-backend`: the cdk8s constructs (`SearchBackendStack` and its
 * components), `loadStackSettings`, the contract (names the service and the stack share), the settings module and the pure config generators. Importing
 * it has no side effects: no server, no file, no timer. The service itself is the separate
 * `svc-ai-search-backend/service` entry (or the `svc-ai-search-backend` bin).
 *
 * A chosen surface, named one by one: what a cdk8s app needs to place, compose and inspect the
 * stack. The rooms' own barrels (`charts/`, `configs/`) hold more, for the repository's tests and
 * tools; a name joins this list when a consumer needs it.
 */

// The contract: every name the service and the stack spell the same.
export {
  METRIC_FAMILIES,
  METRIC_LABELS,
  METRIC_PREFIX,
  METRICS,
  PATHS,
  RUNTIME_METRIC_PREFIXES,
  SCRAPE_JOB,
  SERVICE_NAME,
  SERVICE_PORT,
  type MetricFamily,
  type MetricKey,
  type MetricType,
} from './contract';

// The settings module: one parse for the service at start and the stack at synth.
export {
  DEFAULT_SETTINGS,
  loadSettings,
  parseSettings,
  redactSettings,
  settingsInputFromEnv,
  SettingsError,
  VARIABLES,
  type AiSettings,
  type AlertingSettings,
  type AlertRuleSettings,
  type ContentSettings,
  type DeploySettings,
  type Env,
  type KvstoreSettings,
  type RateLimitSettings,
  type SearchSettings,
  type ServiceSettings,
  type Settings,
  type SettingsErrorCode,
  type SettingsInput,
  type SettingsIssue,
  type StoreTopologySettings,
  type VariableSpec,
} from './configs';

// The stack and its components (cdk8s constructs), with the settings the stack synthesizes from.
export {
  Alertmanager,
  Backend,
  BackendAlertmanagerConfig,
  BackendIngress,
  BackendPrometheusRule,
  BackendServiceMonitor,
  GrafanaDashboard,
  Kvstore,
  loadStackSettings,
  OperatorMonitoring,
  Prometheus,
  SearchBackendStack,
  stackNames,
  stackWarnings,
  type AlertmanagerProps,
  type BackendAlertmanagerConfigProps,
  type BackendAutoscaling,
  type BackendIngressProps,
  type BackendPrometheusRuleProps,
  type BackendProps,
  type BackendServiceMonitorProps,
  type GrafanaDashboardProps,
  type KvstoreProps,
  type OperatorMonitoringProps,
  type PrometheusProps,
  type SearchBackendStackProps,
  type StackNames,
} from './charts';

// The pure generators: settings → the documents the stack puts into ConfigMaps.
export {
  ALERTS,
  alertmanagerConfig,
  alertRules,
  grafanaDashboard,
  kvstoreConfig,
  prometheusConfig,
  retarget,
  ROUTING_TABLE,
  sloRuleGroup,
  testAlert,
  toYaml,
  type AlertmanagerConfig,
  type AlertName,
  type DashboardJson,
  type PrometheusConfig,
  type RetargetOptions,
  type RuleFile,
} from './charts';
