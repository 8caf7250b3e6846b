import { PART_OF } from '../labels';
import type { StackNames } from '../generators/names';

/** `app.kubernetes.io/component` of the operator-mode custom resources. */
export const OPERATOR_COMPONENT = 'monitoring';

/**
 * Labels of an operator-mode custom resource: the stack's recommended labels, then `extra` (the
 * `PROMETHEUS_RULE_LABELS` a kube-prometheus-stack selects by, e.g. `release`), which win on a
 * clash; `version` is the backend's image version.
 */
export function operatorLabels(
  names: StackNames,
  extra: Readonly<Record<string, string>> = {},
  version?: string,
): Record<string, string> {
  return {
    'app.kubernetes.io/part-of': PART_OF,
    'app.kubernetes.io/instance': names.instance,
    'app.kubernetes.io/component': OPERATOR_COMPONENT,
    ...(version ? { 'app.kubernetes.io/version': version } : {}),
    'app.kubernetes.io/managed-by': 'cdk8s',
    ...extra,
  };
}
