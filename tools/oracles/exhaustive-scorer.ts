/**
 * The reference scorer that the service's pruned search (`CompactIndex.cursorJob` and
 * `maxScoreTopK`) is checked against: every posting of every query term visited and summed, by
 * the plainest route. It reads the index through `CompactIndex.postingsView()` only, the
 * postings as stored, so it shares none of the pruned path's assembly of them (base runs merged
 * over fields, cached parts and their values, block bounds, cursors). The per-posting BM25
 * expression is written here once, and its scores are those of MiniSearch's own search
 * (test/tools/oracles/exhaustive-scorer.test.ts); the pruned path's copies of it are held to it
 * bit for bit by the property tests. Never used by the service.
 */
import type { WeightedTerm } from '../../service/search/index/cursor';
import type { Bm25Params } from '../../service/search/index/postings-index';
import type { PostingsView } from '../../service/search/index/postings-view';

/** The documents some terms matched, unsorted; parallel arrays. */
export interface TermScores {
  /** External ids. */
  readonly ids: string[];
  /** Summed BM25 score of each id. */
  readonly scores: number[];
  /** Distinct query terms each id matched (the coordination factor). */
  readonly matched: number[];
}

// Scratch indexed by short document id, grown as needed; `acc` and `count` are all zero between
// calls, `termScore` is valid where `termStamp` holds the current term's stamp.
let acc = new Float64Array(0);
let termScore = new Float64Array(0);
let termStamp = new Int32Array(0);
let count = new Uint16Array(0);
let stamp = 0;

function ensureScratch(n: number): void {
  if (acc.length >= n) return;
  const size = Math.max(n, acc.length * 2, 1024);
  acc = new Float64Array(size);
  termScore = new Float64Array(size);
  termStamp = new Int32Array(size);
  count = new Uint16Array(size);
  stamp = 0;
}

function nextStamp(): number {
  if (++stamp === 0x7fffffff) {
    termStamp.fill(0);
    stamp = 1;
  }
  return stamp;
}

/** Per view and field: k·(1 − b + b·length/avg) by short id, for one index version and BM25's k and b. */
const norms = new WeakMap<PostingsView, Map<number, { key: string; norm: Float64Array }>>();

/** Field `f`'s length norms (see `norms`), computed at the first query of an index version. */
function lengthNorm(index: PostingsView, f: number, bm25: Bm25Params): Float64Array {
  const avg = index.averageLength(f);
  const key = `${index.version()}:${avg}:${bm25.k}:${bm25.b}`;
  let byField = norms.get(index);
  if (!byField) norms.set(index, (byField = new Map()));
  const cached = byField.get(f);
  if (cached?.key === key) return cached.norm;
  const { k, b } = bm25;
  const norm = new Float64Array(index.idLimit());
  for (let d = 0; d < norm.length; d++) norm[d] = k * (1 - b + (b * index.fieldLength(d, f)) / avg);
  byField.set(f, { key, norm });
  return norm;
}

/**
 * Every document holding at least one of `terms` (exactly, no prefix or fuzzy matching) with
 * Σ over terms and fields of weight × field boost × BM25, summed as MiniSearch sums (per term:
 * fields in order; then terms in order). Fields absent from `boost` or boosted 0 are not
 * searched; terms of weight ≤ 0 are skipped.
 */
export function scoreTerms(
  index: PostingsView,
  terms: readonly WeightedTerm[],
  boost: Readonly<Record<string, number>>,
  bm25: Bm25Params,
): TermScores {
  ensureScratch(index.idLimit());
  const fields = index.searched(boost);
  const touched: number[] = [];
  const termDocs: number[] = [];
  const seenTerms = new Set<string>();
  const { k, d } = bm25;
  const k1 = k + 1;
  for (const [term, weight] of terms) {
    if (!(weight > 0)) continue;
    const t = index.termId(term);
    if (t === undefined || fields.every((f) => index.df(f, t) === 0)) continue;
    const distinct = !seenTerms.has(term);
    seenTerms.add(term);
    const now = nextStamp();
    termDocs.length = 0;
    for (const f of fields) {
      if (index.df(f, t) === 0) continue;
      const idf = index.idf(f, t);
      const norm = lengthNorm(index, f, bm25);
      const factor = weight * boost[index.fields[f]];
      index.eachPosting(f, t, (doc, tf) => {
        const s = factor * (idf * (d + (tf * k1) / (tf + norm[doc])));
        if (termStamp[doc] !== now) {
          termStamp[doc] = now;
          termScore[doc] = s;
          termDocs.push(doc);
        } else {
          termScore[doc] += s;
        }
      });
    }
    for (const doc of termDocs) {
      if (count[doc] === 0) touched.push(doc);
      if (distinct) count[doc] += 1;
      acc[doc] += termScore[doc];
    }
  }
  const ids: string[] = new Array(touched.length);
  const scores: number[] = new Array(touched.length);
  const matched: number[] = new Array(touched.length);
  for (let i = 0; i < touched.length; i++) {
    const doc = touched[i];
    ids[i] = index.externalId(doc);
    scores[i] = acc[doc];
    matched[i] = count[doc];
    acc[doc] = 0;
    count[doc] = 0;
  }
  return { ids, scores, matched };
}
