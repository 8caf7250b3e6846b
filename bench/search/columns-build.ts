import { join } from 'node:path';
import { PerformanceObserver } from 'node:perf_hooks';
import type { EmbeddedIndex } from '../../service/search/embedded-index';
import type { ColumnSource, DocColumns } from '../../service/search/doc-columns';
import type { DayOrder } from '../../service/search/browse';
import type { UpdateOrder } from '../../service/search/update-order';
import { atOnce } from '../../service/lib/yield-to-loop';
import { loadVaswani } from '../../tools/corpus/vaswani';
import { collectGarbage } from '../collect-garbage';
import { attributedCorpus } from './filters';

/**
 * The browse structures' builds in isolation (issue 40): one `EmbeddedIndex` of the attributed
 * corpus of filters.ts, then per repetition a fresh `DocColumns` built over the index's documents
 * and built again as renumbered (a merge's rebuild: every document entered again, into the
 * arrays it has), the orders by day and by update time over it, and each order built a second
 * time on the same instance (a rebuild after a write). Each in CPU time of the process, with the
 * young collections (scavenges) and their time during it. With `COLUMNS_BENCH_TREE=<checkout>`
 * that tree's modules are measured instead (an A/B is two processes, alternated: a tree's
 * modules next to another's in one process run at different speeds, filters.ts).
 *
 *   node --expose-gc -r ts-node/register/transpile-only bench/search/columns-build.ts [size] [reps]
 */

const tree = process.env.COLUMNS_BENCH_TREE ?? join(__dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const load = <T>(mod: string): T => require(join(tree, 'service/search', mod)) as T;
const { EmbeddedIndex: Index } = load<{ EmbeddedIndex: typeof EmbeddedIndex }>('embedded-index');
const { DocColumns: Columns } = load<{ DocColumns: typeof DocColumns }>('doc-columns');
const { DayOrder: Days } = load<{ DayOrder: typeof DayOrder }>('browse');
const { UpdateOrder: Updates } = load<{ UpdateOrder: typeof UpdateOrder }>('update-order');

const cpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** CPU ms of `fn`, and the scavenges (count, ms) and mark-compacts during it. */
async function measured(
  fn: () => void,
): Promise<{ cpu: number; scavenges: number; scavengeMs: number; majors: number }> {
  const gcs: Array<{ kind: number; ms: number }> = [];
  const obs = new PerformanceObserver((list) => {
    for (const e of list.getEntries())
      gcs.push({ kind: (e as unknown as { detail: { kind: number } }).detail.kind, ms: e.duration });
  });
  obs.observe({ entryTypes: ['gc'] });
  const c = cpuMs();
  fn();
  const cpu = cpuMs() - c;
  // The entries of collections during `fn` are delivered after it, in later turns.
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
  obs.disconnect();
  // perf_hooks' NODE_PERFORMANCE_GC_MINOR is 1, MAJOR 4.
  const minor = gcs.filter((g) => g.kind === 1);
  return {
    cpu,
    scavenges: minor.length,
    scavengeMs: minor.reduce((s, g) => s + g.ms, 0),
    majors: gcs.filter((g) => g.kind === 4).length,
  };
}

async function main(): Promise<void> {
  const [sizeArg, repsArg] = process.argv.slice(2);
  const size = Number(sizeArg ?? 200_000);
  const reps = Number(repsArg ?? 5);
  const items = attributedCorpus(loadVaswani(), size);
  const index = new Index({ indexSliceMs: 1000 });
  let c = cpuMs();
  const t = performance.now();
  await index.replaceAll(items);
  await index.settled();
  const indexing = { wall: performance.now() - t, cpu: cpuMs() - c };
  collectGarbage();
  const src = (index as unknown as { columnSource(): ColumnSource }).columnSource();
  const rows: Record<string, Array<Awaited<ReturnType<typeof measured>>>> = {
    columns: [],
    dayOrder: [],
    updateOrder: [],
  };
  let again: Array<Awaited<ReturnType<typeof measured>>> = [];
  let daysAgain: Array<Awaited<ReturnType<typeof measured>>> = [];
  let renumbered: Array<Awaited<ReturnType<typeof measured>>> = [];
  for (let r = 0; r <= reps; r++) {
    collectGarbage();
    const cols = new Columns();
    const columns = await measured(() => atOnce(cols.update(src)));
    // The same columns renumbered (a merge's): every document entered again into arrays kept.
    const columnsAgain = await measured(() => atOnce(cols.update({ ...src, numbering: {} })));
    const days = new Days();
    const dayOrder = await measured(() => atOnce(days.ensure(cols)));
    const dayAgain = await measured(() => atOnce(days.build(cols, cols.built)));
    const updates = new Updates();
    const updateOrder = await measured(() => atOnce(updates.ensure(cols)));
    const second = await measured(() => atOnce(updates.build(cols, cols.built)));
    if (r === 0) continue;
    rows.columns.push(columns);
    rows.dayOrder.push(dayOrder);
    rows.updateOrder.push(updateOrder);
    again = [...again, second];
    daysAgain = [...daysAgain, dayAgain];
    renumbered = [...renumbered, columnsAgain];
  }
  rows['columns again'] = renumbered;
  rows['updateOrder again'] = again;
  rows['dayOrder again'] = daysAgain;
  c = cpuMs();
  const out = [`columns-build ${tree} size ${size} reps ${reps}`];
  out.push(
    `indexing (replaceAll + settled): ${(indexing.wall / 1000).toFixed(1)} s wall, ${(indexing.cpu / 1000).toFixed(1)} s CPU`,
  );
  for (const [name, ms] of Object.entries(rows))
    out.push(
      `${name}: CPU p50 ${median(ms.map((m) => m.cpu)).toFixed(1)} ms (min ${Math.min(...ms.map((m) => m.cpu)).toFixed(1)}, all ${ms.map((m) => m.cpu.toFixed(0)).join(' ')}), scavenges p50 ${median(ms.map((m) => m.scavenges))} (${median(ms.map((m) => m.scavengeMs)).toFixed(1)} ms), mark-compacts ${ms.map((m) => m.majors).join(' ')}`,
    );
  process.stdout.write(`${out.join('\n')}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
  process.exit(1);
});
