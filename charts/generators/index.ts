/** Pure generators: settings → config documents. No cdk8s, no I/O. */
export * from './names';
export * from './alert-names';
export * from './format';
export * from './promql';
export * from './yaml';
export * from './rule-types';
export * from './alert-rules';
export * from './slo-rules';
export * from './pipeline-rules';
export * from './prometheus-config';
export * from './routing';
export * from './alertmanager-config';
export * from './kvstore-config';
export * from './test-alert';
export * from './dashboard-panels';
export * from './dashboard';
