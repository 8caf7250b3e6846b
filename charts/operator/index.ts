/** Operator mode: prometheus-operator custom resources in place of the stack's Prometheus and Alertmanager. */
export * from './operator-labels';
export * from './service-monitor';
export * from './prometheus-rule';
export * from './alertmanager-config';
export * from './operator-monitoring';
