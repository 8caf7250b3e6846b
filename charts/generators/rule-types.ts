import { SERVICE_NAME } from '../../contract';

/** Shapes of a Prometheus rule file, as the generators write it. */

/** Alert severities of spec §6.1; routing (spec §6.2) and inhibition key on them. */
export type Severity = 'critical' | 'warning' | 'info';

/**
 * `severity` of an alert: spec §6.1's three, or `none` for the heartbeat, which no severity route
 * matches (it has a route of its own) and no inhibition rule touches.
 */
export type AlertSeverity = Severity | 'none';

/** `component` of the alerts about the monitoring pipeline itself: the backend's outage never silences them. */
export const MONITORING_COMPONENT = 'monitoring';

/** Labels every generated alert carries. */
export interface AlertLabels {
  readonly severity: AlertSeverity;
  /** Always `svc-ai-search-backend` (spec §6.1). */
  readonly service: string;
  /** `monitoring` on the pipeline's own alerts; absent on the service's. */
  readonly component?: typeof MONITORING_COMPONENT;
}

/** Annotations every generated alert carries. */
export interface AlertAnnotations {
  readonly summary: string;
  readonly description: string;
  /** `RUNBOOK_BASE_URL#<alertname in lower case>`: the heading of docs/runbooks.md. */
  readonly runbook_url: string;
}

/** An alerting rule. */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  /** Prometheus duration the condition must hold before the alert fires. */
  readonly for: string;
  readonly labels: AlertLabels;
  readonly annotations: AlertAnnotations;
}

/** A recording rule. */
export interface RecordingRule {
  readonly record: string;
  readonly expr: string;
}

/** Either kind of rule. */
export type Rule = AlertingRule | RecordingRule;

/** One rule group: evaluated together, in order. */
export interface RuleGroup {
  readonly name: string;
  readonly rules: readonly Rule[];
}

/** A rule file (`promtool check rules` input). */
export interface RuleFile {
  readonly groups: readonly RuleGroup[];
}

/** True for alerting rules. */
export function isAlertingRule(rule: Rule): rule is AlertingRule {
  return 'alert' in rule;
}

/** Every alerting rule of a file, in file order. */
export function alertingRules(file: RuleFile): AlertingRule[] {
  return file.groups.flatMap((g) => g.rules.filter(isAlertingRule));
}

/** The anchor of an alert's runbook heading: GitHub's anchor of `## <name>`. */
export function runbookAnchor(name: string): string {
  return name.toLowerCase();
}

/** `runbook_url` of an alert: the runbook page plus the alert's anchor. */
export function runbookUrl(base: string, name: string): string {
  return `${base}#${runbookAnchor(name)}`;
}

/** What `serviceAlert` needs: the rest is the same for every alert of this service. */
export interface ServiceAlertOptions {
  readonly name: string;
  readonly severity: AlertSeverity;
  /** Runbook page (`RUNBOOK_BASE_URL`); the alert links to its heading there. */
  readonly runbook: string;
  /** @default absent: an alert about the service */
  readonly component?: typeof MONITORING_COMPONENT;
  readonly expr: string;
  readonly for: string;
  readonly summary: string;
  readonly description: string;
}

/** An alerting rule labelled `service="svc-ai-search-backend"` and its severity (spec §6.1). */
export function serviceAlert(o: ServiceAlertOptions): AlertingRule {
  return {
    alert: o.name,
    expr: o.expr,
    for: o.for,
    labels: { severity: o.severity, service: SERVICE_NAME, ...(o.component ? { component: o.component } : {}) },
    annotations: { summary: o.summary, description: o.description, runbook_url: runbookUrl(o.runbook, o.name) },
  };
}
