/**
 * Issue 40: what a small synonyms file (bench/search/fixtures/synonyms.txt, written before any
 * measurement, tuned on nothing) does to ranking, through the service's own index (`EmbeddedIndex`
 * in process, default ranking, depth 100) on Vaswani and on the Debian known-item collection:
 * nDCG@10 and MAP@100 (MRR@100 on Debian: one relevant document a query) with and without it,
 * a paired sign-flip test over the queries, and how many queries the file touched at all.
 *
 *   npx ts-node -T bench/search/synonyms.ts [--debian] [--file path]
 */
import { join } from 'node:path';
import { readSynonymsFile, type SynonymsFile } from '../../configs';
import type { Item } from '../../service/content/item';
import type { RankedDoc } from '../../service/eval/relevance-measures';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { loadDebianKnownItem } from '../../tools/corpus/debian-lists';
import { loadVaswani, type Vaswani } from '../../tools/corpus/vaswani';
import { signFlip } from './proximity';
import { perQuery } from './ranking-sweep';

const mean = (xs: readonly number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
const f4 = (x: number) => x.toFixed(4);

/** The file measured unless `--file` names another. */
export const BENCH_SYNONYMS = join(__dirname, 'fixtures', 'synonyms.txt');

async function runs(
  v: Vaswani,
  synonyms: SynonymsFile | undefined,
): Promise<{ runs: Map<string, RankedDoc[]>; touched: number }> {
  const index = new EmbeddedIndex({ synonyms });
  const now = new Date(0).toISOString();
  await index.replaceAll(v.items.map((i): Item => ({ ...i, tags: [], created_at: now, updated_at: now })));
  const out = new Map<string, RankedDoc[]>();
  let touched = 0;
  for (const q of v.queries) {
    if (index.plan(q.text).synonyms.length) touched++;
    out.set(q.qid, [...(await index.search({ text: q.text, limit: 100, offset: 0, snippets: false })).hits]);
  }
  return { runs: out, touched };
}

async function main(): Promise<void> {
  const debian = process.argv.includes('--debian');
  const at = process.argv.indexOf('--file');
  const file = readSynonymsFile(at > 0 ? process.argv[at + 1] : BENCH_SYNONYMS)!;
  const v = debian ? loadDebianKnownItem() : loadVaswani();
  const name = debian ? 'Debian known-item' : 'Vaswani';
  const second = debian ? 'MRR@100' : 'MAP@100';
  const base = await runs(v, undefined);
  const syn = await runs(v, file);
  const b = perQuery(v, base.runs);
  const s = perQuery(v, syn.runs);
  const better = s.ndcg10.filter((x, i) => x > b.ndcg10[i] + 1e-12).length;
  const worse = s.ndcg10.filter((x, i) => x < b.ndcg10[i] - 1e-12).length;
  console.log(
    `${name}: ${v.items.length} documents, ${v.queries.length} queries; ${file.rules.length} rules, ${syn.touched} queries hold a synonym`,
  );
  console.log(`| | nDCG@10 | ${second} | better / worse (nDCG@10) | p nDCG@10 | p ${second} |`);
  console.log('|---|---|---|---|---|---|');
  console.log(`| without synonyms | ${f4(mean(b.ndcg10))} | ${f4(mean(b.map100))} | | | |`);
  console.log(
    `| with ${file.path.split('/').pop()} | ${f4(mean(s.ndcg10))} | ${f4(mean(s.map100))} | ${better} / ${worse} | ${signFlip(s.ndcg10, b.ndcg10).toFixed(3)} | ${signFlip(s.map100, b.map100).toFixed(3)} |`,
  );
}

if (require.main === module) {
  main().catch((e: unknown) => {
    console.error(e);
    process.exitCode = 1;
  });
}
