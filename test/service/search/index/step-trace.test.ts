import type { WeightedTerm } from '../../../../service/search/index/cursor';
import { CompactIndex } from '../../../../service/search/index/compact-index';
import { traceSteps } from '../../../../service/search/index/step-trace';
import { bm25, boost } from '../../../helpers/minisearch-twin';

describe('step trace of cursorJob', () => {
  afterEach(() => traceSteps(undefined));

  it('writes every step over its threshold with its sites and term, and leaves the cursors and count as they are', () => {
    // Past `VALUE_STEP` postings a term, with tombstones in the base: its live postings gathered in steps.
    const n = 40_000;
    const make = () => {
      const c = new CompactIndex(['title', 'text'], { background: false });
      for (let d = 0; d < n; d++) c.load(`d${d}`, [[], [d % 2 === 0 ? 'a' : 'b', 'x']]);
      c.seal();
      for (let d = 0; d < n; d += 10) c.discard(`d${d}`);
      return c;
    };
    const terms: WeightedTerm[] = [
      ['a', 1],
      ['x', 0.5],
    ];
    const plain = make().cursors(terms, boost, bm25, true);
    const c = make();
    const lines: string[] = [];
    traceSteps({ ms: -1, log: (line) => lines.push(line) });
    const traced = c.cursors(terms, boost, bm25, true);
    expect(traced.total).toBe(plain.total);
    expect(traced.total).toBe(n - n / 10);
    expect(traced.cursors.map((k) => [...k.docs])).toEqual(plain.cursors.map((k) => [...k.docs]));
    expect(lines.length).toBeGreaterThan(4);
    for (const line of lines)
      expect(line).toMatch(/^\[step\] cursorJob \d+\.\d ms cpu: .* -> .* term=\S* n=\d+ faults=\d+ /);
    const sites = lines.map((l) => / -> (\S+)/.exec(l)![1]);
    expect(sites).toEqual(expect.arrayContaining(['live:gather', 'values', 'cursor:term', 'union:part', 'done']));

    traceSteps(undefined);
    lines.length = 0;
    expect(c.cursors(terms, boost, bm25, true).total).toBe(plain.total);
    expect(lines).toEqual([]);
  });
});
