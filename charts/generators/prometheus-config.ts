import type { Settings } from '../../configs';
import { ADDRESSES, CONFIG_DOCUMENTS, PIPELINE_JOBS, PROMETHEUS_PATHS, stackNames } from './names';
import { PATHS, SCRAPE_JOB } from '../../contract';

/** A `static_configs` entry. */
export interface StaticConfig {
  readonly targets: readonly string[];
}

/** A `dns_sd_configs` entry: one target per A record of each name. */
export interface DnsSdConfig {
  readonly names: readonly string[];
  readonly type: 'A';
  readonly port: number;
  readonly refresh_interval: string;
}

/** A `relabel_configs` entry (the fields this stack uses). */
export interface RelabelConfig {
  readonly source_labels: readonly string[];
  readonly target_label: string;
  readonly regex?: string;
  readonly replacement?: string;
}

/** One scrape job of `prometheus.yml` (the fields this stack uses). */
export interface ScrapeConfig {
  readonly job_name: string;
  readonly metrics_path: string;
  readonly scheme: 'http' | 'https';
  readonly static_configs?: readonly StaticConfig[];
  readonly dns_sd_configs?: readonly DnsSdConfig[];
  readonly relabel_configs?: readonly RelabelConfig[];
}

/** `prometheus.yml` as this stack writes it. */
export interface PrometheusConfig {
  readonly global: { readonly scrape_interval: string; readonly evaluation_interval: string };
  readonly alerting: {
    readonly alertmanagers: ReadonlyArray<{ readonly static_configs: readonly StaticConfig[] }>;
  };
  readonly rule_files: readonly string[];
  readonly scrape_configs: readonly ScrapeConfig[];
}

/**
 * True when the backend may run more than one pod (several replicas, or an autoscaler), so the
 * Service address would land each scrape on some pod and the pods' counters would interleave.
 */
export function scrapesPerPod(settings: Settings): boolean {
  return settings.deploy.backendReplicas > 1 || settings.deploy.hpaEnabled;
}

/**
 * DNS name of the headless `backend-pods` Service. Fully qualified with the namespace, because
 * the DNS discovery of Prometheus does not rely on the pod's resolver search list.
 */
export function backendPodsDnsName(settings: Settings): string {
  return `${stackNames(settings.deploy.namePrefix).backendPods}.${settings.deploy.namespace}.svc`;
}

/** How the backend job finds its targets: the Service with one pod, each pod otherwise. */
function backendTargets(
  settings: Settings,
): Pick<ScrapeConfig, 'static_configs' | 'dns_sd_configs' | 'relabel_configs'> {
  if (!scrapesPerPod(settings))
    return { static_configs: [{ targets: [stackNames(settings.deploy.namePrefix).addresses.backend] }] };
  return {
    // Pod IPs: the container port (`PORT`), which the Service maps to 8080 but a pod address does not.
    dns_sd_configs: [
      { names: [backendPodsDnsName(settings)], type: 'A', port: settings.service.port, refresh_interval: '30s' },
    ],
    // `instance` already is `<pod IP>:8080`; `pod_ip` keeps the bare address for joins with other sources.
    relabel_configs: [
      { source_labels: ['__address__'], regex: '(.+):\\d+', target_label: 'pod_ip', replacement: '$1' },
    ],
  };
}

/**
 * `prometheus.yml` from settings (spec §1.6): global `scrape_interval` from
 * `PROMETHEUS_SCRAPE_INTERVAL`; the job `svc-ai-search-backend` at `/api/metrics/prometheus`,
 * scraping `backend:8080` with one replica and every pod of the headless `backend-pods` Service
 * (DNS discovery, the container port) with more, so each pod is its own target; Prometheus itself and
 * Alertmanager; alerts to `alertmanager:9093`, and the mounted rule file. Every Service name
 * carries `NAME_PREFIX`.
 */
export function prometheusConfig(settings: Settings): PrometheusConfig {
  const alertmanager = stackNames(settings.deploy.namePrefix).addresses.alertmanager;
  return {
    global: {
      scrape_interval: settings.deploy.scrapeInterval,
      evaluation_interval: settings.deploy.evaluationInterval,
    },
    alerting: { alertmanagers: [{ static_configs: [{ targets: [alertmanager] }] }] },
    rule_files: [`${PROMETHEUS_PATHS.rulesDir}/${CONFIG_DOCUMENTS.prometheusRules.key}`],
    scrape_configs: [
      { job_name: SCRAPE_JOB, metrics_path: PATHS.metrics, scheme: 'http', ...backendTargets(settings) },
      {
        job_name: PIPELINE_JOBS.prometheus,
        metrics_path: '/metrics',
        scheme: 'http',
        static_configs: [{ targets: [ADDRESSES.prometheus] }],
      },
      {
        job_name: PIPELINE_JOBS.alertmanager,
        metrics_path: '/metrics',
        scheme: 'http',
        static_configs: [{ targets: [alertmanager] }],
      },
    ],
  };
}

/** Where `retarget` points a config. Unset fields stay as they are. */
export interface RetargetOptions {
  /** `host:port` of each backend target, e.g. `['127.0.0.1:41234', '127.0.0.1:41235']`: each is its own instance. */
  readonly backends?: readonly string[];
  /** `host:port` of Alertmanager (alerting and its scrape job). */
  readonly alertmanager?: string;
  /** `host:port` Prometheus listens on (its own scrape job). */
  readonly prometheus?: string;
  /** Rule file paths (absolute, or relative to the config file). */
  readonly ruleFiles?: readonly string[];
}

function staticJob(job: ScrapeConfig, target: string | undefined): ScrapeConfig {
  if (!target) return job;
  return {
    job_name: job.job_name,
    metrics_path: job.metrics_path,
    scheme: job.scheme,
    static_configs: [{ targets: [target] }],
  };
}

/**
 * A copy of `config` pointing at other addresses: for running the generated config outside the
 * cluster (promtool with local rule files, an end-to-end test on loopback). Scrape settings, job
 * names and metrics paths are kept, so what is tested is what is deployed; the backend's DNS
 * discovery becomes a static list, one target per given address, as the pods would be.
 */
export function retarget(config: PrometheusConfig, options: RetargetOptions): PrometheusConfig {
  const backends = options.backends?.length ? options.backends : undefined;
  return {
    ...config,
    alerting: options.alertmanager
      ? { alertmanagers: [{ static_configs: [{ targets: [options.alertmanager] }] }] }
      : config.alerting,
    rule_files: options.ruleFiles ?? config.rule_files,
    scrape_configs: config.scrape_configs.map((job) => {
      if (job.job_name === SCRAPE_JOB && backends) {
        return {
          job_name: job.job_name,
          metrics_path: job.metrics_path,
          scheme: job.scheme,
          static_configs: [{ targets: [...backends] }],
        };
      }
      if (job.job_name === PIPELINE_JOBS.prometheus) return staticJob(job, options.prometheus);
      if (job.job_name === PIPELINE_JOBS.alertmanager) return staticJob(job, options.alertmanager);
      return job;
    }),
  };
}
