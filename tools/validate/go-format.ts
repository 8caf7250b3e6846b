/**
 * The few Prometheus template functions the generated annotations use, reproduced so rule unit
 * tests can state the exact text an alert will carry (promtool compares annotations exactly).
 */

/** Go's `fmt.Sprintf("%.4g", v)`. */
export function goG4(v: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '+Inf' : '-Inf';
  if (v === 0) return '0';
  const [mantissa, exp] = v.toExponential(3).split('e');
  const x = Number(exp);
  const trim = (s: string) => (s.includes('.') ? s.replace(/0+$/, '').replace(/\.$/, '') : s);
  if (x < -4 || x >= 4) return `${trim(mantissa)}e${x < 0 ? '-' : '+'}${String(Math.abs(x)).padStart(2, '0')}`;
  return trim(v.toFixed(Math.max(0, 3 - x)));
}

/** Prometheus `humanize`: SI prefixes, 4 significant digits. */
export function humanize(v: number): string {
  if (v === 0 || !Number.isFinite(v)) return goG4(v);
  let prefix = '';
  if (Math.abs(v) >= 1) {
    for (const p of ['k', 'M', 'G', 'T', 'P', 'E', 'Z', 'Y']) {
      if (Math.abs(v) < 1000) break;
      prefix = p;
      v /= 1000;
    }
  } else {
    for (const p of ['m', 'u', 'n', 'p', 'f', 'a', 'z', 'y']) {
      if (Math.abs(v) >= 1) break;
      prefix = p;
      v *= 1000;
    }
  }
  return `${goG4(v)}${prefix}`;
}

/** Prometheus `humanizePercentage`: a ratio as a percentage, 4 significant digits. */
export function humanizePercentage(v: number): string {
  return `${goG4(v * 100)}%`;
}

const FUNCTIONS: Readonly<Record<string, (v: number) => string>> = { humanize, humanizePercentage };

/**
 * Expands `{{ $labels.name }}` and `{{ $value | fn }}` in an annotation. Any other template
 * construct throws: the generators must stay within what the tests can predict.
 */
export function renderAnnotation(template: string, labels: Readonly<Record<string, string>>, value: number): string {
  return template.replace(/\{\{\s*(.*?)\s*\}\}/g, (_m, expr: string) => {
    const label = /^\$labels\.([A-Za-z_]\w*)$/.exec(expr);
    if (label) return labels[label[1]] ?? '';
    const fn = /^\$value\s*\|\s*(\w+)$/.exec(expr);
    if (fn && FUNCTIONS[fn[1]]) return FUNCTIONS[fn[1]](value);
    throw new Error(`annotation template {{ ${expr} }} is not supported by the rule-test renderer`);
  });
}
