/**
 * Levenshtein distance (insertions, deletions and substitutions of UTF-16 code units, each 1: the
 * distance of MiniSearch's `fuzzyGet`) from one query term to many index terms, up to `max`.
 * Terms of up to 32 units use Myers' bit-parallel algorithm (Hyyrö's form for whole strings):
 * one step of a few word operations per unit of the index term. Longer ones use the band of
 * width `2·max + 1` of the dynamic programme. Either way a term costs time linear in its length.
 */
export class BoundedDistance {
  private static last: BoundedDistance | undefined;
  private query = '';
  private m = 0;
  max = 0;
  /** Per ASCII unit, the bits of the query's positions holding it. */
  private readonly ascii = new Uint32Array(128);
  /** The same for the other units of the query. */
  private readonly other = new Map<number, number>();
  // Band rows of the long-query case.
  private prev: Int32Array = new Int32Array(0);
  private cur: Int32Array = new Int32Array(0);

  constructor(query: string, max: number) {
    this.reset(query, max);
  }

  /** The one instance kept for look-ups (set to `query` and `max`): no tables made per query term. */
  static shared(query: string, max: number): BoundedDistance {
    const last = BoundedDistance.last;
    if (!last) return (BoundedDistance.last = new BoundedDistance(query, max));
    if (last.query !== query || last.max !== max) last.reset(query, max);
    return last;
  }

  private reset(query: string, max: number): void {
    for (let i = 0; i < this.m && i < 32; i++) {
      const c = this.query.charCodeAt(i);
      if (c < 128) this.ascii[c] = 0;
    }
    this.other.clear();
    this.query = query;
    this.max = max;
    const m = (this.m = query.length);
    if (m <= 32) {
      for (let i = 0; i < m; i++) {
        const c = query.charCodeAt(i);
        if (c < 128) this.ascii[c] |= 1 << i;
        else this.other.set(c, (this.other.get(c) ?? 0) | (1 << i));
      }
    } else if (this.prev.length < m + 1) {
      this.prev = new Int32Array(m + 1);
      this.cur = new Int32Array(m + 1);
    }
  }

  /** The distance from the query to `text` if it is at most `max`, else `max + 1`. */
  distance(text: string): number {
    const { m, max } = this;
    const n = text.length;
    if (n - m > max || m - n > max) return max + 1;
    if (m === 0) return n;
    return m <= 32 ? this.myers(text) : this.banded(text);
  }

  private myers(text: string): number {
    const { m, max, ascii, other } = this;
    const high = 1 << (m - 1);
    let pv = -1;
    let mv = 0;
    let score = m;
    for (let j = 0; j < text.length; j++) {
      const c = text.charCodeAt(j);
      const eq = c < 128 ? ascii[c] : (other.get(c) ?? 0);
      const xv = eq | mv;
      const xh = ((((eq & pv) + pv) | 0) ^ pv) | eq;
      let ph = mv | ~(xh | pv);
      let mh = pv & xh;
      if (ph & high) score++;
      else if (mh & high) score--;
      // The top row of the whole-string distance rises by one per unit: a 1 shifted in.
      ph = (ph << 1) | 1;
      mh <<= 1;
      pv = mh | ~(xv | ph);
      mv = ph & xv;
    }
    return score <= max ? score : max + 1;
  }

  /** The dynamic programme on the cells within `max` of the diagonal, values capped at `max + 1`. */
  private banded(text: string): number {
    const { m, max, query } = this;
    const cap = max + 1;
    const n = text.length;
    let prev = this.prev;
    let cur = this.cur;
    for (let j = 0; j <= m; j++) prev[j] = j <= max ? j : cap;
    for (let i = 1; i <= n; i++) {
      const lo = Math.max(1, i - max);
      const hi = Math.min(m, i + max);
      cur[lo - 1] = lo === 1 && i <= max ? i : cap;
      const c = text.charCodeAt(i - 1);
      let best = cur[lo - 1];
      for (let j = lo; j <= hi; j++) {
        const sub = prev[j - 1] + (query.charCodeAt(j - 1) === c ? 0 : 1);
        const del = (j <= i - 1 + max ? prev[j] : cap) + 1;
        const ins = cur[j - 1] + 1;
        const v = Math.min(sub, del, ins, cap);
        cur[j] = v;
        if (v < best) best = v;
      }
      if (hi < m) cur[hi + 1] = cap;
      if (best > max) return cap;
      const t = prev;
      prev = cur;
      cur = t;
    }
    return prev[m] <= max ? prev[m] : cap;
  }
}
