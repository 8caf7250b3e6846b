import { Construct } from 'constructs';
import { labelMap, type Settings } from '../../configs';
import { alertmanagerConfig } from '../generators/alertmanager-config';
import { alertRules } from '../generators/alert-rules';
import { stackNames, type StackNames } from '../generators/names';
import { BackendAlertmanagerConfig } from './alertmanager-config';
import { BackendPrometheusRule } from './prometheus-rule';
import { BackendServiceMonitor } from './service-monitor';

/** What `OperatorMonitoring` writes. */
export interface OperatorMonitoringProps {
  /** The stack's settings (namespace, scrape interval, rule thresholds, receivers, `PROMETHEUS_RULE_LABELS`). */
  readonly settings: Settings;
  /** Object names of the stack. @default stackNames(settings.deploy.namePrefix) */
  readonly names?: StackNames;
  /** `app.kubernetes.io/version` of the object (the backend's image version). @default none */
  readonly version?: string;
}

/**
 * Operator mode's monitoring: a ServiceMonitor for the backend, a PrometheusRule with the rule
 * groups of `alertRules` and an AlertmanagerConfig with the routing of `alertmanagerConfig`, each
 * labelled with `PROMETHEUS_RULE_LABELS` for the cluster's selectors.
 */
export class OperatorMonitoring extends Construct {
  readonly serviceMonitor: BackendServiceMonitor;
  readonly prometheusRule: BackendPrometheusRule;
  readonly alertmanagerConfig: BackendAlertmanagerConfig;

  constructor(scope: Construct, id: string, props: OperatorMonitoringProps) {
    super(scope, id);
    const s = props.settings;
    const names = props.names ?? stackNames(s.deploy.namePrefix);
    const labels = labelMap(s.deploy.prometheusRuleLabels);
    this.serviceMonitor = new BackendServiceMonitor(this, 'service-monitor', {
      namespace: s.deploy.namespace,
      interval: s.deploy.scrapeInterval,
      labels,
      names,
      version: props.version,
    });
    this.prometheusRule = new BackendPrometheusRule(this, 'prometheus-rule', {
      rules: alertRules(s),
      labels,
      names,
      version: props.version,
    });
    this.alertmanagerConfig = new BackendAlertmanagerConfig(this, 'alertmanager-config', {
      config: alertmanagerConfig(s),
      labels,
      names,
      version: props.version,
    });
  }
}
