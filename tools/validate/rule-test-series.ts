/** Input series for the alert rules' promtool tests (`rule-tests.ts`): counters, gauges and request histograms per pod. */
import type { Settings } from '../../configs';
import { promNumber } from '../../charts/generators/format';
import type { InputSeries } from './promtool-tests';
import { METRICS, METRIC_LABELS } from '../../contract';

export const INTERVAL_MINUTES = 1;

/** A label set. */
export type Labels = Readonly<Record<string, string>>;

/** `instance` labels of backend pods in the tests. */
export function podNames(count: number): string[] {
  return Array.from({ length: count }, (_, i) => `10.0.0.${i + 1}:8080`);
}

/** Two pods: the smallest set where "one down, others serve" exists. */
export const PODS = podNames(2);

/** A series of the backend's job, inside the rules' scope (`scope`: job, and the namespace in operator mode). */
export function seriesIn(scope: Labels, metric: string, labels: Labels = {}): string {
  const all = { ...scope, ...labels };
  return `${metric}{${Object.entries(all)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
}

/** A series of one of the pipeline's own jobs. */
export function pipelineSeries(job: string, metric: string, labels: Readonly<Record<string, string>> = {}): string {
  const all = { job, ...labels };
  return `${metric}{${Object.entries(all)
    .map(([k, v]) => `${k}="${v}"`)
    .join(', ')}}`;
}

/** A counter growing by `step` each minute. */
export function counter(step: number, samples: number): string {
  return `0+${promNumber(step)}x${samples}`;
}

/** A gauge holding `value`. */
export function gauge(value: number, samples: number): string {
  return `${promNumber(value)}+0x${samples}`;
}

/** Requests a minute in the firing scenarios: enough for every window's volume guard from its first minute on (3d = 72h). */
export function busyVolume(settings: Settings): number {
  return Math.max(1000, 100 * settings.alertRules.minRequestsPerHour);
}

export function requestCounts(scope: Labels, errorRatio: number, n: number, perMinute = 1000): InputSeries[] {
  const count = `${METRICS.httpRequestDuration}_count`;
  const route = { route: 'search', method: 'GET' };
  return [
    {
      series: seriesIn(scope, count, { ...route, status_class: '2xx' }),
      values: counter((1 - errorRatio) * perMinute, n),
    },
    {
      series: seriesIn(scope, count, { ...route, status_class: METRIC_LABELS.serverErrorClass }),
      values: counter(errorRatio * perMinute, n),
    },
  ];
}

export function latencyBuckets(
  scope: Labels,
  threshold: number,
  inBucket: 'below' | 'above',
  n: number,
): InputSeries[] {
  const labels = { route: 'search', method: 'GET', status_class: '2xx' };
  const bucket = `${METRICS.httpRequestDuration}_bucket`;
  const bounds: Array<[string, boolean]> = [
    [promNumber(threshold / 2), inBucket === 'below'],
    [promNumber(threshold), inBucket === 'below'],
    [promNumber(threshold * 2), true],
    ['+Inf', true],
  ];
  return bounds.map(([le, holds]) => ({
    series: seriesIn(scope, bucket, { ...labels, le }),
    values: counter(holds ? 100 : 0, n),
  }));
}
