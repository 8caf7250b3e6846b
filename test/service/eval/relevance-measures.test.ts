import { evaluateQuery, meanMetrics, trecOrder } from '../../../service/eval/relevance-measures';

describe('trec_eval measures', () => {
  // Judged: a (grade 2), b and d (grade 1) relevant; c judged not relevant.
  const judgments = new Map([
    ['a', 2],
    ['b', 1],
    ['c', 0],
    ['d', 1],
  ]);
  // Ranked: x, a, c, b, y → relevant at ranks 2 (a, grade 2) and 4 (b, grade 1); d never retrieved.
  const run = [
    { id: 'b', score: 0.6 },
    { id: 'x', score: 0.9 },
    { id: 'y', score: 0.5 },
    { id: 'a', score: 0.8 },
    { id: 'c', score: 0.7 },
  ];

  it('matches the hand-worked example at k = 5', () => {
    const m = evaluateQuery(run, judgments, 5);
    expect(m.num_rel).toBe(3);
    expect(m.num_ret).toBe(5);
    expect(m.num_rel_ret).toBe(2);
    expect(m.precision).toBeCloseTo(2 / 5, 12); // P@5: divided by k
    expect(m.recall).toBeCloseTo(2 / 3, 12);
    expect(m.map).toBeCloseTo((1 / 2 + 2 / 4) / 3, 12); // divided by all 3 relevant, d included
    expect(m.mrr).toBeCloseTo(1 / 2, 12);
    const dcg = 2 / Math.log2(3) + 1 / Math.log2(5);
    const idcg = 2 / Math.log2(2) + 1 / Math.log2(3) + 1 / Math.log2(4);
    expect(m.ndcg).toBeCloseTo(dcg / idcg, 12);
    expect(m.ndcg).toBeCloseTo(0.54058, 4);
  });

  it('cuts at k: at k = 2 only x and a count, P divides by k, the ideal is cut too', () => {
    const m = evaluateQuery(run, judgments, 2);
    expect(m.precision).toBeCloseTo(1 / 2, 12);
    expect(m.recall).toBeCloseTo(1 / 3, 12);
    expect(m.map).toBeCloseTo(1 / 2 / 3, 12);
    expect(m.ndcg).toBeCloseTo(2 / Math.log2(3) / (2 + 1 / Math.log2(3)), 12);
  });

  it('divides P@k by k even when fewer documents came back', () => {
    expect(evaluateQuery([{ id: 'a', score: 1 }], judgments, 10).precision).toBeCloseTo(0.1, 12);
  });

  it('breaks score ties like trec_eval (document id descending) and drops duplicates', () => {
    expect(
      trecOrder([
        { id: 'p', score: 1 },
        { id: 'q', score: 1 },
        { id: 'a', score: 2 },
        { id: 'p', score: 0.5 },
      ]).map((d) => d.id),
    ).toEqual(['a', 'q', 'p']);
    // The same input in any order gives the same measures.
    const shuffled = [...run].reverse();
    expect(evaluateQuery(shuffled, judgments, 5)).toEqual(evaluateQuery(run, judgments, 5));
  });

  it('scores a judged query with nothing retrieved, or nothing relevant, as 0 and still counts it', () => {
    const empty = evaluateQuery([], judgments, 10);
    expect(empty).toMatchObject({ ndcg: 0, mrr: 0, recall: 0, precision: 0, map: 0, num_ret: 0 });
    expect(evaluateQuery(run, new Map([['c', 0]]), 5)).toMatchObject({ ndcg: 0, map: 0, recall: 0 });
    const full = evaluateQuery(run, judgments, 5);
    const mean = meanMetrics([full, empty]);
    expect(mean.map).toBeCloseTo(full.map / 2, 12);
    expect(meanMetrics([])).toEqual({ ndcg: 0, mrr: 0, recall: 0, precision: 0, map: 0 });
  });

  it('uses linear gain for graded judgments', () => {
    const graded = new Map([
      ['a', 3],
      ['b', 1],
    ]);
    const swapped = evaluateQuery(
      [
        { id: 'b', score: 2 },
        { id: 'a', score: 1 },
      ],
      graded,
      2,
    );
    expect(swapped.ndcg).toBeCloseTo((1 + 3 / Math.log2(3)) / (3 + 1 / Math.log2(3)), 12);
  });
});
