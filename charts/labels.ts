import type { ComponentName } from './generators/names';

/** `app.kubernetes.io/part-of` of every object. */
export const PART_OF = 'svc-ai-search-backend';

/** Labels that select a component's pods; stable across releases (selectors are immutable). */
export function selectorLabels(component: ComponentName): Record<string, string> {
  return { 'app.kubernetes.io/name': component, 'app.kubernetes.io/part-of': PART_OF };
}

/** Labels on every object of a component. */
export function objectLabels(component: ComponentName): Record<string, string> {
  return { ...selectorLabels(component), 'app.kubernetes.io/managed-by': 'cdk8s' };
}
