/**
 * Issue 28's sixth slice: proximity measured through the service's own index (`EmbeddedIndex`
 * in process, depth 100 as the HTTP harness asks), on Vaswani and on the Debian known-item
 * collection, against the same index with proximity off (C2, the default before): nDCG@10 and
 * MAP@100 (MRR@100 on Debian: one relevant document a query), a paired sign-flip test over the
 * queries, and the ranking sweep's `proximity()` on the same configuration as a cross-check
 * (the service's per-query figures must equal the sweep's).
 *
 *   npx ts-node -T bench/search/proximity.ts [--debian] [--grid] [--depths]
 */
import type { Item } from '../../service/content/item';
import type { RankedDoc } from '../../service/eval/relevance-measures';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { DEFAULT_RANKING } from '../../service/search/ranking';
import type { ProximityOptions } from '../../service/search/scoring/proximity';
import { loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { SERVICE, perQuery } from './ranking-sweep';
import { Collection } from './sweep-collection';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f4 = (x: number) => x.toFixed(4);

/** Two-sided p of a paired sign-flip randomisation test of mean(a − b) (`flips` random sign vectors, seeded). */
export function signFlip(a: readonly number[], b: readonly number[], flips = 10_000, seed = 28): number {
  const d = a.map((x, i) => x - b[i]);
  const observed = Math.abs(mean(d));
  let s = seed >>> 0;
  const rnd = () => {
    s = (Math.imul(s, 1664525) + 1013904223) >>> 0;
    return s >>> 31;
  };
  let atLeast = 0;
  for (let f = 0; f < flips; f++) {
    let sum = 0;
    for (const x of d) sum += rnd() ? x : -x;
    if (Math.abs(sum / d.length) >= observed - 1e-15) atLeast++;
  }
  return (atLeast + 1) / (flips + 1);
}

async function serviceRuns(
  v: Vaswani,
  proximity: ProximityOptions,
): Promise<{ runs: Map<string, RankedDoc[]>; buildMs: number; queryMs: number }> {
  const index = new EmbeddedIndex({ proximity });
  const now = new Date(0).toISOString();
  let t = performance.now();
  await index.replaceAll(v.items.map((i): Item => ({ ...i, tags: [], created_at: now, updated_at: now })));
  const buildMs = performance.now() - t;
  t = performance.now();
  const runs = new Map<string, RankedDoc[]>();
  for (const q of v.queries)
    runs.set(q.qid, [...(await index.search({ text: q.text, limit: 100, offset: 0, snippets: false })).hits]);
  return { runs, buildMs, queryMs: performance.now() - t };
}

async function main(): Promise<void> {
  const debian = process.argv.includes('--debian');
  const v = debian ? loadDebianKnownItem() : loadVaswani();
  const off: ProximityOptions = { ...DEFAULT_RANKING.proximity, weight: 0 };
  const on: ProximityOptions =
    DEFAULT_RANKING.proximity.weight > 0
      ? DEFAULT_RANKING.proximity
      : { ...DEFAULT_RANKING.proximity, weight: 4, window: 4 };
  const configs: ProximityOptions[] = [on];
  if (process.argv.includes('--grid'))
    for (const weight of [1, 2, 4, 8])
      for (const window of [2, 4, 8])
        if (weight !== on.weight || window !== on.window) configs.push({ ...on, weight, window });
  if (process.argv.includes('--depths')) for (const depth of [10, 20, 30, 50]) configs.push({ ...on, depth });
  const base = await serviceRuns(v, off);
  const b = perQuery(v, base.runs);
  const name = debian ? 'Debian known-item' : 'Vaswani';
  const second = debian ? 'MRR@100' : 'MAP@100';
  console.log(
    `${name}: ${v.items.length} documents, ${v.queries.length} queries; C2 (proximity off): nDCG@10 ${f4(mean(b.ndcg10))}, ${second} ${f4(mean(b.map100))} (queries ${Math.round(base.queryMs)} ms)`,
  );
  console.log(`| configuration | nDCG@10 | Δ | better/worse | p | ${second} | Δ | p | queries ms |`);
  console.log('|---|---|---|---|---|---|---|---|---|');
  const c = new Collection(v);
  for (const p of configs) {
    const r = await serviceRuns(v, p);
    const m = perQuery(v, r.runs);
    const better = m.ndcg10.filter((x, i) => x > b.ndcg10[i] + 1e-12).length;
    const worse = m.ndcg10.filter((x, i) => x < b.ndcg10[i] - 1e-12).length;
    console.log(
      `| C2 + SDM ×${p.weight} #uw${p.window}${p.depth === 100 ? '' : ` top ${p.depth}`} | ${f4(mean(m.ndcg10))} | ${(mean(m.ndcg10) - mean(b.ndcg10)).toFixed(4)} | ${better}/${worse} | ${signFlip(m.ndcg10, b.ndcg10).toFixed(3)} | ${f4(mean(m.map100))} | ${(mean(m.map100) - mean(b.map100)).toFixed(4)} | ${signFlip(m.map100, b.map100).toFixed(3)} | ${Math.round(r.queryMs)} |`,
    );
    // The sweep's own proximity on the same configuration: the service must give the same per-query figures.
    const sweep = perQuery(v, c.run({ ...SERVICE, proximity: { scale: p.weight, window: p.window, depth: p.depth } }));
    const differ = sweep.ndcg10.filter((x, i) => Math.abs(x - m.ndcg10[i]) > 1e-9).length;
    if (differ)
      console.log(`  (the sweep's proximity() differs on ${differ} queries: sweep nDCG@10 ${f4(mean(sweep.ndcg10))})`);
  }
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
