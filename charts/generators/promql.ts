import { promNumber } from './format';
import { METRIC_LABELS, METRICS } from './metric-names';
import { SCRAPE_JOB } from './names';

/** `metric{job="svc-ai-search-backend", ...}`: every rule is scoped to the scrape job. */
export function jobSelector(metric: string, extraMatchers = ''): string {
  return `${metric}{job="${SCRAPE_JOB}"${extraMatchers ? `, ${extraMatchers}` : ''}}`;
}

/** `<metric>_count` of the request histogram: every request, labelled by `status_class`. */
const REQUEST_COUNT = `${METRICS.httpRequestDuration}_count`;

/** Requests per second of the job over `window`, summed over pods (a sum of rates, never a rate of a sum). */
export function requestRate(window: string, extraMatchers = ''): string {
  return `sum by (job) (rate(${jobSelector(REQUEST_COUNT, extraMatchers)}[${window}]))`;
}

/** Server errors (5xx) / all requests over `window`, per job. */
export function serverErrorRatio(window: string): string {
  return `${requestRate(window, `status_class="${METRIC_LABELS.serverErrorClass}"`)}\n/\n${requestRate(window)}`;
}

/**
 * `and on (job) <at least perHour requests an hour over window>`: the volume guard of a ratio
 * alert. Per hour rather than per window, so a site too quiet for one window is too quiet for all.
 */
export function volumeGuard(window: string, perHour: number): string {
  return `and on (job)\n  ${requestRate(window)} * 3600 >= ${promNumber(perHour)}`;
}
