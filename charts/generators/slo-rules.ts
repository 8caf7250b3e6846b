import type { Settings } from '../../configs';
import { ALERTS } from './alert-names';
import { percent, promNumber } from './format';
import { settingsQueries } from './promql';
import { serviceAlert, type RecordingRule, type RuleGroup, type Severity } from './rule-types';
import { METRIC_PREFIX, SERVICE_NAME } from '../../contract';

/** One window pair of a multi-window, multi-burn-rate alert. */
export interface BurnRateWindow {
  /** Long window: the budget really is burning. */
  readonly long: string;
  /** Short window: ... and still is, so the alert resolves soon after the burning stops. */
  readonly short: string;
  /** Burn rate: how many times faster than "exactly on budget over 30 days". */
  readonly factor: number;
  /** Share of a 30-day budget spent when the long window burns at `factor`. */
  readonly budgetSpent: number;
}

/** One burn-rate alert: fires when any of its window pairs burns. */
export interface BurnRateAlert {
  readonly name: string;
  readonly severity: Severity;
  readonly for: string;
  readonly windows: readonly BurnRateWindow[];
}

/**
 * The multi-window, multi-burn-rate table of the Google SRE workbook ("Alerting on SLOs"): page
 * when 2% of a 30-day budget goes in an hour or 5% in six hours, open a ticket for 10% in a day
 * or in three days. Prometheus must keep at least the longest window (3d).
 */
export const BURN_RATE_ALERTS: readonly BurnRateAlert[] = [
  {
    name: ALERTS.errorBudgetFastBurn,
    severity: 'critical',
    for: '2m',
    windows: [
      { long: '1h', short: '5m', factor: 14.4, budgetSpent: 0.02 },
      { long: '6h', short: '30m', factor: 6, budgetSpent: 0.05 },
    ],
  },
  {
    name: ALERTS.errorBudgetSlowBurn,
    severity: 'warning',
    for: '15m',
    windows: [
      { long: '1d', short: '2h', factor: 3, budgetSpent: 0.1 },
      { long: '3d', short: '6h', factor: 1, budgetSpent: 0.1 },
    ],
  },
];

/** Every window the burn-rate alerts read, shortest first. */
export const SLO_WINDOWS: readonly string[] = ['5m', '30m', '1h', '2h', '6h', '1d', '3d'];

/** Name of the SLO rule group. */
export const SLO_RULE_GROUP = `${SERVICE_NAME}.slo`;

/** Recording rule name of the server-error ratio over `window`. */
export function errorRatioRecord(window: string): string {
  return `job:${METRIC_PREFIX}_request_errors:ratio_rate${window}`;
}

/** The error budget of an availability SLO: `1 - slo`, without float noise. */
export function errorBudget(slo: number): number {
  return Number(promNumber(1 - slo));
}

/**
 * Recording rules for the server-error ratio (status class 5xx of the latency histogram) over
 * every window, then the two burn-rate alerts on them. The SLO is `SLO_AVAILABILITY`. Each window
 * pair also needs `ALERT_MIN_REQUESTS_PER_HOUR` requests an hour over its long window: on a site too quiet for that,
 * one server error is a large share of the requests but no evidence that the budget burns, so
 * these alerts stay silent and BackendDown is what reports an outage there.
 */
export function sloRuleGroup(settings: Settings): RuleGroup {
  const slo = settings.alertRules.sloAvailability;
  const budget = errorBudget(slo);
  const q = settingsQueries(settings);
  const records: RecordingRule[] = SLO_WINDOWS.map((w) => ({
    record: errorRatioRecord(w),
    expr: q.serverErrorRatio(w),
  }));
  const alerts = BURN_RATE_ALERTS.map((a) => {
    const pairs = a.windows.map((p) => {
      const threshold = promNumber(p.factor * budget);
      return [
        '(',
        `  ${q.select(errorRatioRecord(p.long))} > ${threshold}`,
        'and',
        `  ${q.select(errorRatioRecord(p.short))} > ${threshold}`,
        `  ${q.volumeGuard(p.long, settings.alertRules.minRequestsPerHour).replace('\n', '\n  ')}`,
        ')',
      ].join('\n');
    });
    const spend = a.windows
      .map(
        (p) =>
          `${percent(p.budgetSpent)} of a 30-day budget in ${p.long} (${promNumber(p.factor)}x burn, confirmed over ${p.short})`,
      )
      .join(' or ');
    return serviceAlert({
      name: a.name,
      severity: a.severity,
      runbook: settings.alerting.runbookBaseUrl,
      expr: pairs.join('\nor\n'),
      for: a.for,
      summary: `svc-ai-search-backend is burning its ${percent(slo)} availability error budget ${a.severity === 'critical' ? 'fast' : 'steadily'}`,
      description:
        `Server errors (5xx) are spending the error budget of the ${percent(slo)} availability SLO (SLO_AVAILABILITY) ` +
        `at ${spend}, while the long window averages at least ${promNumber(settings.alertRules.minRequestsPerHour)} requests an hour (ALERT_MIN_REQUESTS_PER_HOUR).`,
    });
  });
  return { name: SLO_RULE_GROUP, rules: [...records, ...alerts] };
}
