/**
 * Query latency A/B in one process: the service's index of this checkout against the same index
 * of another checkout (say main, in a `git worktree`), built over the same grown Vaswani corpus
 * and asked the same queries, interleaved query by query so a noisy moment hits both alike. Per
 * size: full (RM3) and 2-word p50/p99 (limit 10; per query the median of `reps` repetitions), the
 * ratios this/base, nDCG@10 of each, and the number of queries whose page differs.
 *
 *   npx ts-node -T bench/search/ab.ts /path/to/base-checkout [sizes, e.g. 11429,200000] [reps]
 *
 * Each query is timed in CPU time of the process (`process.cpuUsage`: what the query cost, the
 * GC's helper threads included, not the time the machine's other work kept it from a core; the
 * loop thread's schedstat, which the stall benches read, is updated only at the scheduler's
 * ticks and switches, too coarse for a query of a millisecond), and which of the two is asked first
 * alternates by query and repetition (`(r + i) mod 2`): the index asked first in a pair ran ~20 %
 * faster at 200k in filters.ts's A/B, so a fixed order biases the ratio.
 *
 * With `AB_COLD=1` every query is timed cold: both indexes' caches of query-term expansions
 * (`CompactIndex.expansions`, kept until the next write) are emptied before it, so each query
 * pays its prefix and fuzzy look-ups, as a query with new words does. Either way both indexes'
 * vocabulary structures are built (`fillVocabulary`) before the first query.
 */
import { join, resolve } from 'node:path';
import type { Item } from '../../service/content/item';
import { evaluateQuery, meanMetrics } from '../../service/eval/relevance-measures';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import type { IndexPage, IndexQuery } from '../../service/search/search-index';
import { growCorpus, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { heldItem } from './held-items';

/** What is timed of an index (both checkouts' `EmbeddedIndex` have it). */
interface Searchable {
  replaceAll(items: readonly Item[]): Promise<void>;
  search(query: IndexQuery): Promise<IndexPage>;
}

/** One size's figures. */
export interface AbRun {
  readonly docs: number;
  readonly kind: 'full' | '2-word';
  readonly base: { p50: number; p99: number; ndcg10: number };
  readonly ours: { p50: number; p99: number; ndcg10: number };
  readonly differing: number;
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const p99 = (xs: readonly number[]): number =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.ceil(xs.length * 0.99) - 1)];

/** The parts of an index's `CompactIndex` the runner reaches (private to the service; either checkout). */
interface Inside {
  readonly compact?: { expansionCache?: Map<string, unknown>; fillVocabulary?: (sliceMs: number) => Promise<void> };
}

/** Empties the index's cache of query-term expansions (for `AB_COLD`). */
function forgetExpansions(index: Searchable): void {
  (index as unknown as Inside).compact?.expansionCache?.clear();
}

/** Times `base` and `ours` over one corpus size; `cold`: expansions looked up afresh for every query. */
export async function abSize(
  v: Vaswani,
  size: number,
  reps: number,
  makeBase: () => Searchable,
  cold = false,
): Promise<AbRun[]> {
  const now = new Date(0).toISOString();
  // Held as the service holds items (`heldItem`: packed); the base's index reads them as plain ones.
  const items = growCorpus(v.items, size).map((i): Item =>
    heldItem({ ...i, type: 'article', tags: [], created_at: now, updated_at: now }),
  );
  const base = makeBase();
  await base.replaceAll(items);
  const ours = new EmbeddedIndex({ indexSliceMs: 1000 });
  await ours.replaceAll(items);
  for (const index of [base, ours]) await (index as unknown as Inside).compact?.fillVocabulary?.(1000);
  const texts = v.queries.map((q) => q.text);
  const cpu = (): number => {
    const u = process.cpuUsage();
    return (u.user + u.system) / 1e6;
  };
  const out: AbRun[] = [];
  for (const [kind, qs] of [
    ['full', texts],
    ['2-word', twoWordQueries(texts)],
  ] as const) {
    const tb: number[][] = qs.map(() => []);
    const to: number[][] = qs.map(() => []);
    const pages: Array<[string[], string[]]> = [];
    let differing = 0;
    const timed = async (index: Searchable, q: IndexQuery, times: number[] | null): Promise<IndexPage> => {
      if (cold) forgetExpansions(index);
      const t = cpu();
      const page = await index.search(q);
      times?.push((cpu() - t) * 1000);
      return page;
    };
    for (let r = 0; r <= reps; r++) {
      for (const [i, text] of qs.entries()) {
        const q: IndexQuery = { text, limit: 10, offset: 0, snippets: false };
        const [bt, ot] = r > 0 ? [tb[i], to[i]] : [null, null];
        let a: IndexPage;
        let b: IndexPage;
        if ((r + i) % 2 === 1) {
          b = await timed(ours, q, ot);
          a = await timed(base, q, bt);
        } else {
          a = await timed(base, q, bt);
          b = await timed(ours, q, ot);
        }
        if (r > 0) continue;
        pages.push([a.hits.map((h) => h.id), b.hits.map((h) => h.id)]);
        if (a.total !== b.total || pages[i][0].join() !== pages[i][1].join()) differing += 1;
      }
    }
    const ndcg = (side: 0 | 1) =>
      kind === 'full'
        ? meanMetrics(
            v.queries.map((q, i) =>
              evaluateQuery(
                pages[i][side].map((id, rank) => ({ id, score: -rank })),
                v.qrels.get(q.qid) ?? new Map(),
                10,
              ),
            ),
          ).ndcg
        : NaN;
    const mb = tb.map(median);
    const mo = to.map(median);
    out.push({
      docs: size,
      kind,
      base: { p50: median(mb), p99: p99(mb), ndcg10: ndcg(0) },
      ours: { p50: median(mo), p99: p99(mo), ndcg10: ndcg(1) },
      differing,
    });
  }
  return out;
}

/** The Markdown table of `runs`. */
export function abTable(runs: readonly AbRun[]): string[] {
  const f = (x: number) => x.toFixed(2);
  const lines = [
    '| docs | queries | base CPU p50 / p99 | this CPU p50 / p99 | p50 ratio | p99 ratio | nDCG@10 base / this | pages differing |',
    '|---|---|---|---|---|---|---|---|',
  ];
  for (const r of runs) {
    const nd = Number.isNaN(r.base.ndcg10) ? '–' : `${r.base.ndcg10.toFixed(4)} / ${r.ours.ndcg10.toFixed(4)}`;
    lines.push(
      `| ${r.docs.toLocaleString('en')} | ${r.kind} | ${f(r.base.p50)} / ${f(r.base.p99)} ms | ${f(r.ours.p50)} / ${f(r.ours.p99)} ms | ${f(r.ours.p50 / r.base.p50)}× | ${f(r.ours.p99 / r.base.p99)}× | ${nd} | ${r.differing} |`,
    );
  }
  return lines;
}

/** The base checkout's index class: `EmbeddedIndex`, or `MiniSearchIndex` before issue 27 renamed it. */
function baseIndexClass(dir: string): new (o: object) => Searchable {
  /* eslint-disable @typescript-eslint/no-require-imports */
  try {
    return (require(join(dir, 'service/search/embedded-index')) as { EmbeddedIndex: new (o: object) => Searchable })
      .EmbeddedIndex;
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw e;
    return (require(join(dir, 'service/search/minisearch-index')) as { MiniSearchIndex: new (o: object) => Searchable })
      .MiniSearchIndex;
  }
  /* eslint-enable @typescript-eslint/no-require-imports */
}

/** `abSize` at every size against the index of the checkout at `baseDir`; the Markdown table. */
export async function abAgainst(
  baseDir: string,
  v: Vaswani,
  sizes: readonly number[],
  reps: number,
  log: (line: string) => void = () => undefined,
  cold = false,
): Promise<string[]> {
  const Base = baseIndexClass(resolve(baseDir));
  const runs: AbRun[] = [];
  for (const size of sizes) {
    runs.push(...(await abSize(v, size, reps, () => new Base({ indexSliceMs: 1000 }), cold)));
    log(abTable(runs).slice(-2).join('\n'));
  }
  return abTable(runs);
}

if (require.main === module) {
  const [baseDir, sizesArg, repsArg] = process.argv.slice(2);
  if (!baseDir) {
    process.stderr.write('usage: ab.ts <base checkout> [sizes] [reps]\n');
    process.exit(2);
  }
  abAgainst(
    baseDir,
    loadVaswani(),
    (sizesArg ?? '11429,200000').split(',').map(Number),
    Number(repsArg ?? 5),
    (l) => process.stderr.write(`${l}\n`),
    process.env.AB_COLD === '1',
  ).then(
    (table) => process.stdout.write(`${table.join('\n')}\n`),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
