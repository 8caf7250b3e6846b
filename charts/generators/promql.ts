import { SCRAPE_JOB } from './names';

/** `metric{job="svc-ai-search-backend", ...}`: every rule is scoped to the scrape job. */
export function jobSelector(metric: string, extraMatchers = ''): string {
  return `${metric}{job="${SCRAPE_JOB}"${extraMatchers ? `, ${extraMatchers}` : ''}}`;
}
