import { dump } from 'js-yaml';

/**
 * Renders a config document as YAML: keys in insertion order, no line folding, no anchors, so the
 * same document always gives the same bytes and a diff shows only what changed.
 */
export function toYaml(doc: unknown): string {
  return dump(doc, { lineWidth: -1, noRefs: true });
}
