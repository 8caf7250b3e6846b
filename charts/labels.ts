import { SERVICE_NAME } from '../contract';
import type { ComponentName } from './generators/names';

/** `app.kubernetes.io/part-of` of every object. */
export const PART_OF = SERVICE_NAME;

/**
 * Labels that select a component's pods; stable across releases (selectors are immutable).
 * `instance` (the stack's `StackNames.instance`) keeps two stacks in one namespace apart.
 */
export function selectorLabels(component: ComponentName, instance: string = PART_OF): Record<string, string> {
  return {
    'app.kubernetes.io/name': component,
    'app.kubernetes.io/instance': instance,
    'app.kubernetes.io/part-of': PART_OF,
  };
}

/**
 * Labels on every object of a component. `version` (from `imageVersion`) is on the objects only,
 * never in selectors or pod templates, so a new release neither orphans pods nor rolls them twice.
 */
export function objectLabels(
  component: ComponentName,
  instance: string = PART_OF,
  version?: string,
): Record<string, string> {
  return {
    ...selectorLabels(component, instance),
    'app.kubernetes.io/component': component,
    ...(version ? { 'app.kubernetes.io/version': version } : {}),
    'app.kubernetes.io/managed-by': 'cdk8s',
  };
}

/**
 * `app.kubernetes.io/version` from an image reference: its tag (`redis:7.2-alpine` → `7.2-alpine`),
 * the first 12 hex digits of a digest, or `latest` without either; cut to a valid label value.
 */
export function imageVersion(image: string): string {
  const digest = /@sha256:([0-9a-f]{12})/.exec(image);
  if (digest) return `sha256-${digest[1]}`;
  const last = image.split('/').pop() ?? image;
  const tag = last.includes(':') ? last.slice(last.indexOf(':') + 1) : 'latest';
  return (
    tag
      .replace(/[^A-Za-z0-9._-]/g, '-')
      .slice(0, 63)
      .replace(/^[^A-Za-z0-9]+|[^A-Za-z0-9]+$/g, '') || 'latest'
  );
}
