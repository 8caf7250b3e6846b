/** One vector selector of a PromQL expression: the metric name and the label names it matches on. */
export interface PromqlSelector {
  readonly metric: string;
  readonly labels: readonly string[];
}

/** Aggregation operators: a name followed by `(`, `by` or `without` is one of these, not a metric. */
const AGGREGATIONS = new Set([
  'sum',
  'min',
  'max',
  'avg',
  'group',
  'stddev',
  'stdvar',
  'count',
  'count_values',
  'bottomk',
  'topk',
  'quantile',
  'limitk',
  'limit_ratio',
]);
/** Keywords followed by a parenthesized label list. */
const LABEL_LISTS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right']);
/** Binary operators and modifiers spelled as words. */
const WORDS = new Set(['and', 'or', 'unless', 'bool', 'inf', 'nan', 'offset']);

const TOKEN =
  /\s+|#[^\n]*|"(?:[^"\\]|\\.)*"|'(?:[^'\\]|\\.)*'|`[^`]*`|\d+(?:\.\d+)?(?:e[+-]?\d+)?(?:[a-z]+\d*)*|[A-Za-z_:][A-Za-z0-9_:]*|=~|!~|!=|==|>=|<=|[{}()[\],=<>+\-*/%^@]|\$\{?[A-Za-z_][A-Za-z0-9_]*\}?/y;

/** Splits an expression into tokens (whitespace and comments dropped); throws on a character it cannot read. */
function tokens(expr: string): string[] {
  const out: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < expr.length) {
    const at = TOKEN.lastIndex;
    const m = TOKEN.exec(expr);
    if (!m) throw new Error(`cannot read PromQL at ${at}: ${JSON.stringify(expr.slice(at, at + 20))}`);
    if (!/^\s/.test(m[0]) && !m[0].startsWith('#')) out.push(m[0]);
  }
  return out;
}

/**
 * Every vector selector of a PromQL expression: `metric{label="v", ...}` and bare `metric`, with
 * the label names of its matchers. Functions, aggregations, `by (...)`/`on (...)` label lists,
 * ranges `[5m]`, offsets and numbers are not selectors. A selector without a metric name
 * (`{__name__=~"..."}`) is returned with the name `''`, for the caller to refuse.
 */
export function promqlSelectors(expr: string): PromqlSelector[] {
  const t = tokens(expr);
  const out: PromqlSelector[] = [];
  const matchers = (i: number): [string[], number] => {
    // t[i] is `{`; returns the label names and the index after `}`.
    const labels: string[] = [];
    let j = i + 1;
    while (t[j] !== '}') {
      if (t[j] === ',') {
        j++;
        continue;
      }
      labels.push(t[j]);
      j += 3; // name, operator, string
      if (j > t.length) throw new Error(`unclosed selector in ${expr}`);
    }
    return [labels, j + 1];
  };
  for (let i = 0; i < t.length;) {
    const tok = t[i];
    if (tok === '[') {
      while (t[i] !== ']') i++;
      i++;
    } else if (tok === '{') {
      const [labels, next] = matchers(i);
      out.push({ metric: '', labels });
      i = next;
    } else if (LABEL_LISTS.has(tok)) {
      i++;
      if (t[i] === '(') {
        while (t[i] !== ')') i++;
        i++;
      }
    } else if (tok === 'offset') {
      i += 2;
    } else if (/^[A-Za-z_:]/.test(tok) && !WORDS.has(tok)) {
      const next = t[i + 1];
      if (next === '(' || (AGGREGATIONS.has(tok) && (next === 'by' || next === 'without'))) {
        i++;
      } else if (next === '{') {
        const [labels, after] = matchers(i + 1);
        out.push({ metric: tok, labels });
        i = after;
      } else {
        out.push({ metric: tok, labels: [] });
        i++;
      }
    } else {
      i++;
    }
  }
  return out;
}
