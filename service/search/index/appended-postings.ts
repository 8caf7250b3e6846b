import { grow } from './growable';

// A chunk is [next chunk + 1 (0 = last), capacity, count, doc, tf, doc, tf, …] in `pool`.
const HEADER = 3;
// Pairs in a term's first chunk; each next chunk holds twice as many, up to `MAX_CHUNK`.
const FIRST_CHUNK = 2;
const MAX_CHUNK = 1024;

/**
 * The appended segment's postings of one field: per term id, (document, tf) pairs in the order
 * they were added, held in one growing `Int32Array` (chunks of a term linked, each twice the
 * last) instead of a JS array per term in a map: a few typed arrays for the garbage collector
 * to look at, not one object per term.
 */
export class AppendedPostings {
  private pool = new Int32Array(1024);
  private used = 0;
  // Per term id: its first and last chunk's offset + 1 (0 = no postings).
  private first = new Int32Array(0);
  private last = new Int32Array(0);

  /** Appends `(doc, tf)` to term `t`'s postings. */
  add(t: number, doc: number, tf: number): void {
    if (t >= this.first.length) {
      this.first = grow(this.first, t + 1);
      this.last = grow(this.last, t + 1);
    }
    let c = this.last[t] - 1;
    if (c < 0 || this.pool[c + 2] === this.pool[c + 1]) {
      const cap = c < 0 ? FIRST_CHUNK : Math.min(MAX_CHUNK, this.pool[c + 1] * 2);
      const at = this.used;
      this.used += HEADER + 2 * cap;
      this.pool = grow(this.pool, this.used);
      this.pool[at + 1] = cap;
      if (c < 0) this.first[t] = at + 1;
      else this.pool[c] = at + 1;
      this.last[t] = at + 1;
      c = at;
    }
    const n = this.pool[c + 2]++;
    this.pool[c + HEADER + 2 * n] = doc;
    this.pool[c + HEADER + 2 * n + 1] = tf;
  }

  /** Calls `fn` for every posting of term `t`, in the order they were added. */
  forEach(t: number, fn: (doc: number, tf: number) => void): void {
    const { pool } = this;
    for (let c = t < this.first.length ? this.first[t] - 1 : -1; c >= 0; c = pool[c] - 1) {
      const end = c + HEADER + 2 * pool[c + 2];
      for (let i = c + HEADER; i < end; i += 2) fn(pool[i], pool[i + 1]);
    }
  }

  /** Adds `delta` to every posting's document (renumbering after a merge). */
  shiftDocs(delta: number): void {
    const { pool } = this;
    for (let c = 0; c < this.used; c += HEADER + 2 * pool[c + 1]) {
      const end = c + HEADER + 2 * pool[c + 2];
      for (let i = c + HEADER; i < end; i += 2) pool[i] += delta;
    }
  }
}
