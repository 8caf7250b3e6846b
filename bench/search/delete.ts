/**
 * Deletes at scale (issue 39), in process, beside the 1M search figures: Vaswani grown to `size`
 * (default 1,000,000, `SEARCH_BENCH_DELETE_SIZE`) and indexed, settled (its vocabulary built, the
 * build's garbage collected by a forced GC before the watched phases), then
 *
 * 1. `remove` of a tenth of it (100,000 at 1M: what a `delete_where` hands the index), with one
 *    query at a time beside it (the 93 Vaswani queries and their 2-word forms in turn, uncached):
 *    its time, the longest event-loop stall (`monitorEventLoopDelay`, in process) and the longest
 *    step in CPU time (the process's, and the event loop's thread's alone), the queries answered meanwhile and their p50 / p99;
 * 2. the merge that drops those tombstones (`EmbeddedIndex.checkpoint`: the idle checkpoint's
 *    merge, in its background slices), with queries beside it, measured the same way;
 * 3. memory: a fresh index of `size` that loses a random half (no queries: no caches), merged,
 *    against an index built from the survivors alone: heap per live document after a forced GC
 *    (`node --expose-gc`), and their ratio.
 *
 * `node --expose-gc -r ts-node/register/transpile-only bench/search/delete.ts [size] [--no-memory] [--attribute[=ms] [--units]] [--steps[=ms]]`
 * (`--attribute`: each phase's stalls over that many ms with what filled them, as in stall.ts;
 * `--steps`: each step of a query's first pass, `cursorJob`, over that many ms (10) of the loop
 * thread's CPU, on stdout beside `--trace-gc`'s lines, step-trace.ts)
 */
import { mkdirSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import type { Item } from '../../service/content/item';
import { EmbeddedIndex } from '../../service/search/embedded-index';
import { traceSteps } from '../../service/search/index/step-trace';
import { collectGarbage, requireExposedGc } from '../collect-garbage';
import { mulberry32, twoWordQueries } from '../../tools/corpus/grow-corpus';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { watch } from './stall';
import { heldCorpus } from './held-items';

/** What one phase with queries beside it measured (milliseconds unless named otherwise). */
export interface WatchedPhase {
  readonly ms: number;
  readonly maxStall: number;
  readonly cpuStall: number;
  /** The longest turn in CPU time of the event loop's thread alone (schedstat; GC helper threads not counted). */
  readonly loopStall: number;
  readonly maxGc: number;
  /** Full collections (mark-compacts) and scavenges that ended in the phase (`PerformanceObserver` 'gc' entries by kind). */
  readonly majorGcs: number;
  readonly minorGcs: number;
  readonly queries: number;
  readonly p50Query: number;
  readonly p99Query: number;
}

/** What the delete bench measured. */
export interface DeleteRun {
  readonly docs: number;
  readonly removed: number;
  readonly buildSeconds: number;
  readonly remove: WatchedPhase;
  readonly merge: WatchedPhase;
  /** Heap bytes per live document: after deleting half and merging, and built from the survivors (unless `--no-memory`). */
  readonly heapAfterDelete?: number;
  readonly heapSurvivors?: number;
}

const round = (x: number) => Math.round(x * 10) / 10;

/** `--attribute[=ms]` (as stall.ts): of the stalls over that many ms (30), the 20 with the most loop-thread CPU and what filled them, on stderr. */
function attributing(): number | undefined {
  const a = process.argv.find((x) => x.startsWith('--attribute'));
  if (!a) return undefined;
  return Number(a.split('=')[1] ?? 30);
}

const heapUsed = (): number => {
  collectGarbage(2);
  return process.memoryUsage().heapUsed;
};

/** Runs `work` with queries beside it (`watch` of stall.ts). */
async function watched(index: EmbeddedIndex, texts: readonly string[], work: () => Promise<void>) {
  const w = await watch(index, texts, true, work, attributing());
  // The stalls the loop's own thread made longest (on a busy machine wall time is mostly waiting for a core).
  const byCpu = [...(w.stalls ?? [])].sort((a, b) => b.loopCpu - a.loopCpu).slice(0, 20);
  for (const s of byCpu) process.stderr.write(`${JSON.stringify(s)}\n`);
  for (const u of w.longUnits ?? [])
    process.stderr.write(`unit ${u.n}× max ${u.max} ms (${u.maxNoGc} without GC): ${u.where}\n`);
  return {
    ms: Math.round(w.took),
    maxStall: w.maxStall,
    cpuStall: w.cpuStall,
    loopStall: w.loopStall,
    maxGc: w.maxGc,
    majorGcs: w.majorGcs,
    minorGcs: w.minorGcs,
    queries: w.queries,
    p50Query: round(w.p50Query),
    p99Query: round(w.p99Query),
  };
}

/** Settles once the vocabulary's look-up structures cover every term (built in the background after a build). */
async function vocabularyBuilt(index: EmbeddedIndex): Promise<void> {
  while (index.vocabularyUncovered > 0) await new Promise((r) => setTimeout(r, 20));
}

/**
 * Heap per live document of an index of `items` that lost `gone` and merged, and of an index built
 * from the survivors alone: each the growth of `heapUsed` from before its build (forced GC at both
 * ends; the vocabulary's structures built). A small build first warms up what the first build
 * would otherwise count (compiled code, module scratch); the inputs stay referenced to the end.
 */
async function heapPerLiveDocument(
  items: readonly Item[],
  gone: ReadonlySet<string>,
  log: (line: string) => void,
): Promise<{ heapAfterDelete: number; heapSurvivors: number }> {
  const ids = [...gone];
  const survivors = items.filter((i) => !gone.has(i.id));
  let index: EmbeddedIndex | undefined = new EmbeddedIndex();
  await index.replaceAll(items.slice(0, 20_000));
  await index.remove(ids.slice(0, 10_000));
  await index.checkpoint();
  index = undefined;
  const base = heapUsed();
  index = new EmbeddedIndex();
  await index.replaceAll(items);
  await index.remove(ids);
  await index.checkpoint();
  await vocabularyBuilt(index);
  const heapAfterDelete = (heapUsed() - base) / index.size();
  log(`half removed (${ids.length}), merged: ${Math.round(heapAfterDelete)} B per live document`);
  index = undefined;
  const base2 = heapUsed();
  index = new EmbeddedIndex();
  await index.replaceAll(survivors);
  await index.settled();
  await vocabularyBuilt(index);
  const heapSurvivors = (heapUsed() - base2) / index.size();
  log(`survivors built: ${Math.round(heapSurvivors)} B per document`);
  // Kept alive to here, so that none of them is collected between a baseline and its measure.
  if (items.length + ids.length + survivors.length < 0) throw new Error('unreachable');
  return { heapAfterDelete, heapSurvivors };
}

/** Runs the delete bench at `size` documents. */
export async function deletes(
  size: number,
  log: (line: string) => void = () => undefined,
  memory = true,
): Promise<DeleteRun> {
  const v = loadVaswani();
  // Items as the service holds them (held-items.ts).
  const items = heldCorpus(v.items, size);
  const texts = v.queries.map((q) => q.text);
  const all = [...texts, ...twoWordQueries(texts)];
  const random = mulberry32(39);

  // 1–2. A tenth removed with queries beside it, then the merge.
  let index: EmbeddedIndex = new EmbeddedIndex();
  const t0 = performance.now();
  await index.replaceAll(items);
  const buildSeconds = (performance.now() - t0) / 1000;
  log(`built ${index.size()} in ${buildSeconds.toFixed(1)} s`);
  // Settled as a running replica's index is before a delete comes: its vocabulary's structures
  // built in the background, and the build's garbage collected (a forced GC before the watched
  // phases, none inside them). Without it the build's tail (the vocabulary's slices, a full
  // collection of the build's ~50 MB of garbage) fell into the first seconds of the remove.
  await vocabularyBuilt(index);
  collectGarbage(2);
  const tenth = items.filter((_, i) => i % 10 === 3).map((i) => i.id);
  const remove = await watched(index, all, () => index.remove(tenth));
  log(`removed ${tenth.length}: ${JSON.stringify(remove)}`);
  const merge = await watched(index, all, () => index.checkpoint());
  log(`merged: ${JSON.stringify(merge)}`);
  const docs = index.size() + tenth.length;

  index = new EmbeddedIndex();
  if (!memory) return { docs, removed: tenth.length, buildSeconds, remove, merge };
  // 3. Memory: a random half removed from a fresh index (never queried), merged; then the survivors built alone.
  const gone = new Set<string>();
  for (const i of items) if (random() < 0.5) gone.add(i.id);
  const { heapAfterDelete, heapSurvivors } = await heapPerLiveDocument(items, gone, log);
  return { docs, removed: tenth.length, buildSeconds, remove, merge, heapAfterDelete, heapSurvivors };
}

/** The report's Markdown. */
export function deleteReport(r: DeleteRun, load: string): string {
  const row = (name: string, p: WatchedPhase) =>
    `| ${name} | ${(p.ms / 1000).toFixed(2)} s | ${p.maxStall} ms / ${p.cpuStall} ms / ${p.loopStall} ms | ${p.maxGc} ms | ${p.majorGcs} / ${p.minorGcs} | ${p.queries} | ${p.p50Query} / ${p.p99Query} ms |`;
  return [
    '## Deletes at scale (issue 39)',
    '',
    `Vaswani grown to ${r.docs.toLocaleString('en')} and indexed in process (${r.buildSeconds.toFixed(1)} s), then every tenth item removed (${r.removed.toLocaleString('en')}, as a \`delete_where\` hands them to the index) with one query at a time beside it, then the merge that drops them; \`monitorEventLoopDelay\` in process; load average before the run: ${load}.`,
    '',
    '| phase | time | longest stall (wall / process CPU / loop-thread CPU) | longest GC | mark-compacts / scavenges | queries answered | query p50 / p99 |',
    '|---|---|---|---|---|---|---|',
    row(`\`remove\` of ${r.removed.toLocaleString('en')}`, r.remove),
    row('the merge that follows (`checkpoint`)', r.merge),
    '',
    r.heapAfterDelete === undefined || r.heapSurvivors === undefined
      ? 'Memory not measured (`--no-memory`).'
      : `Heap per live document after removing a random half and merging, against an index built from the survivors alone (forced GC, never queried): ${Math.round(r.heapAfterDelete)} B / ${Math.round(r.heapSurvivors)} B = **${(r.heapAfterDelete / r.heapSurvivors).toFixed(3)}×**.`,
    '',
  ].join('\n');
}

/** `make bench`'s entry: `SEARCH_BENCH_DELETE_SIZE` documents (default 1,000,000); writes bench/results/delete.md. */
export async function run(): Promise<string> {
  requireExposedGc();
  const { loadavg } = await import('node:os');
  const load = loadavg()
    .map((x) => x.toFixed(2))
    .join(', ');
  const size = Number(process.env.SEARCH_BENCH_DELETE_SIZE ?? 1_000_000);
  const memory = !process.argv.includes('--no-memory');
  const steps = process.argv.find((x) => x.startsWith('--steps'));
  if (steps) traceSteps({ ms: Number(steps.split('=')[1] ?? 10), log: (line) => writeSync(1, `${line}\n`) });
  const report = deleteReport(await deletes(size, (line) => process.stderr.write(`${line}\n`), memory), load);
  const dir = join(__dirname, '..', 'results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'delete.md'), report);
  return report;
}

if (require.main === module) {
  const arg = process.argv.find((a) => /^\d+$/.test(a));
  if (arg) process.env.SEARCH_BENCH_DELETE_SIZE = arg;
  run().then(
    (report) => process.stdout.write(report),
    (err: unknown) => {
      process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
      process.exit(1);
    },
  );
}
