/**
 * Larger benchmark corpora grown from Vaswani, the way issue 16 measured them: the 11,429
 * abstracts are copied until the target size is reached, and every copy after the first gets a
 * perturbed id and perturbed words, so the grown corpus has Vaswani's length distribution and
 * term statistics but no two documents are identical (an index cannot collapse duplicates, and
 * posting lists grow the way a real corpus's do, long ones longer and new rare terms appearing).
 *
 * Method (deterministic: the same input, size and seed give the same corpus byte for byte):
 * - copy 0 is the collection unchanged, so every Vaswani query and judgment still applies;
 * - copy c ≥ 1 of item `doc-n` has id `doc-n~c` (ids stay unique, and a judged id never recurs);
 * - in copy c, each word of the title and body is, with probability `rate` (default 0.1),
 *   replaced by a word drawn uniformly from the collection's distinct words; with probability
 *   `rate / 4` it is instead suffixed with the copy number (`laser` → `laser3`), which creates
 *   the long tail of rare terms that a growing corpus has;
 * - the last copy is partial: items are taken in collection order until the size is reached;
 * - the random stream is mulberry32 seeded with `seed` (default 16), consumed in item order.
 * Nothing is written to disk: the corpus is rebuilt in memory by each run (~1 s per 100k items).
 */

/** The fields of a document that the builder reads and perturbs. */
export interface CorpusItem {
  readonly id: string;
  readonly title: string;
  readonly body: string;
}

/** Options of {@link growCorpus}. */
export interface GrowOptions {
  /** Probability that a word of a copy is replaced. @default 0.1 */
  readonly rate?: number;
  /** Seed of the random stream. @default 16 */
  readonly seed?: number;
}

/** mulberry32: a small, fast, well-mixed 32-bit generator; returns floats in [0, 1). */
export function mulberry32(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const WORD = /[a-z][a-z0-9]*/gi;

/** The collection's distinct lower-cased words, sorted (sorting keeps the draw independent of item order quirks). */
export function vocabulary(items: readonly CorpusItem[]): string[] {
  const words = new Set<string>();
  for (const item of items) {
    for (const m of `${item.title} ${item.body}`.toLowerCase().matchAll(WORD)) words.add(m[0]);
  }
  return [...words].sort();
}

/**
 * Grows `items` to `size` documents by the method in this module's comment. A `size` at or
 * below the collection's returns its first `size` items unchanged.
 */
export function growCorpus<T extends CorpusItem>(items: readonly T[], size: number, opts: GrowOptions = {}): T[] {
  if (!Number.isInteger(size) || size < 0)
    throw new RangeError(`growCorpus: size must be a non-negative integer, got ${size}`);
  if (items.length === 0) return [];
  const rate = opts.rate ?? 0.1;
  const random = mulberry32(opts.seed ?? 16);
  const vocab = vocabulary(items);
  const out: T[] = items.slice(0, size);
  const perturb = (text: string, copy: number): string =>
    text.replace(WORD, (word) => {
      const r = random();
      if (r < rate) return vocab[Math.floor(random() * vocab.length)];
      if (r < rate * 1.25) return `${word}${copy}`;
      return word;
    });
  for (let copy = 1; out.length < size; copy++) {
    for (const item of items) {
      if (out.length >= size) break;
      out.push({ ...item, id: `${item.id}~${copy}`, title: perturb(item.title, copy), body: perturb(item.body, copy) });
    }
  }
  return out;
}

/**
 * The 2-word form of each query, as issue 16 measured short queries: the first two words of
 * the query that are at least 4 letters long (shorter ones are mostly stopwords), or the whole
 * query if it has fewer.
 */
export function twoWordQueries(queries: readonly string[]): string[] {
  return queries.map((q) => {
    const words = q.split(/\s+/).filter((w) => w.length >= 4);
    return (words.length >= 2 ? words.slice(0, 2) : q.split(/\s+/).slice(0, 2)).join(' ');
  });
}
