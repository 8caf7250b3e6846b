// Validates prometheus-operator custom resources (JSON array on stdin) against the schemas of
// @kubernetes-models/prometheus-operator, which ships as ES modules only; crd-schemas.ts runs
// this file in a child process so CommonJS callers (jest, ts-node) can use it.
// Prints a JSON array of problems, one string per invalid or unknown object.
import { PrometheusRule, ServiceMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';
import { AlertmanagerConfig } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1alpha1';

const MODELS = {
  'monitoring.coreos.com/v1/ServiceMonitor': ServiceMonitor,
  'monitoring.coreos.com/v1/PrometheusRule': PrometheusRule,
  'monitoring.coreos.com/v1alpha1/AlertmanagerConfig': AlertmanagerConfig,
};

let input = '';
for await (const chunk of process.stdin) input += chunk;
const problems = [];
for (const m of JSON.parse(input)) {
  const id = `${m.kind}/${m.metadata?.name ?? '<unnamed>'}`;
  const Model = MODELS[`${m.apiVersion}/${m.kind}`];
  if (!Model) {
    problems.push(`${id}: no schema for ${m.apiVersion} ${m.kind}`);
    continue;
  }
  try {
    new Model(m).validate();
  } catch (e) {
    problems.push(`${id}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
process.stdout.write(JSON.stringify(problems));
