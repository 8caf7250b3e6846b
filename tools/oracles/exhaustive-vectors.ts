/**
 * The oracle of the vector index (service/search/vectors/): every item's every passage scored by
 * cosine similarity in double precision, an item scoring as its best passage, all sorted. Slow and
 * obviously right; the index's exact path must equal it and its graph is measured against it.
 */

/** Cosine similarity of two vectors, in double precision. */
export function cosine(a: ArrayLike<number>, b: ArrayLike<number>): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (let i = 0; i < a.length; i++) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
  }
  return dot / Math.sqrt(na * nb);
}

/** The `k` items of `items` nearest `query`, best first, among those `accept` takes. */
export function exhaustiveVectorSearch(
  items: ReadonlyMap<string, ReadonlyArray<ArrayLike<number>>>,
  query: ArrayLike<number>,
  k: number,
  accept: (id: string) => boolean = () => true,
): Array<{ id: string; score: number }> {
  const scored: Array<{ id: string; score: number }> = [];
  for (const [id, vectors] of items) {
    if (vectors.length === 0 || !accept(id)) continue;
    scored.push({ id, score: Math.max(...vectors.map((v) => cosine(v, query))) });
  }
  return scored.sort((a, b) => b.score - a.score).slice(0, Math.max(0, k));
}
