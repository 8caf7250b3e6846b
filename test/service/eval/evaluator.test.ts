import { evaluate, type Ranker } from '../../../service/eval/evaluator';

describe('evaluate', () => {
  const queries = Array.from({ length: 50 }, (_, i) => ({ query: `q${i}`, relevant: new Map([['a', 1]]) }));

  it('hands the event loop back between queries: a timer due during a query fires before the next query', async () => {
    const order: string[] = [];
    // A ranker that answers synchronously, as the embedded index does.
    const ranker: Ranker = async (query) => {
      order.push(query);
      if (query === 'q0') {
        setTimeout(() => order.push('timer'), 1);
        // Let the timer come due inside this query, so its firing depends on yields, not on speed.
        const until = performance.now() + 5;
        while (performance.now() < until);
      }
      return [{ id: 'a', score: 1 }];
    };
    const report = await evaluate(queries, 10, ranker, { documents: 1, now: 0 });
    expect(report.queries).toBe(50);
    expect(report.metrics.mrr).toBe(1);
    expect(order.slice(0, 3)).toEqual(['q0', 'timer', 'q1']);
  });

  it('lets an immediate scheduled during the run through between two queries', async () => {
    const seen: number[] = [];
    let ran = 0;
    const ranker: Ranker = async () => {
      ran += 1;
      if (ran === 1) setImmediate(() => seen.push(ran));
      return [];
    };
    await evaluate(queries, 10, ranker, { documents: 0, now: 0 });
    expect(seen).toEqual([1]);
  });

  it('stops between queries once its signal is aborted (the client hung up)', async () => {
    const hangUp = new AbortController();
    let ran = 0;
    const ranker: Ranker = async () => {
      ran += 1;
      if (ran === 3) hangUp.abort();
      return [];
    };
    await expect(evaluate(queries, 10, ranker, { documents: 0, now: 0, signal: hangUp.signal })).rejects.toThrow();
    expect(ran).toBe(3);
  });
});
