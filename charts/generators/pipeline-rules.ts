import type { Settings } from '../../configs';
import { ALERTS } from './alert-names';
import { PIPELINE_JOBS } from './names';
import { MONITORING_COMPONENT, serviceAlert, type AlertingRule, type RuleGroup, type Severity } from './rule-types';
import { SERVICE_NAME } from '../../contract';

/** Name of the group of alerts about the monitoring pipeline itself. */
export const PIPELINE_RULE_GROUP = `${SERVICE_NAME}.pipeline`;

/** `metric{job="<job>"}`. */
function of(job: string, metric: string): string {
  return `${metric}{job="${job}"}`;
}

/** One pipeline alert before the common labels are added. */
interface PipelineAlert {
  readonly name: string;
  readonly severity: Severity | 'none';
  readonly expr: string;
  readonly for: string;
  readonly summary: string;
  readonly description: string;
}

/**
 * Alerts that watch the watchers, in the shape of the Prometheus and Alertmanager mixins: the
 * always-firing heartbeat, Alertmanager failing to deliver or to load its config, Prometheus
 * not reaching Alertmanager, failing rule evaluations or failing to load its config. Each
 * carries `component="monitoring"`, so a backend outage (BackendDown) never silences them.
 */
export function pipelineRuleGroup(settings: Settings): RuleGroup {
  const prom = PIPELINE_JOBS.prometheus;
  const am = PIPELINE_JOBS.alertmanager;
  const alerts: PipelineAlert[] = [
    {
      name: ALERTS.watchdog,
      severity: 'none',
      expr: 'vector(1)',
      for: '0m',
      summary: 'The alerting pipeline delivers (always firing)',
      description:
        "This alert always fires. It goes to the heartbeat receiver only (HEARTBEAT_URL), where a dead man's switch " +
        'service raises the alarm when it stops arriving: then Prometheus, Alertmanager or the path between them is broken.',
    },
    {
      name: ALERTS.alertmanagerFailedToSend,
      severity: 'warning',
      expr: `sum by (job, integration) (increase(${of(am, 'alertmanager_notifications_failed_total')}[5m])) > 0`,
      for: '5m',
      summary: 'Alertmanager fails to send {{ $labels.integration }} notifications',
      description:
        '{{ $value | humanize }} {{ $labels.integration }} notifications failed in the last 5m: a wrong SMTP password, ' +
        'an expired chat webhook or an unreachable receiver. Alerts to that integration are being lost.',
    },
    {
      name: ALERTS.alertmanagerConfigReloadFailed,
      severity: 'warning',
      expr: `max_over_time(${of(am, 'alertmanager_config_last_reload_successful')}[5m]) == 0`,
      for: '10m',
      summary: 'Alertmanager failed to load its configuration',
      description:
        'Alertmanager keeps running on its previous configuration: the new alertmanager.yml (or a secret file it reads) is invalid.',
    },
    {
      name: ALERTS.prometheusNotConnectedToAlertmanager,
      severity: 'warning',
      expr: `max_over_time(${of(prom, 'prometheus_notifications_alertmanagers_discovered')}[5m]) < 1`,
      for: '10m',
      summary: 'Prometheus knows no Alertmanager',
      description: 'Prometheus has discovered no Alertmanager to send alerts to: no alert leaves Prometheus.',
    },
    {
      name: ALERTS.prometheusErrorSendingAlerts,
      severity: 'warning',
      expr:
        `sum by (job) (rate(${of(prom, 'prometheus_notifications_errors_total')}[5m]))\n/\n` +
        `sum by (job) (rate(${of(prom, 'prometheus_notifications_sent_total')}[5m]))\n> 0.01`,
      for: '15m',
      summary: 'Prometheus fails to send alerts to Alertmanager',
      description:
        '{{ $value | humanizePercentage }} of the alerts Prometheus sent to Alertmanager failed over the last 5m.',
    },
    {
      name: ALERTS.prometheusRuleFailures,
      severity: 'warning',
      expr: `sum by (job, rule_group) (increase(${of(prom, 'prometheus_rule_evaluation_failures_total')}[5m])) > 0`,
      for: '15m',
      summary: 'Prometheus fails to evaluate rules of {{ $labels.rule_group }}',
      description:
        '{{ $value | humanize }} rule evaluations of {{ $labels.rule_group }} failed in the last 5m: their alerts may be wrong or missing.',
    },
    {
      name: ALERTS.prometheusConfigReloadFailed,
      severity: 'warning',
      expr: `max_over_time(${of(prom, 'prometheus_config_last_reload_successful')}[5m]) == 0`,
      for: '10m',
      summary: 'Prometheus failed to load its configuration',
      description:
        'Prometheus keeps running on its previous configuration: the new prometheus.yml or a rule file is invalid.',
    },
  ];
  const rules: AlertingRule[] = alerts.map((a) =>
    serviceAlert({ ...a, runbook: settings.alerting.runbookBaseUrl, component: MONITORING_COMPONENT }),
  );
  return { name: PIPELINE_RULE_GROUP, rules };
}
