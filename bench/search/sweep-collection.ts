/**
 * The collection the ranking sweep (`ranking-sweep.ts`) scores: a corpus analysed as the service
 * analyses it, with positions, an exhaustive scorer over it for each model, expansion and
 * proximity configuration, and the configurations' types.
 */
import { plainText } from '../../service/content/plain-text';
import type { RankedDoc } from '../../service/eval/relevance-measures';
import { Analyzer } from '../../service/search/analysis/analyzer';
import { rm3Weights } from '../../service/search/query/expansion';
import { naiveWindows } from '../../tools/oracles/exhaustive-proximity';
import type { Vaswani } from '../../tools/corpus/vaswani';

/** RRF's constant (Cormack, Clarke & Büttcher 2009). */
const RRF_K = 60;

/** A term-scoring model and its parameters. */
export interface Model {
  readonly kind: 'bm25' | 'dph' | 'dlh13' | 'pl2' | 'inexpc2' | 'lmdir';
  readonly k1: number;
  readonly b: number;
  /** BM25+'s δ (Lv & Zhai 2011): a floor under every matching term's normalised tf. */
  readonly delta: number;
  /** DFR normalisation 2's c; the LM's μ. */
  readonly c: number;
  /** Weight of the title field's score (BM25 only: the DFR and LM rows score the text field alone). */
  readonly titleBoost: number;
}

/** Query expansion from the first ranking's top documents. */
export interface Expansion {
  readonly kind: 'none' | 'rm3' | 'bo1' | 'kl';
  readonly docs: number;
  readonly terms: number;
  /** RM3: the original query's weight λ. Bo1, KL: the expansion terms' weight β. */
  readonly weight: number;
}

/** SDM-style proximity added to the final ranking's top `depth`; `scale` 1 = the standard 0.85/0.1/0.05. */
export interface Proximity {
  readonly scale: number;
  readonly window: number;
  readonly depth: number;
}

export interface Config {
  readonly model: Model;
  readonly expansion: Expansion;
  readonly proximity?: Proximity;
  /** Reciprocal-rank fusion (Cormack et al. 2009, k 60) of these configurations' rankings instead of `model` and `expansion`. */
  readonly fuse?: readonly Config[];
}

interface Field {
  readonly postings: Map<string, { docs: number[]; tfs: number[] }>;
  readonly lengths: number[];
  readonly avg: number;
}

const log2 = (x: number) => Math.log(x) / Math.LN2;

/** Vaswani analysed as the service analyses it, with positions, and an exhaustive scorer over it. */
export class Collection {
  readonly ids: string[];
  private readonly docOf: Map<string, number>;
  private readonly title: Field;
  private readonly text: Field;
  private readonly tfs: Array<Map<string, number>>;
  private readonly positions: Array<Map<string, number[]>>;
  private readonly cf = new Map<string, number>();
  private readonly tokens: number;
  private readonly pairDf = new Map<string, { o: number; u: number }>();
  // First rankings (top 1,000) by model and query: the expansion grids share them.
  private readonly first = new Map<string, RankedDoc[]>();
  private readonly acc: Float64Array;
  private readonly seen: Uint8Array;
  readonly queries: Array<{ qid: string; terms: string[] }>;

  constructor(readonly v: Vaswani) {
    const a = new Analyzer();
    this.ids = v.items.map((i) => i.id);
    this.docOf = new Map(this.ids.map((id, d) => [id, d]));
    const titles = v.items.map((i) => a.analyze(i.title));
    // The body as the service indexes it: its plain text (markup dropped; Vaswani has none).
    const texts = v.items.map((i) => [...a.analyze(i.title), ...a.analyze(plainText(i.body))]);
    this.title = field(titles);
    this.text = field(texts);
    this.tfs = texts.map((terms) => {
      const m = new Map<string, number>();
      for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
      return m;
    });
    this.positions = texts.map((terms) => {
      const m = new Map<string, number[]>();
      terms.forEach((t, i) => (m.get(t) ?? m.set(t, []).get(t)!).push(i));
      return m;
    });
    for (const [t, p] of this.text.postings)
      this.cf.set(
        t,
        p.tfs.reduce((x, y) => x + y, 0),
      );
    this.tokens = texts.reduce((n, t) => n + t.length, 0);
    this.acc = new Float64Array(this.ids.length);
    this.seen = new Uint8Array(this.ids.length);
    this.queries = v.queries.map((q) => ({ qid: q.qid, terms: a.analyze(q.text) }));
  }

  private termScore(m: Model, f: Field, isText: boolean, tf: number, len: number, df: number, term: string): number {
    const N = this.ids.length;
    if (m.kind === 'bm25') {
      // The service's (MiniSearch's) BM25 to the last bit.
      const idf = Math.log(1 + (N - df + 0.5) / (df + 0.5));
      return idf * (m.delta + (tf * (m.k1 + 1)) / (tf + m.k1 * (1 - m.b + (m.b * len) / f.avg)));
    }
    if (!isText) return 0;
    const F = this.cf.get(term)!;
    const avg = f.avg;
    switch (m.kind) {
      case 'dph': {
        const p = tf / len;
        return (
          (((1 - p) * (1 - p)) / (tf + 1)) *
          (tf * log2(((tf * avg) / len) * (N / F)) + 0.5 * log2(2 * Math.PI * tf * (1 - p)))
        );
      }
      case 'dlh13': {
        const p = tf / len;
        return (1 / (tf + 0.5)) * (tf * log2(((tf * avg) / len) * (N / F)) + 0.5 * log2(2 * Math.PI * tf * (1 - p)));
      }
      case 'pl2': {
        const tfn = tf * log2(1 + (m.c * avg) / len);
        const lambda = F / N;
        return Math.max(
          0,
          (1 / (tfn + 1)) * (tfn * log2(tfn / lambda) + (lambda - tfn) * log2(Math.E) + 0.5 * log2(2 * Math.PI * tfn)),
        );
      }
      case 'inexpc2': {
        const tfn = tf * Math.log(1 + (m.c * avg) / len);
        const ne = N * (1 - Math.exp(-F / N));
        return ((F + 1) / (df * (tfn + 1))) * (tfn * log2((N + 1) / (ne + 0.5)));
      }
      case 'lmdir':
        // Dirichlet smoothing, the document-length part added per document in `score`.
        return Math.log(1 + tf / ((m.c * F) / this.tokens));
    }
  }

  /** Every document holding a term, with Σ weight × field boost × term score. */
  score(m: Model, terms: Iterable<readonly [string, number]>): RankedDoc[] {
    const { acc, seen } = this;
    const touched: number[] = [];
    let qlen = 0;
    for (const [term, w] of terms) {
      if (!(w > 0)) continue;
      qlen += w;
      for (const [f, boost, isText] of [
        [this.title, m.titleBoost, false],
        [this.text, 1, true],
      ] as const) {
        const p = boost ? f.postings.get(term) : undefined;
        if (!p) continue;
        for (let i = 0; i < p.docs.length; i++) {
          const d = p.docs[i];
          if (!seen[d]) {
            seen[d] = 1;
            touched.push(d);
          }
          acc[d] += w * boost * this.termScore(m, f, isText, p.tfs[i], f.lengths[d], p.docs.length, term);
        }
      }
    }
    const out = touched.map((d) => {
      const lm = m.kind === 'lmdir' ? qlen * Math.log(m.c / (this.text.lengths[d] + m.c)) : 0;
      const hit = { id: this.ids[d], score: acc[d] + lm };
      acc[d] = 0;
      seen[d] = 0;
      return hit;
    });
    return out.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1));
  }

  /** The query's weighted terms after expansion from `first`. */
  expand(x: Expansion, terms: readonly string[], first: readonly RankedDoc[]): Array<[string, number]> {
    const q = counts(terms);
    if (x.kind === 'none' || !first.length) return q;
    const top = first.slice(0, x.docs).map((h) => ({ score: h.score, d: this.docOf.get(h.id)! }));
    if (x.kind === 'rm3') {
      const feedback = top.map(({ score, d }) => ({
        score,
        vector: { tf: this.tfs[d], length: this.text.lengths[d] },
      }));
      return [...rm3Weights(terms, feedback, { fbTerms: x.terms, originalWeight: x.weight })];
    }
    // Terrier's Bo1 / KL: the top documents as one bag; query terms weighted qtf / max qtf, plus β × w / max w.
    const bag = new Map<string, number>();
    let bagLength = 0;
    for (const { d } of top) {
      bagLength += this.text.lengths[d];
      for (const [t, tf] of this.tfs[d]) bag.set(t, (bag.get(t) ?? 0) + tf);
    }
    const N = this.ids.length;
    const w: Array<[string, number]> = [...bag].map(([t, tfx]) => {
      if (x.kind === 'bo1') {
        const pn = this.cf.get(t)! / N;
        return [t, tfx * log2((1 + pn) / pn) + log2(1 + pn)];
      }
      const px = tfx / bagLength;
      const pc = this.cf.get(t)! / this.tokens;
      return [t, px < pc ? 0 : px * log2(px / pc)];
    });
    const best = w.sort((p, r) => r[1] - p[1] || (p[0] < r[0] ? -1 : 1)).slice(0, x.terms);
    const maxQ = Math.max(...q.map(([, c]) => c));
    const out = new Map(q.map(([t, c]) => [t, c / maxQ]));
    const maxW = best[0]?.[1] || 1;
    for (const [t, s] of best) out.set(t, (out.get(t) ?? 0) + (x.weight * s) / maxW);
    return [...out];
  }

  /** `#1` (b right after a) and `#uwN` (a and b within a span of N, each b used once) counts of a document. */
  private windows(d: number, a: string, b: string, n: number): { o: number; u: number } {
    const pa = this.positions[d].get(a);
    const pb = this.positions[d].get(b);
    if (!pa || !pb) return { o: 0, u: 0 };
    // The plain rule, shared with the exhaustive oracle of the service's proximity stage.
    return naiveWindows(pa, pb, n);
  }

  /** Documents with a pair's ordered and unordered windows (the pair's document frequencies). */
  private windowDf(a: string, b: string, n: number): { o: number; u: number } {
    const key = `${a} ${b} ${n}`;
    let df = this.pairDf.get(key);
    if (df) return df;
    df = { o: 0, u: 0 };
    const pa = this.text.postings.get(a);
    const pb = new Set(this.text.postings.get(b)?.docs ?? []);
    for (const d of pa?.docs ?? []) {
      if (!pb.has(d)) continue;
      const w = this.windows(d, a, b, n);
      if (w.o) df.o++;
      if (w.u) df.u++;
    }
    this.pairDf.set(key, df);
    return df;
  }

  /** SDM-style proximity over the top `depth` (BM25 values of the window counts, one original term's weight `unit`). */
  proximity(p: Proximity, terms: readonly string[], hits: RankedDoc[], unit: number): RankedDoc[] {
    const pairs: Array<[string, string]> = [];
    for (let i = 0; i + 1 < terms.length; i++)
      if (terms[i] !== terms[i + 1] && !pairs.some(([x, y]) => x === terms[i] && y === terms[i + 1]))
        pairs.push([terms[i], terms[i + 1]]);
    if (!pairs.length) return hits;
    const N = this.ids.length;
    const bm25 = (tf: number, len: number, df: number) =>
      tf && df
        ? Math.log(1 + (N - df + 0.5) / (df + 0.5)) * ((tf * 1.9) / (tf + 0.9 * (0.6 + (0.4 * len) / this.text.avg)))
        : 0;
    const top = hits.slice(0, p.depth).map((h) => {
      const d = this.docOf.get(h.id)!;
      let s = 0;
      for (const [a, b] of pairs) {
        const w = this.windows(d, a, b, p.window);
        if (!w.o && !w.u) continue;
        const df = this.windowDf(a, b, p.window);
        s +=
          (0.1 / 0.85) * bm25(w.o, this.text.lengths[d], df.o) + (0.05 / 0.85) * bm25(w.u, this.text.lengths[d], df.u);
      }
      return { id: h.id, score: h.score + p.scale * unit * s };
    });
    return [...top.sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1)), ...hits.slice(p.depth)];
  }

  /** Rankings (top 1,000) of every query under `c`. */
  run(c: Config): Map<string, RankedDoc[]> {
    if (c.fuse) return this.fused(c.fuse);
    const out = new Map<string, RankedDoc[]>();
    for (const q of this.queries) {
      const key = `${JSON.stringify(c.model)} ${q.qid}`;
      let r = this.first.get(key) ?? this.score(c.model, counts(q.terms)).slice(0, 1000);
      this.first.set(key, r);
      if (c.expansion.kind !== 'none' && r.length) r = this.score(c.model, this.expand(c.expansion, q.terms, r));
      r = r.slice(0, 1000);
      if (c.proximity)
        r = this.proximity(
          c.proximity,
          q.terms,
          r,
          (c.expansion.kind === 'rm3' ? c.expansion.weight : 1) / q.terms.length,
        );
      out.set(q.qid, r);
    }
    return out;
  }

  /** Σ 1 / (60 + rank) over the members' top 1,000, per query. */
  private fused(members: readonly Config[]): Map<string, RankedDoc[]> {
    const runs = members.map((m) => this.run(m));
    const out = new Map<string, RankedDoc[]>();
    for (const q of this.queries) {
      const sum = new Map<string, number>();
      for (const run of runs)
        (run.get(q.qid) ?? []).forEach((h, i) => sum.set(h.id, (sum.get(h.id) ?? 0) + 1 / (RRF_K + i + 1)));
      out.set(
        q.qid,
        [...sum]
          .map(([id, score]) => ({ id, score }))
          .sort((x, y) => y.score - x.score || (x.id < y.id ? -1 : 1))
          .slice(0, 1000),
      );
    }
    return out;
  }
}

function field(docs: readonly string[][]): Field {
  const postings = new Map<string, { docs: number[]; tfs: number[] }>();
  docs.forEach((terms, d) => {
    for (const [t, tf] of counts(terms)) {
      const p = postings.get(t) ?? postings.set(t, { docs: [], tfs: [] }).get(t)!;
      p.docs.push(d);
      p.tfs.push(tf);
    }
  });
  return { postings, lengths: docs.map((t) => t.length), avg: docs.reduce((n, t) => n + t.length, 0) / docs.length };
}

function counts(terms: readonly string[]): Array<[string, number]> {
  const m = new Map<string, number>();
  for (const t of terms) m.set(t, (m.get(t) ?? 0) + 1);
  return [...m];
}
