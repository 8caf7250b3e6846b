/**
 * The service's identity and addresses as the stack reaches it: spec §1.6 fixes the job, the
 * port and the metrics path, §4.1 the operational paths, §6.1 the `service` label.
 */

/** Service name: logs, health records, the `service` alert label, object names (spec §6.1). */
export const SERVICE_NAME = 'svc-ai-search-backend';

/** Prometheus job that scrapes the service (spec §1.6). */
export const SCRAPE_JOB = SERVICE_NAME;

/** Port the service listens on by default and the port of its Kubernetes Service (spec §1.6: `backend:8080`). */
export const SERVICE_PORT = 8080;

/** Operational paths (spec §4.1): what Prometheus scrapes and what the kubelet probes. */
export const PATHS = {
  /** The text exposition (spec §1.6: not `/metrics`). */
  metrics: '/api/metrics/prometheus',
  /** Health record with `rate_limit`. */
  health: '/health',
  /** Health record. */
  apiHealth: '/api/health',
  /** Readiness record: the readiness probe. */
  ready: '/health/ready',
  /** Liveness record: the startup and liveness probes. */
  live: '/health/live',
} as const;
