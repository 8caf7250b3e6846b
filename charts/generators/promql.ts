import type { Settings } from '../../configs';
import { promNumber } from './format';
import { METRICS, METRIC_LABELS, SCRAPE_JOB } from '../../contract';

/**
 * Labels every aggregation keeps. `namespace` rides along because a prometheus-operator's
 * Prometheus labels each target with it and an AlertmanagerConfig only routes alerts carrying
 * its own namespace; the stack's own Prometheus sets none, so there it groups like `by (job)`.
 */
export const AGGREGATION_LABELS = 'namespace, job';

/**
 * The matchers that scope a rule to this stack's series: the scrape job, plus in operator mode
 * the namespace, since a shared Prometheus scrapes every namespace under the same job name.
 */
export function scopeMatchers(settings: Settings): string {
  const job = `job="${SCRAPE_JOB}"`;
  return settings.deploy.monitoringMode === 'operator' ? `${job}, namespace="${settings.deploy.namespace}"` : job;
}

/** `metric{<scope>, ...}` (see `scopeMatchers`). */
export function scopedSelector(scope: string, metric: string, extraMatchers = ''): string {
  return `${metric}{${scope}${extraMatchers ? `, ${extraMatchers}` : ''}}`;
}

/** `<metric>_count` of the request histogram: every request, labelled by `status_class`. */
const REQUEST_COUNT = `${METRICS.httpRequestDuration}_count`;

/**
 * PromQL pieces of the rules, bound to one scope (`scopeMatchers`). Every aggregation keeps
 * `AGGREGATION_LABELS`.
 */
export interface RuleQueries {
  /** The scope's matchers. */
  readonly scope: string;
  /** `metric{<scope>, extra}`. */
  select(metric: string, extraMatchers?: string): string;
  /** Requests per second over `window`, summed over pods (a sum of rates, never a rate of a sum). */
  requestRate(window: string, extraMatchers?: string): string;
  /** Server errors (5xx) / all requests over `window`. */
  serverErrorRatio(window: string): string;
  /**
   * `and on (namespace, job) <at least perHour requests an hour over window>`: the volume guard
   * of a ratio alert. Per hour rather than per window, so a site too quiet for one window is too quiet for all.
   */
  volumeGuard(window: string, perHour: number): string;
}

/** `RuleQueries` for a scope (default: the standalone one, the job alone). */
export function ruleQueries(scope = `job="${SCRAPE_JOB}"`): RuleQueries {
  const select = (metric: string, extra = '') => scopedSelector(scope, metric, extra);
  const requestRate = (window: string, extra = '') =>
    `sum by (${AGGREGATION_LABELS}) (rate(${select(REQUEST_COUNT, extra)}[${window}]))`;
  return {
    scope,
    select,
    requestRate,
    serverErrorRatio: (window) =>
      `${requestRate(window, `status_class="${METRIC_LABELS.serverErrorClass}"`)}\n/\n${requestRate(window)}`,
    volumeGuard: (window, perHour) =>
      `and on (${AGGREGATION_LABELS})\n  ${requestRate(window)} * 3600 >= ${promNumber(perHour)}`,
  };
}

/** The `RuleQueries` of a stack's settings (operator mode adds the namespace to the scope). */
export function settingsQueries(settings: Settings): RuleQueries {
  return ruleQueries(scopeMatchers(settings));
}

/** Requests per second of the job over `window` (standalone scope). */
export function requestRate(window: string, extraMatchers = ''): string {
  return ruleQueries().requestRate(window, extraMatchers);
}

/** Server errors (5xx) / all requests over `window` (standalone scope). */
export function serverErrorRatio(window: string): string {
  return ruleQueries().serverErrorRatio(window);
}

/** The volume guard (standalone scope); see `RuleQueries.volumeGuard`. */
export function volumeGuard(window: string, perHour: number): string {
  return ruleQueries().volumeGuard(window, perHour);
}

/** `scopeMatchers` as labels, for series that must fall in the scope (rule tests, fixtures). */
export function scopeLabels(settings: Settings): Readonly<Record<string, string>> {
  return settings.deploy.monitoringMode === 'operator'
    ? { job: SCRAPE_JOB, namespace: settings.deploy.namespace }
    : { job: SCRAPE_JOB };
}
