import type { Settings } from '../../configs';
import { ADDRESSES, CONFIG_DOCUMENTS, METRICS_PATH, PROMETHEUS_PATHS, SCRAPE_JOB } from './names';

/** One scrape job of `prometheus.yml` (the fields this stack uses). */
export interface ScrapeConfig {
  readonly job_name: string;
  readonly metrics_path: string;
  readonly scheme: 'http' | 'https';
  readonly static_configs: ReadonlyArray<{ readonly targets: readonly string[] }>;
}

/** `prometheus.yml` as this stack writes it. */
export interface PrometheusConfig {
  readonly global: { readonly scrape_interval: string; readonly evaluation_interval: string };
  readonly alerting: {
    readonly alertmanagers: ReadonlyArray<{ readonly static_configs: ReadonlyArray<{ readonly targets: readonly string[] }> }>;
  };
  readonly rule_files: readonly string[];
  readonly scrape_configs: readonly ScrapeConfig[];
}

/**
 * `prometheus.yml` from settings (spec §1.6): global `scrape_interval` from
 * `PROMETHEUS_SCRAPE_INTERVAL`, the job `svc-ai-search-backend` scraping `backend:8080` at
 * `/api/metrics/prometheus`, alerts to `alertmanager:9093`, and the mounted rule file.
 */
export function prometheusConfig(settings: Settings): PrometheusConfig {
  return {
    global: {
      scrape_interval: settings.deploy.scrapeInterval,
      evaluation_interval: settings.deploy.evaluationInterval,
    },
    alerting: { alertmanagers: [{ static_configs: [{ targets: [ADDRESSES.alertmanager] }] }] },
    rule_files: [`${PROMETHEUS_PATHS.rulesDir}/${CONFIG_DOCUMENTS.prometheusRules.key}`],
    scrape_configs: [
      {
        job_name: SCRAPE_JOB,
        metrics_path: METRICS_PATH,
        scheme: 'http',
        static_configs: [{ targets: [ADDRESSES.backend] }],
      },
    ],
  };
}

/** Where `retarget` points a config. Unset fields stay as they are. */
export interface RetargetOptions {
  /** `host:port` of the backend, e.g. `127.0.0.1:41234`. */
  readonly backend?: string;
  /** `host:port` of Alertmanager. */
  readonly alertmanager?: string;
  /** Rule file paths (absolute, or relative to the config file). */
  readonly ruleFiles?: readonly string[];
}

/**
 * A copy of `config` pointing at other addresses: for running the generated config outside the
 * cluster (promtool with local rule files, an end-to-end test on loopback). Scrape settings, job
 * name and metrics path are kept, so what is tested is what is deployed.
 */
export function retarget(config: PrometheusConfig, options: RetargetOptions): PrometheusConfig {
  return {
    ...config,
    alerting: options.alertmanager
      ? { alertmanagers: [{ static_configs: [{ targets: [options.alertmanager] }] }] }
      : config.alerting,
    rule_files: options.ruleFiles ?? config.rule_files,
    scrape_configs: config.scrape_configs.map((job) =>
      job.job_name === SCRAPE_JOB && options.backend ? { ...job, static_configs: [{ targets: [options.backend] }] } : job,
    ),
  };
}
