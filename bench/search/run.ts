/**
 * Search benchmark: quality on the Vaswani NPL collection (through the HTTP API, plus depth 1,000
 * through the index) next to plain BM25 and Terrier's published figure, then speed over HTTP
 * (search p50/p99 and req/s, cached and uncached; ingest items/s) against the real service in a
 * child process. `run()` returns the Markdown report and writes bench/results/search.md;
 * `npx ts-node -T bench/search/run.ts` runs it standalone.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Item } from '../../service/content/item';
import { evaluateQuery, meanMetrics, type MeanMetrics, type RankedDoc } from '../../service/eval/relevance-measures';
import { EmbeddedIndex, type EmbeddedIndexOptions } from '../../service/search/embedded-index';
import { DEFAULT_RANKING } from '../../service/search/ranking';
import { restart } from './restart';
import { restartAfterIngest } from './restart-after-ingest';
import { abAgainst } from './ab';
import { benchSizes, sideBySide, sideBySideTable } from './side-by-side';
import { stall } from './stall';
import { loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';

/** The part of autocannon used here (it ships no types). */
interface AutocannonRequest {
  method?: string;
  path?: string;
  setupRequest?: (req: { path: string }) => { path: string };
}
interface AutocannonResult {
  latency: { p50: number; p99: number };
  requests: { average: number; total: number };
  errors: number;
  non2xx: number;
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const autocannon = require('autocannon') as (opts: {
  url: string;
  connections: number;
  duration: number;
  requests: AutocannonRequest[];
}) => Promise<AutocannonResult>;

const ROOT = join(__dirname, '..', '..');
/** Terrier's BM25 MAP on Vaswani at depth 1,000 (doc/quickstart_experiments.md). */
export const TERRIER_BM25_MAP = 0.2992;
const BATCH = 1000;

/** The service running in a child process. */
export interface Child {
  readonly port: number;
  readonly readyMs: number;
  stop(): Promise<void>;
}

/** Starts the service (`server-main.ts`) in a child process with `env`; resolves once it listens with its content indexed. */
export function startServer(env: Record<string, string>): Promise<Child> {
  const child: ChildProcess = spawn(
    process.execPath,
    ['-r', 'ts-node/register/transpile-only', join(__dirname, 'server-main.ts')],
    {
      cwd: ROOT,
      env: { ...process.env, ...env, TS_NODE_TRANSPILE_ONLY: 'true' },
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  return new Promise((resolve, reject) => {
    let out = '';
    const timer = setTimeout(() => reject(new Error('search bench server did not start in 120 s')), 120_000);
    child.once('exit', (code) => reject(new Error(`search bench server exited with ${code}`)));
    child.stdout!.on('data', (b: Buffer) => {
      out += b.toString();
      const m = /LISTENING (\d+) (\d+)/.exec(out);
      if (!m) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      resolve({
        port: Number(m[1]),
        readyMs: Number(m[2]),
        stop: () =>
          new Promise<void>((r) => {
            child.once('exit', () => r());
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** POSTs `body` as JSON. */
export async function post(url: string, body: unknown): Promise<{ status: number; json: unknown }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: res.status, json: await res.json() };
}

/** Means at cutoff k over every judged query, from rankings per query id. */
function score(v: Vaswani, runs: Map<string, RankedDoc[]>, k: number): MeanMetrics {
  return meanMetrics(v.queries.map((q) => evaluateQuery(runs.get(q.qid) ?? [], v.qrels.get(q.qid) ?? new Map(), k)));
}

/** Quality of one index configuration through the index API at depth 1,000. */
async function indexQuality(
  v: Vaswani,
  opts: EmbeddedIndexOptions,
): Promise<{ ndcg10: number; mrr10: number; map100: number; recall100: number; map1000: number }> {
  const index = new EmbeddedIndex(opts);
  const now = new Date(0).toISOString();
  await index.replaceAll(v.items.map((i): Item => ({ ...i, tags: [], created_at: now, updated_at: now })));
  const runs = new Map<string, RankedDoc[]>();
  for (const q of v.queries)
    runs.set(q.qid, [...(await index.search({ text: q.text, limit: 1000, offset: 0, snippets: false })).hits]);
  return {
    ndcg10: score(v, runs, 10).ndcg,
    mrr10: score(v, runs, 10).mrr,
    map100: score(v, runs, 100).map,
    recall100: score(v, runs, 100).recall,
    map1000: score(v, runs, 1000).map,
  };
}

/** What autocannon reports of one load. */
export interface Speed {
  readonly p50: number;
  readonly p99: number;
  readonly rps: number;
  readonly requests: number;
  readonly errors: number;
}

/** `connections` connections (eight unless said) for `seconds` against `paths` in turn. */
export async function load(port: number, paths: readonly string[], seconds: number, connections = 8): Promise<Speed> {
  let i = 0;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}`,
    connections,
    duration: seconds,
    requests: [{ method: 'GET', setupRequest: (req) => ({ ...req, path: paths[i++ % paths.length] }) }],
  });
  return {
    p50: result.latency.p50,
    p99: result.latency.p99,
    rps: result.requests.average,
    requests: result.requests.total,
    errors: result.errors + result.non2xx,
  };
}

const f4 = (x: number) => x.toFixed(4);

/** Runs the whole benchmark and returns the report. */
export async function run(): Promise<string> {
  const started = Date.now();
  const v = loadVaswani();
  const plain = loadVaswani(undefined, { fullText: true });
  const dataDir = mkdtempSync(join(tmpdir(), 'search-bench-'));
  const env = { DATA_DIR: dataDir, ENVIRONMENT: 'testing', RATELIMIT_ENABLED: 'false', LOG_LEVEL: 'silent' };
  const searchPaths = v.queries.map((q) => `/api/search?q=${encodeURIComponent(q.text)}&limit=10`);
  try {
    // 1. Ingest through /api/ingest-batch, 1,000 items per request, into the durable file store.
    const a = await startServer({ ...env, SEARCH_CACHE_SIZE: '1000' });
    const base = `http://127.0.0.1:${a.port}`;
    const t0 = performance.now();
    for (let i = 0; i < v.items.length; i += BATCH) {
      const r = await post(`${base}/api/ingest-batch`, { items: v.items.slice(i, i + BATCH) });
      if (r.status !== 201)
        throw new Error(`ingest-batch answered ${r.status}: ${JSON.stringify(r.json).slice(0, 300)}`);
    }
    const ingestSeconds = (performance.now() - t0) / 1000;

    // 2. Quality through /api/search (top 100).
    const runs = new Map<string, RankedDoc[]>();
    for (const q of v.queries) {
      const res = await fetch(`${base}/api/search?q=${encodeURIComponent(q.text)}&limit=100`);
      const body = (await res.json()) as { results: RankedDoc[] };
      runs.set(
        q.qid,
        body.results.map((r) => ({ id: r.id, score: r.score })),
      );
    }
    const http10 = score(v, runs, 10);
    const http100 = score(v, runs, 100);

    // 3. Cached speed: every query once to fill the cache, then load.
    for (const p of searchPaths) await fetch(`${base}${p}`);
    const cached = await load(a.port, searchPaths, 8);
    await a.stop();

    // 4. Restart on the same DATA_DIR with a one-entry cache: load time, then uncached speed.
    const b = await startServer({ ...env, SEARCH_CACHE_SIZE: '1' });
    const count = (await (await fetch(`http://127.0.0.1:${b.port}/api/v1/articles?limit=1`)).json()) as {
      total: number;
    };
    const uncached = await load(b.port, searchPaths, 8);
    const shortPaths = ['kube', 'laser', 'circuit', 'plasma waves', 'electron', 'antenna design'].map(
      (q) => `/api/search?q=${encodeURIComponent(q)}`,
    );
    const uncachedShort = await load(b.port, shortPaths, 4);
    await b.stop();

    // 5. Ablation through the index at depth 1,000.
    const noExpansion = { ...DEFAULT_RANKING.expansion, enabled: false };
    // Proximity (issue 28, sixth slice) off: the rows before it in the ablation are without it.
    const noProximity = { ...DEFAULT_RANKING.proximity, weight: 0 };
    // The ranking before issue 28: plain BM25 k1 0.9, b 0.4, RM3 10 documents / 20 terms.
    const plainBm25 = { k1: 0.9, b: 0.4, delta: 0 };
    const rm3Before = { ...DEFAULT_RANKING.expansion, fbDocs: 10, fbTerms: 20 };
    const before: EmbeddedIndexOptions = { bm25: plainBm25, expansion: rm3Before, proximity: noProximity };
    const variants: Array<[string, Vaswani, EmbeddedIndexOptions]> = [
      [
        'Plain BM25 baseline (one field, k1 1.2, b 0.75, no expansion)',
        plain,
        {
          bm25: { k1: 1.2, b: 0.75, delta: 0 },
          boost: { title: 0, tags: 0, text: 1 },
          expansion: noExpansion,
          shortQueryTerms: 0,
          proximity: noProximity,
        },
      ],
      [
        '+ BM25 k1 0.9, b 0.4',
        plain,
        {
          bm25: plainBm25,
          boost: { title: 0, tags: 0, text: 1 },
          expansion: noExpansion,
          shortQueryTerms: 0,
          proximity: noProximity,
        },
      ],
      [
        '+ RM3 expansion (10 docs, 20 terms, λ 0.5)',
        plain,
        { bm25: plainBm25, boost: { title: 0, tags: 0, text: 1 }, expansion: rm3Before, shortQueryTerms: 0 },
      ],
      ['+ title field ×0.2 (titles split off the abstracts): the ranking before issue 28', v, before],
      ['+ BM25+ δ 1 (Lv & Zhai 2011)', v, { ...before, bm25: { ...plainBm25, delta: 1 } }],
      ['+ k1 0.6, b 0.6, RM3 5 documents / 40 terms (tuned on Vaswani, issue 28; C2)', v, { proximity: noProximity }],
      ['Service default: + proximity, SDM ×4 #uw4 on the top 10 (issue 28, sixth slice)', v, {}],
      ['Service default with title ×1', v, { boost: { ...DEFAULT_RANKING.boost, title: 1 } }],
      ['Service default without expansion', v, { expansion: noExpansion }],
    ];
    const ablation: string[] = [];
    let serviceDefault: Awaited<ReturnType<typeof indexQuality>> | undefined;
    let baseline: Awaited<ReturnType<typeof indexQuality>> | undefined;
    for (const [name, data, opts] of variants) {
      const m = await indexQuality(data, opts);
      if (!baseline) baseline = m;
      if (name.startsWith('Service default:')) serviceDefault = m;
      ablation.push(`| ${name} | ${f4(m.ndcg10)} | ${f4(m.map100)} | ${f4(m.recall100)} | ${f4(m.map1000)} |`);
    }
    // 5b. The second collection (issue 28): Debian's package descriptions as a known-item collection.
    const debian = loadDebianKnownItem();
    const second: string[] = [];
    for (const [name, opts] of [
      ['Before issue 28 (BM25 k1 0.9, b 0.4, title ×0.2, RM3 10 / 20)', before],
      ['+ BM25+ δ 1', { ...before, bm25: { ...plainBm25, delta: 1 } }],
      ['+ k1 0.6, b 0.6, RM3 5 / 40 (C2)', { proximity: noProximity }],
      ['Service default: + proximity, SDM ×4 #uw4 on the top 10', {}],
      ['Service default without expansion', { expansion: noExpansion }],
    ] as Array<[string, EmbeddedIndexOptions]>) {
      const m = await indexQuality(debian, opts);
      second.push(`| ${name} | ${f4(m.ndcg10)} | ${f4(m.mrr10)} | ${f4(m.recall100)} |`);
    }
    // 6. In process at growing sizes (one thread, no HTTP, no cache).
    const grown = await sideBySide(v, benchSizes(), 7, (line) => process.stderr.write(`${line}\n`));
    // 6b. With SEARCH_BENCH_BASE (another checkout, e.g. main in a git worktree): its index and
    // this one side by side at the same sizes, interleaved query by query.
    const ab = process.env.SEARCH_BENCH_BASE ? await abAgainst(process.env.SEARCH_BENCH_BASE, v, benchSizes(), 5) : [];
    // 7. The engine in operation: restart with and without the persisted segment, event-loop
    // stalls while ingesting with queries beside it (SEARCH_BENCH_OPS_SIZE, default 50,000).
    const opsSize = Number(process.env.SEARCH_BENCH_OPS_SIZE ?? 50_000);
    const restarts = await restart(opsSize, 2);
    // Restart right after a bulk ingest (SIGTERM at once) beside restart after quiet time (issue
    // 37), at SEARCH_BENCH_RESTART_INGEST_SIZE (default 200,000): one round, fresh DATA_DIR.
    const afterIngestSize = Number(process.env.SEARCH_BENCH_RESTART_INGEST_SIZE ?? 200_000);
    const [afterIngest] = await restartAfterIngest(afterIngestSize, 1);
    const stalls = await stall(opsSize, true);
    const median = (xs: number[]) => [...xs].sort((x, y) => x - y)[Math.floor(xs.length / 2)];
    const ms = (x: number) => `${x.toFixed(1)} ms`;
    const report = [
      '## Search quality (Vaswani NPL)',
      '',
      `${v.items.length.toLocaleString('en')} abstracts ingested through \`POST /api/ingest-batch\`; the ${v.queries.length} queries run through \`GET /api/search?limit=100\`; every judged query counted, trec_eval conventions (\`service/eval/relevance-measures.ts\`).`,
      '',
      '| Through the HTTP API (service defaults) | nDCG@10 | MAP@100 | recall@100 |',
      '|---|---|---|---|',
      `| \`/api/search\` | ${f4(http10.ndcg)} | ${f4(http100.map)} | ${f4(http100.recall)} |`,
      '',
      `Depth 1,000 through the index API, to compare with Terrier's BM25 (MAP ${TERRIER_BM25_MAP} at depth 1,000, Porter stemming, stopwords):`,
      '',
      '| Configuration | nDCG@10 | MAP@100 | recall@100 | MAP@1000 |',
      '|---|---|---|---|---|',
      ...ablation,
      '',
      `Final (service default) MAP@1000 ${f4(serviceDefault!.map1000)} vs plain BM25 ${f4(baseline!.map1000)} (${(((serviceDefault!.map1000 - baseline!.map1000) / baseline!.map1000) * 100).toFixed(1)}%) and Terrier BM25 ${TERRIER_BM25_MAP} (${(((serviceDefault!.map1000 - TERRIER_BM25_MAP) / TERRIER_BM25_MAP) * 100).toFixed(1)}%).`,
      '',
      '## Second collection: Debian package descriptions (known item)',
      '',
      `${debian.items.length.toLocaleString('en')} long descriptions of bookworm main's packages, ${debian.queries.length} synopses as queries, one relevant document each (\`tools/corpus/debian-descriptions.ts\`); through the index API. With one relevant document, nDCG@10 rewards the first rank only and recall@100 is success@100.`,
      '',
      '| Configuration | nDCG@10 | MRR@10 | recall@100 |',
      '|---|---|---|---|',
      ...second,
      '',
      '## Search and ingest speed',
      '',
      `The service in a child process (file store, extractive provider, rate limiting off), autocannon with 8 connections on the same ${cpus().length}-core machine; the ${v.queries.length} Vaswani queries in turn (limit 10), then six short queries (prefix and fuzzy matching, no expansion).`,
      '',
      '| Load | requests | p50 | p99 | req/s | errors |',
      '|---|---|---|---|---|---|',
      `| Search, cached (every query in the LRU cache) | ${cached.requests} | ${ms(cached.p50)} | ${ms(cached.p99)} | ${cached.rps.toFixed(0)} | ${cached.errors} |`,
      `| Search, uncached (Vaswani queries: ~7 terms + RM3) | ${uncached.requests} | ${ms(uncached.p50)} | ${ms(uncached.p99)} | ${uncached.rps.toFixed(0)} | ${uncached.errors} |`,
      `| Search, uncached (1–2 word queries) | ${uncachedShort.requests} | ${ms(uncachedShort.p50)} | ${ms(uncachedShort.p99)} | ${uncachedShort.rps.toFixed(0)} | ${uncachedShort.errors} |`,
      '',
      `- Ingest: ${v.items.length.toLocaleString('en')} items in ${Math.ceil(v.items.length / BATCH)} \`/api/ingest-batch\` requests in ${ingestSeconds.toFixed(1)} s = **${Math.round(v.items.length / ingestSeconds).toLocaleString('en')} items/s** (validated, fsynced to the log, indexed).`,
      `- Restart: ${count.total.toLocaleString('en')} items reloaded from DATA_DIR and indexed; process start to ready in ${(b.readyMs / 1000).toFixed(1)} s (TypeScript transpiling included).`,
      '',
      '## Search in process as the corpus grows, side by side',
      '',
      `Vaswani grown by \`bench/search/grow-corpus.ts\` (copies with perturbed ids and words, seed 16); every engine built over the same corpus, one in memory at a time, in one process on a shared ${cpus().length}-core machine; ${v.queries.length} full queries (the service's RM3 on) and their 2-word forms, limit 10, no cache; per query the median of 7 interleaved repetitions, then p50/p99 over queries. Heap is the growth of \`heapUsed\` from before the build to after the queries${(globalThis as { gc?: unknown }).gc ? ' (forced GC at both ends)' : ' (no --expose-gc: includes garbage)'}, so the service's posting cache counts. nDCG@10 from each engine's own top 10 against the Vaswani judgments (grown copies are unjudged). Ratios: engine / service index with MaxScore, same size (> 1× = slower than ours).`,
      '',
      ...sideBySideTable(grown),
      '',
      ...(ab.length
        ? [
            `A/B of the service's index against the checkout at \`SEARCH_BENCH_BASE\` (\`bench/search/ab.ts\`): both built over the same grown corpus in one process, queries interleaved (which goes first alternates), limit 10, per query the median of 5 repetitions in CPU time of the process; ratio = this / base.`,
            '',
            ...ab,
            '',
          ]
        : []),
      '## The engine in operation',
      '',
      `Vaswani grown to ${opsSize.toLocaleString('en')} (\`SEARCH_BENCH_OPS_SIZE\`), the restart after an ingest to ${afterIngestSize.toLocaleString('en')}; BENCHMARKS.md has the 200,000 figures and the A/B against the code before issue 28 (\`bench/search/restart.ts\`, \`bench/search/stall.ts\`) and issue 37 (\`bench/search/restart-after-ingest.ts\`).`,
      '',
      '| | figure |',
      '|---|---|',
      `| restart to ready, persisted segment (median of ${restarts.readyMs.segment.length}) | ${(median(restarts.readyMs.segment) / 1000).toFixed(2)} s |`,
      `| restart to ready, \`INDEX_DIR=off\` (rebuild, as every start did before) | ${(median(restarts.readyMs.rebuild) / 1000).toFixed(2)} s |`,
      `| segment file | ${(restarts.segmentBytes / 1e6).toFixed(1)} MB |`,
      `| restart to ready right after a bulk ingest of ${afterIngestSize.toLocaleString('en')} (SIGTERM at once) / after quiet time (idle checkpoint done), \`SEARCH_BENCH_RESTART_INGEST_SIZE\` | ${(afterIngest.afterIngestMs / 1000).toFixed(2)} s / ${(afterIngest.afterQuietMs / 1000).toFixed(2)} s (${(afterIngest.afterIngestMs / afterIngest.afterQuietMs).toFixed(2)}×) |`,
      `| SIGTERM to exit right after that ingest (the stop persists the appended part of the index) | ${(afterIngest.stopMs / 1000).toFixed(2)} s |`,
      `| longest event-loop stall while ingesting with queries beside it (wall / CPU) | ${ms(stalls.maxStall)} / ${ms(stalls.cpuStall)} |`,
      `| longest GC pause meanwhile; longest query | ${ms(stalls.maxGc)}; ${ms(stalls.maxQuery)} |`,
      `| one 1 MB item upserted beside queries: longest stall (wall / CPU), time | ${ms(stalls.bigItemMaxStall)} / ${ms(stalls.bigItemCpuStall)}, ${stalls.bigItemMs} ms |`,
      '',
      `_Run took ${Math.round((Date.now() - started) / 1000)} s._`,
      '',
    ].join('\n');
    mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
    writeFileSync(join(ROOT, 'bench', 'results', 'search.md'), report);
    return report;
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

if (require.main === module) {
  run().then(
    (report) => process.stdout.write(report),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
