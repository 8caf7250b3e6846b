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
import { evaluateQuery, type RankedDoc } from '../../service/eval/relevance-measures';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { DEFAULT_RANKING } from '../../service/search/ranking';
import { repeatedCrossValidation, type ConfigScores } from './cross-validate';
import { loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { Collection, type Config, type Expansion, type Model, type Proximity } from './sweep-collection';

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
