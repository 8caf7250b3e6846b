/** Something ranked: an id and its score (a hit of the top-k functions and of the index). */
export interface Scored {
  readonly id: string;
  readonly score: number;
}

/**
 * A hit of the pruned scorers (`maxScoreTopK`, `accumulatedTopK`, `boundedTopK`): its short
 * document id beside its external id, so that what the query does with its hits next (RM3's
 * feedback, proximity, snippets) reads the index by it instead of looking the id up.
 */
export interface DocHit extends Scored {
  readonly doc: number;
}

/** The ranking order: score descending, ties by id ascending (so pages are stable). */
export function byRank(a: Scored, b: Scored): number {
  return b.score - a.score || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
}

/**
 * The best `k` of `hits` in ranking order, without sorting them all: a bounded heap keeps the
 * best k seen so far (O(n log k)), which matters when a page of 10 is cut from thousands of
 * matches. Leaves `hits` untouched.
 */
export function topHits<T extends Scored>(hits: readonly T[], k: number): T[] {
  if (k <= 0) return [];
  if (k * 4 >= hits.length) return [...hits].sort(byRank).slice(0, k);
  // Max-heap under byRank: the root is the worst of the kept hits, the first to go.
  const heap: T[] = [];
  const worse = (i: number, j: number) => byRank(heap[i], heap[j]) > 0;
  const swap = (i: number, j: number) => {
    const t = heap[i];
    heap[i] = heap[j];
    heap[j] = t;
  };
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && worse(l, m)) m = l;
      if (r < heap.length && worse(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (const h of hits) {
    if (heap.length < k) {
      heap.push(h);
      for (let i = heap.length - 1; i > 0;) {
        const p = (i - 1) >> 1;
        if (!worse(i, p)) break;
        swap(i, p);
        i = p;
      }
    } else if (byRank(h, heap[0]) < 0) {
      heap[0] = h;
      down(0);
    }
  }
  return heap.sort(byRank);
}
