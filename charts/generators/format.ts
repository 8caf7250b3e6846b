/**
 * Number formatting for PromQL thresholds and for the sentences of annotations. Thresholds come
 * from settings as JavaScript numbers; `14.4 * 0.001` is `0.014400000000000001`, which must not
 * leak into a rules file.
 */

/** A number with at most 12 significant digits and no float noise: `0.0144`, `1000000`. */
export function promNumber(n: number): string {
  if (!Number.isFinite(n)) throw new Error(`not a finite number: ${n}`);
  return String(Number(n.toPrecision(12)));
}

/** A ratio as a percentage for people: `0.05` → `5%`, `0.001` → `0.1%`. */
export function percent(ratio: number): string {
  return `${promNumber(ratio * 100)}%`;
}
