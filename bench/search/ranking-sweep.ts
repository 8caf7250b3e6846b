/**
 * Issue 28's ranking floor, measured: weight-free alternatives to the service's BM25 + RM3 on
 * Vaswani, each scored exhaustively over the service's own analysis (`Analyzer`) and fields
 * (title, and text = title + body), with nDCG@10, MAP@100, recall@100 and the nDCG@10 of
 * choosing each family's parameters by cross-validation (`cross-validate.ts`). The service
 * default is computed both here and by the service's index in process, and the run stops unless
 * the two agree, so every other row is on the same footing as the HTTP harness's figure.
 *
 *   npx ts-node -T bench/search/ranking-sweep.ts [family regex] [--debian]   (minutes; prints a Markdown table)
 *
 * `--debian` runs the families on the second collection instead, the known-item collection of
 * Debian's package descriptions (`tools/corpus/debian-descriptions.ts`; one relevant document a
 * query, so MAP@100 there is MRR@100). `SWEEP_DIFF=1` prints the queries where the sweep's
 * service default and the service's index disagree, when they do.
 *
 * Models (Amati & van Rijsbergen's DFR as in Terrier, `c` its normalisation-2 parameter; Zhai &
 * Lafferty's Dirichlet LM), expansions (RM3 as the service has it; Terrier's Bo1 and KL over the
 * top documents as one bag) and proximity (the sequential dependence model's adjacent query
 * pairs, ordered `#1` and unordered `#uw8` windows weighted 0.1 and 0.05 against the terms' 0.85,
 * each window count turned into a BM25 value with the pair's own document frequency, added to
 * the final ranking's top 100) are written here, not in the service: none won by enough to
 * ship. BM25+'s δ, an option the service's scorer already had, is a setting (`SEARCH_BM25_DELTA`);
 * with k1 0.6, b 0.6 and RM3 5 documents / 40 terms (candidate C2, tuned here) it is the service's
 * default since issue 28's fifth slice, which checked it on the second collection.
 */
import type { Item } from '../../service/content/item';
import { plainText } from '../../service/content/plain-text';
import { evaluateQuery, type RankedDoc } from '../../service/eval/relevance-measures';
import { Analyzer } from '../../service/search/analysis/analyzer';
import { rm3Weights } from '../../service/search/query/expansion';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { DEFAULT_RANKING } from '../../service/search/ranking';
import { repeatedCrossValidation, type ConfigScores } from './cross-validate';
import { loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { naiveWindows } from '../../tools/oracles/exhaustive-proximity';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

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

/** RRF's constant (Cormack, Clarke & Büttcher 2009). */
const RRF_K = 60;

/** The service's ranking before issue 28: BM25 k1 0.9, b 0.4, title ×0.2, RM3 10 documents, 20 terms, λ 0.5. The families vary it. */
export const BEFORE: Config = {
  model: { kind: 'bm25', k1: 0.9, b: 0.4, delta: 0, c: 1, titleBoost: 0.2 },
  expansion: { kind: 'rm3', docs: 10, terms: 20, weight: 0.5 },
};

/** The service's defaults, read from `DEFAULT_RANKING` (candidate C2 since issue 28's fifth slice). */
export const SERVICE: Config = {
  model: {
    kind: 'bm25',
    k1: DEFAULT_RANKING.bm25.k1,
    b: DEFAULT_RANKING.bm25.b,
    delta: DEFAULT_RANKING.bm25.delta,
    c: 1,
    titleBoost: DEFAULT_RANKING.boost.title,
  },
  expansion: {
    kind: 'rm3',
    docs: DEFAULT_RANKING.expansion.fbDocs,
    terms: DEFAULT_RANKING.expansion.fbTerms,
    weight: DEFAULT_RANKING.expansion.originalWeight,
  },
};

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

/** Per-query nDCG@10, MAP@100 and recall@100 of rankings. */
export function perQuery(
  v: Vaswani,
  runs: ReadonlyMap<string, readonly RankedDoc[]>,
): { ndcg10: number[]; map100: number[]; recall100: number[] } {
  const out = { ndcg10: [] as number[], map100: [] as number[], recall100: [] as number[] };
  for (const q of v.queries) {
    const run = runs.get(q.qid) ?? [];
    const judged = v.qrels.get(q.qid) ?? new Map<string, number>();
    out.ndcg10.push(evaluateQuery(run, judged, 10).ndcg);
    const at100 = evaluateQuery(run, judged, 100);
    out.map100.push(at100.map);
    out.recall100.push(at100.recall);
  }
  return out;
}

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f4 = (x: number) => x.toFixed(4);

/** A family of configurations: one row of the report, its parameters chosen by cross-validation. */
interface Family {
  readonly name: string;
  readonly configs: ReadonlyArray<readonly [string, Config]>;
}

function grid<T>(...axes: T[][]): T[][] {
  return axes.reduce<T[][]>((acc, axis) => acc.flatMap((xs) => axis.map((x) => [...xs, x])), [[]]);
}

const rm3Grid = (): Expansion[] =>
  grid<number>([5, 10, 20], [10, 20, 40], [0.5, 0.7]).map(([docs, terms, weight]) => ({
    kind: 'rm3',
    docs,
    terms,
    weight,
  }));
const label = (c: Config): string =>
  c.fuse
    ? `RRF(${c.fuse.map(label).join(' | ')})`
    : `${c.model.kind}${c.model.kind === 'bm25' ? ` k1 ${c.model.k1} b ${c.model.b}${c.model.delta ? ` δ ${c.model.delta}` : ''} title ×${c.model.titleBoost}` : c.model.kind === 'dph' || c.model.kind === 'dlh13' ? '' : ` c ${c.model.c}`}` +
      ` + ${c.expansion.kind}${c.expansion.kind === 'none' ? '' : ` ${c.expansion.docs}/${c.expansion.terms}/${c.expansion.weight}`}` +
      (c.proximity ? ` + SDM ×${c.proximity.scale} #uw${c.proximity.window}` : '');

/** The families of the report. */
export function families(): Family[] {
  const S = BEFORE;
  const dfr = (kind: Model['kind'], c = 1): Model => ({ ...S.model, kind, c, titleBoost: 0 });
  const one = (name: string, c: Config): Family => ({ name, configs: [[label(c), c]] });
  const many = (name: string, cs: Config[]): Family => ({ name, configs: cs.map((c) => [label(c), c] as const) });
  const noX: Expansion = { kind: 'none', docs: 0, terms: 0, weight: 0 };
  const bo1: Expansion = { kind: 'bo1', docs: 3, terms: 10, weight: 1 };
  return [
    one('Before issue 28 (BM25 k1 0.9 b 0.4, title ×0.2, RM3 10/20/0.5)', S),
    one('Before issue 28, without expansion', { ...S, expansion: noX }),
    many(
      'BM25: k1 {0.6, 0.9, 1.2} × b {0.4, 0.6} × title {×0.1, ×0.2}, RM3 as before',
      grid<number>([0.6, 0.9, 1.2], [0.4, 0.6], [0.1, 0.2]).map(([k1, b, t]) => ({
        ...S,
        model: { ...S.model, k1, b, titleBoost: t },
      })),
    ),
    many(
      'RM3: documents {5, 10, 20} × terms {10, 20, 40} × λ {0.5, 0.7}, BM25 as before',
      rm3Grid().map((expansion) => ({ ...S, expansion })),
    ),
    many(
      'BM25 grid × RM3 grid (216 configurations)',
      grid<number>([0.6, 0.9, 1.2], [0.4, 0.6], [0.1, 0.2]).flatMap(([k1, b, t]) =>
        rm3Grid().map((expansion) => ({ model: { ...S.model, k1, b, titleBoost: t }, expansion })),
      ),
    ),
    one('DPH (parameter-free) + RM3', { ...S, model: dfr('dph') }),
    one('DPH + Bo1 (3 documents, 10 terms; Terrier’s defaults)', { model: dfr('dph'), expansion: bo1 }),
    one('DLH13 (parameter-free) + RM3', { ...S, model: dfr('dlh13') }),
    many(
      'PL2 c {1, 4, 10} + RM3',
      [1, 4, 10].map((c) => ({ ...S, model: dfr('pl2', c) })),
    ),
    many(
      'In_expC2 c {1, 2, 3, 4, 6, 10} + RM3',
      [1, 2, 3, 4, 6, 10].map((c) => ({ ...S, model: dfr('inexpc2', c) })),
    ),
    many(
      'In_expC2 c {3, 4, 6} × RM3 grid (54)',
      [3, 4, 6].flatMap((c) => rm3Grid().map((expansion) => ({ model: dfr('inexpc2', c), expansion }))),
    ),
    many(
      'LM Dirichlet μ {300, 1000, 2000} + RM3',
      [300, 1000, 2000].map((c) => ({ ...S, model: dfr('lmdir', c) })),
    ),
    many(
      'BM25 + Bo1 / KL (3 documents, 10 terms, β 1) instead of RM3',
      (['bo1', 'kl'] as const).map((kind) => ({ ...S, expansion: { ...bo1, kind } })),
    ),
    many(
      'BM25+ δ {0.25, 0.5, 1}, RM3 as before',
      [0.25, 0.5, 1].map((delta) => ({ ...S, model: { ...S.model, delta } })),
    ),
    one('BM25+ δ 1 (Lv & Zhai’s value; SEARCH_BM25_DELTA=1), RM3 as before', { ...S, model: { ...S.model, delta: 1 } }),
    one('BM25+ δ 1 without expansion', { model: { ...S.model, delta: 1 }, expansion: noX }),
    many(
      'BM25+ δ 1 × BM25 grid × RM3 grid (216)',
      grid<number>([0.6, 0.9, 1.2], [0.4, 0.6], [0.1, 0.2]).flatMap(([k1, b, t]) =>
        rm3Grid().map((expansion) => ({ model: { ...S.model, k1, b, delta: 1, titleBoost: t }, expansion })),
      ),
    ),
    one('BM25+ δ 1 + SDM proximity (standard weights, #uw8)', {
      ...S,
      model: { ...S.model, delta: 1 },
      proximity: { scale: 1, window: 8, depth: 100 },
    }),
    one('SDM proximity, standard weights (0.85 / 0.1 / 0.05, #1 and #uw8), on the service default’s top 100', {
      ...S,
      proximity: { scale: 1, window: 8, depth: 100 },
    }),
    ...candidates().map(([name, c]) => one(name, c)),
    ...proximityGrid().map(([name, c]) => one(name, c)),
    ...grid<number>([5, 10], [20, 40]).map(([docs, terms]): Family =>
      one(`R BM25+ δ 1, k1 0.6 b 0.6, RM3 ${docs}/${terms}/0.5`, {
        model: { ...S.model, k1: 0.6, b: 0.6, delta: 1 },
        expansion: { kind: 'rm3', docs, terms, weight: 0.5 },
      }),
    ),
    many(
      'C2 + SDM × {0.5, 1, 2, 4}, window {4, 8, 12} (24)',
      proximityGrid()
        .filter(([n]) => n.startsWith('P C2'))
        .map(([, c]) => c),
    ),
    many(
      'C3 + SDM × {0.5, 1, 2, 4}, window {4, 8, 12} (24)',
      proximityGrid()
        .filter(([n]) => n.startsWith('P C3'))
        .map(([, c]) => c),
    ),
    many(
      'RRF of C2 + SDM × {0.5, 1, 2, 4}, window {4, 8, 12} and C3',
      proximityGrid()
        .filter(([n]) => n.startsWith('P RRF'))
        .map(([, c]) => c),
    ),
    many(
      'SDM proximity × {0.5, 1, 2, 4}, window {4, 8, 12}',
      grid<number>([0.5, 1, 2, 4], [4, 8, 12]).map(([scale, window]) => ({
        ...S,
        proximity: { scale, window, depth: 100 },
      })),
    ),
  ];
}

/**
 * Issue 28's fifth slice: the configurations that come nearest 0.475 on Vaswani (chosen there,
 * tuned or published), one row each so the second collection can score every one.
 */
export function candidates(): Array<[string, Config]> {
  const S = BEFORE;
  const plus = (k1: number, b: number, docs: number, terms: number): Config => ({
    model: { ...S.model, k1, b, delta: 1 },
    expansion: { kind: 'rm3', docs, terms, weight: 0.5 },
  });
  const inexp: Config = {
    model: { ...S.model, kind: 'inexpc2', c: 4, titleBoost: 0 },
    expansion: { kind: 'rm3', docs: 5, terms: 20, weight: 0.5 },
  };
  const sdm: Proximity = { scale: 1, window: 8, depth: 100 };
  const deltaOne: Config = { ...S, model: { ...S.model, delta: 1 } };
  const plusTuned = plus(0.6, 0.6, 5, 40);
  return [
    ['C1 BM25+ δ 1, RM3 as before (SEARCH_BM25_DELTA=1)', deltaOne],
    ['C2 BM25+ δ 1, k1 0.6 b 0.6, RM3 5/40/0.5 (best of the 216 on Vaswani)', plusTuned],
    ['C3 In_expC2 c 4, RM3 5/20/0.5 (best of the 54 on Vaswani)', inexp],
    ['C4 C1 + SDM (standard weights, #uw8)', { ...deltaOne, proximity: sdm }],
    ['C5 C2 + SDM (standard weights, #uw8)', { ...plusTuned, proximity: sdm }],
    ['C6 C3 + SDM (standard weights, #uw8)', { ...inexp, proximity: sdm }],
    ['C7 RRF (k 60) of C1 and C3', { ...S, fuse: [deltaOne, inexp] }],
    ['C8 RRF (k 60) of C2 and C3', { ...S, fuse: [plusTuned, inexp] }],
    [
      'C9 RRF (k 60) of C5 and C6',
      {
        ...S,
        fuse: [
          { ...plusTuned, proximity: sdm },
          { ...inexp, proximity: sdm },
        ],
      },
    ],
  ];
}

/** SDM's scale × window on C2 and C3, and RRF of C2 + SDM with C3 (tuned on Vaswani). */
export function proximityGrid(): Array<[string, Config]> {
  const [, [, c2], [, c3]] = candidates();
  const out: Array<[string, Config]> = [];
  for (const [scale, window] of grid<number>([0.5, 1, 2, 4], [4, 8, 12])) {
    const proximity: Proximity = { scale, window, depth: 100 };
    out.push([`P C2 + SDM ×${scale} #uw${window}`, { ...c2, proximity }]);
    out.push([`P C3 + SDM ×${scale} #uw${window}`, { ...c3, proximity }]);
    out.push([`P RRF of C2 + SDM ×${scale} #uw${window} and C3`, { ...BEFORE, fuse: [{ ...c2, proximity }, c3] }]);
  }
  return out;
}

/** The service's own index in process at depth 100 (what the HTTP harness asks for) under its defaults. */
async function serviceRuns(v: Vaswani): Promise<Map<string, RankedDoc[]>> {
  const index = new EmbeddedIndex();
  const now = new Date(0).toISOString();
  await index.replaceAll(v.items.map((i): Item => ({ ...i, tags: [], created_at: now, updated_at: now })));
  const runs = new Map<string, RankedDoc[]>();
  for (const q of v.queries)
    runs.set(q.qid, [...(await index.search({ text: q.text, limit: 100, offset: 0, snippets: false })).hits]);
  return runs;
}

/** Runs every family (or those whose name `only` matches); returns the Markdown table. */
export async function sweep(
  v: Vaswani = loadVaswani(),
  progress: (line: string) => void = () => undefined,
  only?: RegExp,
): Promise<string> {
  const c = new Collection(v);
  const service = perQuery(v, await serviceRuns(v));
  const mine = perQuery(v, c.run(SERVICE));
  // The default is checked against the service's own index: every row is on the footing of the HTTP harness's figure.
  const same = (a: number[], b: number[]) => a.every((x, i) => Math.abs(x - b[i]) < 1e-12);
  if (process.env.SWEEP_DIFF)
    service.ndcg10.forEach(
      (x, i) =>
        Math.abs(x - mine.ndcg10[i]) > 1e-12 &&
        progress(`${v.queries[i].qid} ${v.queries[i].text}: service ${x} sweep ${mine.ndcg10[i]}`),
    );
  if (
    !same(service.ndcg10, mine.ndcg10) ||
    !same(service.map100, mine.map100) ||
    !same(service.recall100, mine.recall100)
  ) {
    throw new Error(
      `ranking sweep: the sweep's service default (${f4(mean(mine.ndcg10))}) differs from the service index's (${f4(mean(service.ndcg10))})`,
    );
  }
  const cache = new Map<string, ReturnType<typeof perQuery>>();
  const rows = [
    '| Family (configurations) | best configuration | nDCG@10 | MAP@100 | recall@100 | CV nDCG@10, 2-fold | CV nDCG@10, 5-fold |',
    '|---|---|---|---|---|---|---|',
  ];
  for (const fam of families().filter((f) => !only || only.test(f.name))) {
    const scored = fam.configs.map(([name, config]) => {
      const pq = cache.get(name) ?? perQuery(v, c.run(config));
      cache.set(name, pq);
      return { name, pq };
    });
    const best = scored.reduce((x, y) => (mean(y.pq.ndcg10) > mean(x.pq.ndcg10) ? y : x));
    const cs: ConfigScores[] = scored.map((s) => ({ name: s.name, scores: s.pq.ndcg10 }));
    const cv = (k: number) => {
      if (cs.length === 1) return '= nDCG@10';
      const r = repeatedCrossValidation(cs, k, 20);
      return `${f4(r.heldOut)} (${f4(r.min)}–${f4(r.max)})`;
    };
    const row = `| ${fam.name} (${fam.configs.length}) | ${best.name} | ${f4(mean(best.pq.ndcg10))} | ${f4(mean(best.pq.map100))} | ${f4(mean(best.pq.recall100))} | ${cv(2)} | ${cv(5)} |`;
    rows.push(row);
    progress(row);
  }
  return rows.join('\n');
}

if (require.main === module) {
  const args = process.argv.slice(2);
  const debian = args.includes('--debian');
  const pattern = args.find((x) => !x.startsWith('--'));
  const only = pattern ? new RegExp(pattern) : undefined;
  sweep(debian ? loadDebianKnownItem() : loadVaswani(), (line) => process.stderr.write(`${line}\n`), only).then(
    (table) => process.stdout.write(`${table}\n`),
    (e: unknown) => {
      process.stderr.write(`${(e as Error).stack}\n`);
      process.exitCode = 1;
    },
  );
}
