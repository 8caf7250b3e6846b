import type { ComponentName } from './generators/names';

/** `app.kubernetes.io/part-of` of every object. */
export const PART_OF = 'svc-ai-search-backend';

/**
 * Labels that select a component's pods; stable across releases (selectors are immutable).
 * `instance` (the stack's `StackNames.instance`) keeps two stacks in one namespace apart.
 */
export function selectorLabels(component: ComponentName, instance: string = PART_OF): Record<string, string> {
  return { 'app.kubernetes.io/name': component, 'app.kubernetes.io/instance': instance, 'app.kubernetes.io/part-of': PART_OF };
}

/** Labels on every object of a component. */
export function objectLabels(component: ComponentName, instance: string = PART_OF): Record<string, string> {
  return { ...selectorLabels(component, instance), 'app.kubernetes.io/component': component, 'app.kubernetes.io/managed-by': 'cdk8s' };
}
