import { SERVICE_NAME } from './names';

/** Shapes of a Prometheus rule file, as the generators write it. */

/** Alert severities of spec §6.1; routing (spec §6.2) and inhibition key on them. */
export type Severity = 'critical' | 'warning' | 'info';

/** Labels every generated alert carries. */
export interface AlertLabels {
  readonly severity: Severity;
  /** Always `svc-ai-search-backend` (spec §6.1). */
  readonly service: string;
}

/** An alerting rule. */
export interface AlertingRule {
  readonly alert: string;
  readonly expr: string;
  /** Prometheus duration the condition must hold before the alert fires. */
  readonly for: string;
  readonly labels: AlertLabels;
  readonly annotations: { readonly summary: string; readonly description: string };
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

/** What `serviceAlert` needs: the rest is the same for every alert of this service. */
export interface ServiceAlertOptions {
  readonly name: string;
  readonly severity: Severity;
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
    labels: { severity: o.severity, service: SERVICE_NAME },
    annotations: { summary: o.summary, description: o.description },
  };
}
