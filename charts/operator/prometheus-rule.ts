import { Construct } from 'constructs';
import {
  PrometheusRule,
  PrometheusRuleSpecGroupsRulesExpr,
  type PrometheusRuleSpecGroups,
} from '../../imports/prometheus-rule-monitoring.coreos.com';
import { stackNames, type StackNames } from '../generators/names';
import { isAlertingRule, type RuleFile } from '../generators/rule-types';
import { operatorLabels } from './operator-labels';
import { SERVICE_NAME } from '../../contract';

/** What `BackendPrometheusRule` writes. */
export interface BackendPrometheusRuleProps {
  /** The rule groups (from `alertRules`, the generator standalone mode's ConfigMap holds too). */
  readonly rules: RuleFile;
  /** Extra labels the cluster's Prometheus selects rules by (`PROMETHEUS_RULE_LABELS`). @default none */
  readonly labels?: Readonly<Record<string, string>>;
  /** Object names of the stack. @default stackNames('') */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` of the object (the backend's image version). @default none */
  readonly version?: string;
}

/** A rule file's groups in the PrometheusRule's shape: the same names, expressions, labels and annotations. */
export function prometheusRuleGroups(rules: RuleFile): PrometheusRuleSpecGroups[] {
  return rules.groups.map((g) => ({
    name: g.name,
    rules: g.rules.map((r) =>
      isAlertingRule(r)
        ? {
            alert: r.alert,
            expr: PrometheusRuleSpecGroupsRulesExpr.fromString(r.expr),
            for: r.for,
            labels: { ...r.labels },
            annotations: { ...r.annotations },
          }
        : { record: r.record, expr: PrometheusRuleSpecGroupsRulesExpr.fromString(r.expr) },
    ),
  }));
}

/** A prometheus-operator PrometheusRule carrying the stack's rule groups. */
export class BackendPrometheusRule extends Construct {
  /** The PrometheusRule object. */
  readonly resource: PrometheusRule;

  constructor(scope: Construct, id: string, props: BackendPrometheusRuleProps) {
    super(scope, id);
    const names = props.names ?? stackNames();
    this.resource = new PrometheusRule(this, 'resource', {
      metadata: { name: `${names.prefix}${SERVICE_NAME}`, labels: operatorLabels(names, props.labels, props.version) },
      spec: { groups: prometheusRuleGroups(props.rules) },
    });
  }
}
