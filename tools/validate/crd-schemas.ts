import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import type { Manifest } from '../read-manifests';

/** API group of the prometheus-operator's custom resources. */
export const OPERATOR_GROUP = 'monitoring.coreos.com';

/** True for a prometheus-operator custom resource (ServiceMonitor, PrometheusRule, AlertmanagerConfig, ...). */
export function isOperatorResource(m: Manifest): boolean {
  return m.apiVersion.startsWith(`${OPERATOR_GROUP}/`);
}

/**
 * Validates prometheus-operator custom resources against the operator's OpenAPI schemas
 * (@kubernetes-models/prometheus-operator). That package is ES modules only, so the check runs
 * in a child Node process (crd-schemas.mjs). Returns one message per invalid object.
 */
export function crdSchemaProblems(manifests: readonly Manifest[]): string[] {
  if (manifests.length === 0) return [];
  const r = spawnSync(process.execPath, [join(__dirname, 'crd-schemas.mjs')], {
    input: JSON.stringify(manifests),
    encoding: 'utf8',
  });
  if (r.status !== 0)
    return [`the CRD schema check failed to run: ${r.stderr || r.error?.message || `exit ${r.status}`}`];
  return JSON.parse(r.stdout) as string[];
}
